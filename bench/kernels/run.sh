#!/bin/sh
# Builds the kernel benchmark with gcc -O3 from the CKernels sources and writes bench/results/kernels.md.
# Usage: bench/kernels/run.sh [--quick]   (run from anywhere; single thread)
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
OUT=$(mktemp -d)
gcc -O3 -fno-math-errno -Wall -Wextra -I "$K/include" -o "$OUT/kbench" \
    "$K/quants.c" "$K/dispatch.c" "$K/dot_scalar.c" "$K/dot_avx2.c" "$K/dot_avx512.c" "$K/dot_avx512vnni.c" "$K/dot_neon.c" \
    "$ROOT/bench/kernels/bench.c" -lm
mkdir -p "$ROOT/bench/results"
"$OUT/kbench" "$ROOT/bench/results/kernels.md"
rm -rf "$OUT"
