#!/usr/bin/env bash
# Long fault campaign: seeded downloads (single-file, multi-file, archive models) through the public API
# against the loopback server's random fault schedule. Prints the counts line; non-zero exit on any failure.
#   bench/chaos/faults.sh [DOWNLOADS=5000] [SEED=20261130]
set -euo pipefail
export RUNANYWHERE_CHAOS_DOWNLOADS="${1:-5000}"
export RUNANYWHERE_CHAOS_SEED="${2:-20261130}"
exec "$(dirname "$0")/run-tests.sh" FaultCampaignTests
