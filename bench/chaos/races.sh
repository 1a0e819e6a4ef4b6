#!/usr/bin/env bash
# The race tests with their loops running SECONDS each (default 60): two tasks loading and unloading,
# deleting/re-downloading in a second instance while loading, refresh during a download.
#   bench/chaos/races.sh [SECONDS=60]
set -euo pipefail
export RUNANYWHERE_CHAOS_SECONDS="${1:-60}"
exec "$(dirname "$0")/run-tests.sh" RaceTests
