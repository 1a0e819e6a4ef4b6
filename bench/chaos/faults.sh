#!/usr/bin/env bash
# Long fault campaign: 5,000 seeded downloads (single-file, multi-file, archive) against the loopback
# server's fault schedule, through the public API. Prints the counts line; exits non-zero on any failure.
#   bench/chaos/faults.sh [DOWNLOADS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
export RUNANYWHERE_CHAOS_DOWNLOADS="${1:-5000}"
export RUNANYWHERE_CHAOS_SEED="${2:-20261130}"
swift build --build-tests >/dev/null
swift test --skip-build --disable-xctest --filter FaultCampaignTests 2>&1 | grep -E "fault campaign:|✔|✘|Issue|error" 
