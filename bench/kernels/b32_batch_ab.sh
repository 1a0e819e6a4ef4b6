#!/bin/sh
# In-process before/after of the AVX2 batch kernels of the 32-element block types (bench/kernels/b32_batch_ab.c):
# matmul_avx2_b32.c of commit BEFORE (with its avx2_panel8.h and headers; symbols renamed) and of the working tree
# linked into one program, called in alternation on one model's layer shapes in the engine's row chunks. clang -O2 when
# the Swift toolchain's clang is on PATH (as SwiftPM builds the engine for an app), else gcc; KOPT: cc.sh.
#
#   bench/kernels/b32_batch_ab.sh BEFORE [TYPE NB LAYERS SHAPES]      e.g.
#   bench/kernels/b32_batch_ab.sh HEAD                 # Q4_1 (RA_Q4_1 = 3), 70 prompt tokens, SmolLM2-135M's 30 layers
set -e
[ $# -ge 1 ] || { echo "usage: $0 BEFORE_COMMIT [TYPE NB LAYERS SHAPES]" >&2; exit 2; }
. "$(dirname "$0")/cc.sh"
mkdir -p "$OUT/before"
(cd "$ROOT" && git archive "$1" Sources/CKernels) | tar -x -C "$OUT/before"
B="$OUT/before/Sources/CKernels"
$CC $KOPT -fno-math-errno -I "$B/include" -I "$B" -c "$B/matmul_avx2_b32.c" -o "$OUT/old.o"
# every symbol the old file defines, ra_NAME, becomes old_NAME (the file's entry points grow with the kernels)
RENAME=$(nm --defined-only -g "$OUT/old.o" | awk '$3 ~ /^ra_/ { printf " --redefine-sym %s=old_%s", $3, substr($3, 4) }')
# shellcheck disable=SC2086
objcopy $RENAME "$OUT/old.o"
$CC $KOPT -fno-math-errno -I "$K/include" -I "$K" -o "$OUT/b32_batch_ab" "$K"/*.c "$OUT/old.o" "$ROOT/bench/kernels/b32_batch_ab.c" -lm -lpthread
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/b32_batch_ab" "${2:-3}" "${3:-70}" "${4:-30}" "${5:-576x576,192x576,192x576,576x576,1536x576,1536x576,576x1536}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
