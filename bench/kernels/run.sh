#!/bin/sh
# Builds the kernel benchmark with gcc -O3 from the CKernels sources and writes bench/results/kernels.md.
# Usage: bench/kernels/run.sh [--quick]   (run from anywhere; single thread)
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
OUT=$(mktemp -d)
gcc -O3 -fno-math-errno -Wall -Wextra -I "$K/include" -o "$OUT/kbench" \
    "$K"/*.c \
    "$ROOT/bench/kernels/bench.c" -lm -lpthread
mkdir -p "$ROOT/bench/results"
"$OUT/kbench" "$ROOT/bench/results/kernels.md"
rm -rf "$OUT"
