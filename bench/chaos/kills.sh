#!/usr/bin/env bash
# kill -9 of `runanywhere models pull` at N random points (spread over the whole 20 MB pull), checking the
# registry after each kill, then a new process resumes and must finish a verified file. Then 2/4/8
# processes pull one model at once.
#   bench/chaos/kills.sh [KILLS=50]
set -euo pipefail
export RUNANYWHERE_CHAOS_KILLS="${1:-50}"
exec "$(dirname "$0")/run-tests.sh" ProcessChaosTests
