#!/bin/sh
# In-process before/after of an AVX2 decode rows kernel (bench/kernels/rows_ab.c): dot_avx2.c (the path's table) and,
# where the commit has it, rows_avx2_b32.c (the 32-element rows kernels, in dot_avx2.c before 2026-12-02) of commit
# BEFORE (symbols renamed) and of the working tree linked into one program, called in alternation. clang -O3 when the Swift
# toolchain's clang is on PATH (as SwiftPM builds the engine), else gcc -O3.
#
#   bench/kernels/rows_ab.sh BEFORE [TYPE N ROWS DI]      e.g.
#   bench/kernels/rows_ab.sh e330e63 3 576 1536 4                      # Q4_1 (RA_Q4_1 = 3, RA_DI_Q4_1 = 4), SmolLM2's gate/up
#   ROWS_AB_MEMORY=1 ROWS_AB_CHUNK=48 bench/kernels/rows_ab.sh e330e63 3 576 1536 4
set -e
[ $# -ge 1 ] || { echo "usage: $0 BEFORE_COMMIT [TYPE N ROWS DI]" >&2; exit 2; }
. "$(dirname "$0")/cc.sh"
RENAME="-Dra_dots_avx2=old_dots_avx2 -Dra_quantize_row_avx2=old_quantize_row_avx2"
for f in f16 q4_0 q4_1 q5_0 q5_1 q8_0; do RENAME="$RENAME -Dra_avx2_multi_$f=old_avx2_multi_$f -Dra_avx2_rows_$f=old_avx2_rows_$f"; done
OLD=
for f in dot_avx2 rows_avx2_b32; do
    (cd "$ROOT" && git show "$1:Sources/CKernels/$f.c" 2>/dev/null) > "$OUT/old_$f.c" || continue
    $CC -O3 -fno-math-errno -I "$K/include" -I "$K" $RENAME -c "$OUT/old_$f.c" -o "$OUT/old_$f.o"
    OLD="$OLD $OUT/old_$f.o"
done
$CC -O3 -fno-math-errno -I "$K/include" -I "$K" -o "$OUT/rows_ab" "$K"/*.c $OLD "$ROOT/bench/kernels/rows_ab.c" -lm -lpthread
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/rows_ab" "${2:-3}" "${3:-576}" "${4:-1536}" "${5:-4}"
