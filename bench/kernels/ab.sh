#!/bin/sh
# Kernel before/after: bench/kernels/bench.c of this tree built (gcc -O3) against the CKernels sources of commit
# BEFORE and of the working tree, run one after the other ROUNDS times (default 3) so that bursts of load from other
# jobs hit both; prints each run's lines (GB/s and Gmac/s per type, shape and batch; thread CPU time).
#
#   bench/kernels/ab.sh BEFORE [ROUNDS]      e.g.
#   KBENCH_ONLY=Q5_K KBENCH_PATHS=avx2 KBENCH_NB=1,4,128 KBENCH_CHUNK=32 KBENCH_SHAPES=3072x1024 bench/kernels/ab.sh HEAD 3
#
# KBENCH_* as in bench.c (KBENCH_CHUNK=32: the engine's row chunks at a prompt of 128 tokens on 2 threads).
set -e
[ $# -ge 1 ] || { echo "usage: $0 BEFORE_COMMIT [ROUNDS]" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${2:-3}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/before"
(cd "$ROOT" && git archive "$1" Sources/CKernels) | tar -x -C "$OUT/before"
build() {   # build NAME KERNEL_DIR
    K="$2"
    gcc -O3 -fno-math-errno -Wall -Wextra -I "$K/include" -I "$ROOT/Sources/CKernels/include" -o "$OUT/$1" \
        "$K"/*.c \
        "$ROOT/bench/kernels/bench.c" -lm -lpthread
}
build kb-before "$OUT/before/Sources/CKernels"
build kb-after "$ROOT/Sources/CKernels"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for e in before after; do
        "$OUT/kb-$e" | grep -v '^CPU' | sed "s/^/$e /"
    done
    r=$((r + 1))
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
