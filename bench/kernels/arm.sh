#!/bin/sh
# Checks the C kernels on 64-bit ARM under qemu (no ARM hardware needed): every CKernels source must compile for
# aarch64 with -Wall -Wextra -Werror (GCC and clang), then bench/kernels/check.c (every weight type's dot and
# batch kernel, activation quantization, RMSNorm, softmax, SwiGLU, attention: each NEON path against scalar, NaN
# counted as a failure) runs on two CPU models, built twice (clang, as SwiftPM and Xcode build the sources, and
# GCC with -ffp-contract=off, which matches clang's default of not fusing a product into a later statement's add):
#   -cpu max         ARMv8.2 dot product and more: paths scalar, neon (dotprod masked off), neon-dotprod
#   -cpu cortex-a53  plain ARMv8.0: run-time detection must not pick neon-dotprod; paths scalar and neon
# Then bench/kernels/forward.c runs whole transformer forwards of the seven shared test models (RUNANYWHERE_TESTDATA,
# default /work/shared/testdata; skipped with a message when absent) on the scalar and the NEON paths: logits within
# 1e-3, equal greedy tokens, and llama.cpp's argmax from the references. Both CPU models always run; a summary
# table comes last; the exit status is 1 when anything failed. Takes about two minutes (~1 compiling, ~12 s per
# forward run). Not covered: the engine's Swift reference tests cannot run here on aarch64 (there is no aarch64
# Swift SDK offline); forward.c is the C stand-in for them.
# Installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user with apt-get when missing.
# Usage: bench/kernels/arm.sh   (writes nothing into the repository)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
B="$ROOT/bench/kernels"
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
SUMMARY="$OUT/summary"
: >"$SUMMARY"
failed=0
result() {   # result <what> <status>
    printf '| %s | %s |\n' "$1" "$2" >>"$SUMMARY"
    [ "$2" = ok ] || failed=1
}
CLANG=""
if command -v clang >/dev/null && [ -d /usr/aarch64-linux-gnu/include ]; then
    CLANG="clang --target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include"
fi

status=ok
for f in "$K"/*.c; do
    aarch64-linux-gnu-gcc -O2 -Wall -Wextra -Werror -I "$K/include" -c -o "$OUT/w.o" "$f" || status=FAILED
    if [ -n "$CLANG" ]; then $CLANG -O2 -Wall -Wextra -Werror -I "$K/include" -c -o "$OUT/w.o" "$f" || status=FAILED; fi
done
result "every CKernels source compiles for aarch64 with -Werror (gcc${CLANG:+, clang})" "$status"

# The checks, built with each compiler: CKernels + check.c + ops_check.c, and CKernels + forward.c, linked
# statically by the cross GCC.
build() {   # build <name> <compiler...>
    name=$1; shift
    mkdir -p "$OUT/$name/k"
    for f in "$K"/*.c "$B/check.c" "$B/ops_check.c" "$B/forward.c"; do
        o="$OUT/$name/$(basename "$f" .c).o"
        case "$f" in "$K"/*) o="$OUT/$name/k/$(basename "$f" .c).o" ;; esac
        "$@" -O2 -I "$K/include" -I "$K" -c -o "$o" "$f" 2>"$OUT/$name.log" || { cat "$OUT/$name.log"; return 1; }
    done
    aarch64-linux-gnu-gcc -static -o "$OUT/$name/check" "$OUT/$name"/k/*.o "$OUT/$name/check.o" "$OUT/$name/ops_check.o" -lm -lpthread &&
        aarch64-linux-gnu-gcc -static -o "$OUT/$name/forward" "$OUT/$name"/k/*.o "$OUT/$name/forward.o" -lm -lpthread
}
TESTDATA="${RUNANYWHERE_TESTDATA:-/work/shared/testdata}"
BUILDS="gcc"
build gcc aarch64-linux-gnu-gcc -ffp-contract=off || result "build with gcc" FAILED
if [ -n "$CLANG" ]; then
    BUILDS="clang gcc"
    build clang $CLANG || result "build with clang" FAILED
fi

for cpu in max cortex-a53; do
    case "$cpu" in max) want="neon-dotprod" ;; *) want="neon" ;; esac
    for cc in $BUILDS; do
        [ -x "$OUT/$cc/check" ] || continue
        echo "== qemu-aarch64 -cpu $cpu, $cc build: kernel check"
        qemu-aarch64 -cpu "$cpu" "$OUT/$cc/check" >"$OUT/log" 2>&1
        rc=$?
        cat "$OUT/log"
        [ $rc -eq 0 ] && status=ok || status="FAILED ($(grep -c 'FAIL$' "$OUT/log") checks, exit $rc)"
        result "$cpu, $cc: check.c (dots, batches, quantization, ops vs scalar)" "$status"
        # the run-time selection: SDOT only where the CPU has it, the plain NEON table everywhere
        if ! grep -q "^paths:.* $want\$" "$OUT/log"; then
            result "$cpu, $cc: run-time detection picks $want as the best path" FAILED
        else
            result "$cpu, $cc: run-time detection picks $want as the best path" ok
        fi
        if [ -d "$TESTDATA/models" ]; then
            echo "== qemu-aarch64 -cpu $cpu, $cc build: model forwards"
            qemu-aarch64 -cpu "$cpu" "$OUT/$cc/forward" "$TESTDATA" >"$OUT/log" 2>&1
            rc=$?
            cat "$OUT/log"
            [ $rc -eq 0 ] && status=ok || status="FAILED (exit $rc)"
            result "$cpu, $cc: forward.c (7 test models: NEON vs scalar logits and greedy tokens, llama.cpp argmax)" "$status"
        fi
    done
done

[ -d "$TESTDATA/models" ] || echo "forward.c skipped: no test models at $TESTDATA/models (set RUNANYWHERE_TESTDATA)"
echo
echo "## aarch64 summary"
echo
echo "| check | result |"
echo "|---|---|"
cat "$SUMMARY"
if [ $failed -ne 0 ]; then echo "aarch64: FAILED"; exit 1; fi
echo "aarch64: every NEON path agrees with scalar on both CPU models"
