#!/usr/bin/env bash
# Samples, a few seconds apart, the one-way hand-off latency between CPUs 0 and 1 (bench/engine/placement.c) next to
# the 2-thread read bandwidth (bench/engine/bandwidth.c): on a VM whose vCPUs the host moves between dies, the two go
# together (Zen 4 EPYC, stop 46: 26-56 ns with the probe at 26-40 GB/s, 160-292 ns with it at 42-46), which says
# which kind of spell a benchmark round ran in.
#
#   bench/engine/placement.sh [SAMPLES] [SECONDS_BETWEEN]      (default 20 samples, 3 s apart)
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-20}" GAP="${2:-3}"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
gcc -O2 -Wall -Wextra -pthread -o "$OUT/placement" bench/engine/placement.c
gcc -O3 -march=native -Wall -Wextra -o "$OUT/bandwidth" bench/engine/bandwidth.c -lpthread
echo "| time (UTC) | one-way hand-off ns (CPUs 0, 1) | read GB/s, 2 threads (best of 5) |"
echo "|---|---:|---:|"
for i in $(seq "$N"); do
    ns=$("$OUT/placement" | sed 's/.*oneway_ns=//')
    gbs=$("$OUT/bandwidth" 2 256 5 | sed 's/.*best_gbs=\([0-9.]*\) .*/\1/')
    echo "| $(date -u +%H:%M:%S) | $ns | $gbs |"
    [ "$i" -lt "$N" ] && sleep "$GAP"
done
