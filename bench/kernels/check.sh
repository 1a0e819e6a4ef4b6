#!/bin/sh
# The C kernel check (bench/kernels/check.c, ops_check.c: every SIMD path this CPU runs against scalar, and the
# batches and rows kernels against the path's own dot bit for bit) built by every C compiler here, gcc and clang,
# at -O2 and -O3. SwiftPM builds the kernels with clang, but their bytes must not hang on a compiler's defaults: gcc
# fuses a multiply and an add into one fma across intrinsics (-ffp-contract=fast) where clang does not, and that once
# gave the AVX2 Q8_K quantizer 2 bytes the scalar one did not (dot_avx2.c). About 15 s per build.
#
#   bench/kernels/check.sh        exits non-zero when any build disagrees
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CLANG=$(command -v clang || true)
[ -z "$CLANG" ] && [ -x /opt/swift/usr/bin/clang ] && CLANG=/opt/swift/usr/bin/clang
status=0
for cc in gcc "$CLANG"; do
    [ -n "$cc" ] && command -v "$cc" >/dev/null || continue
    for opt in -O2 -O3; do
        "$cc" $opt -fno-math-errno -I "$K/include" -o "$OUT/check" "$K"/*.c "$ROOT/bench/kernels/check.c" \
            "$ROOT/bench/kernels/ops_check.c" -lm -lpthread 2>"$OUT/cc.log" || { cat "$OUT/cc.log" >&2; exit 1; }
        if "$OUT/check" > "$OUT/check.log"; then
            echo "$(basename "$cc") $opt: $(tail -n 1 "$OUT/check.log")"
        else
            echo "$(basename "$cc") $opt: FAIL" >&2
            grep -v ' ok$' "$OUT/check.log" >&2
            status=1
        fi
    done
done
exit $status
