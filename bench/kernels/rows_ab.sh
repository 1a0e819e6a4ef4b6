#!/bin/sh
# In-process before/after of an AVX2 decode rows kernel (bench/kernels/rows_ab.c): dot_avx2.c (the path's table) and,
# where the commit has them, rows_avx2_b32.c (the 32-element rows kernels, in dot_avx2.c before 2026-12-02) and
# dot_avx2_k.c (the K-quant dots and rows kernels) of commit BEFORE (symbols renamed) and of the working tree linked
# into one program, called in alternation. clang -O2 when the Swift
# toolchain's clang is on PATH (as SwiftPM builds the engine for an app), else gcc; KOPT: cc.sh.
#
#   bench/kernels/rows_ab.sh BEFORE [TYPE N ROWS DI]      e.g.
#   bench/kernels/rows_ab.sh e330e63 3 576 1536 4                      # Q4_1 (RA_Q4_1 = 3, RA_DI_Q4_1 = 4), SmolLM2's gate/up
#   ROWS_AB_MEMORY=1 ROWS_AB_CHUNK=48 bench/kernels/rows_ab.sh e330e63 3 576 1536 4
#   ROWS_AB_MEMORY=1 bench/kernels/rows_ab.sh 11f3b45 12 1024 3072 8                  # Q4_K (RA_DI_Q4_K = 8); Q5_K 13 .. 9, Q6_K 14 .. 10
set -e
[ $# -ge 1 ] || { echo "usage: $0 BEFORE_COMMIT [TYPE N ROWS DI]" >&2; exit 2; }
. "$(dirname "$0")/cc.sh"
RENAME="-Dra_dots_avx2=old_dots_avx2 -Dra_quantize_row_avx2=old_quantize_row_avx2"
for f in f16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k q6_k; do RENAME="$RENAME -Dra_avx2_multi_$f=old_avx2_multi_$f -Dra_avx2_rows_$f=old_avx2_rows_$f"; done
for f in q2_k q3_k q4_k q5_k q6_k; do RENAME="$RENAME -Dra_avx2_dot_$f=old_avx2_dot_$f"; done
OLD=
for f in dot_avx2 rows_avx2_b32 dot_avx2_k; do
    (cd "$ROOT" && git show "$1:Sources/CKernels/$f.c" 2>/dev/null) > "$OUT/old_$f.c" || continue
    $CC $KOPT -fno-math-errno -I "$K/include" -I "$K" $RENAME -c "$OUT/old_$f.c" -o "$OUT/old_$f.o"
    OLD="$OLD $OUT/old_$f.o"
done
$CC $KOPT -fno-math-errno -I "$K/include" -I "$K" -o "$OUT/rows_ab" "$K"/*.c $OLD "$ROOT/bench/kernels/rows_ab.c" -lm -lpthread
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/rows_ab" "${2:-3}" "${3:-576}" "${4:-1536}" "${5:-4}"
