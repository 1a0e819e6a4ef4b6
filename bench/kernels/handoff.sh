#!/bin/sh
# Thread-pool hand-off latency (bench/kernels/handoff.c) after the caller worked alone for each of the given gaps.
# Usage: bench/kernels/handoff.sh [GAP_US ...]   (default 0 10 40 100 1000; CC=clang: build with the engine's compiler)
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
${CC:-gcc} -O2 -Wall -Wextra -I "$K/include" -o "$OUT/handoff" "$K"/*.c "$ROOT/bench/kernels/handoff.c" -lm -lpthread
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ $# -gt 0 ] || set -- 0 10 40 100 1000
for gap in "$@"; do "$OUT/handoff" "$gap"; done
