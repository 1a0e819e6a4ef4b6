#!/bin/sh
# Checks the C kernels on 64-bit ARM: cross-compiles every CKernels source for aarch64 with warnings as
# errors, then runs the kernel benchmark under qemu on two CPU models and FAILS (non-zero exit) when a NEON
# path differs from the scalar one by more than KBENCH_TOL (default 1e-5 of max|scalar|, per type, shape
# and batch), or when bench/kernels/edge.c (random weight bytes, extreme activations) finds a mismatch:
#   -cpu max         has the ARMv8.2 dot product: paths scalar, neon and neon-dotprod (the NEON table
#                    measured with dotprod masked off, then the SDOT one)
#   -cpu cortex-a53  plain ARMv8.0: run-time detection must not pick neon-dotprod; paths scalar and neon
# The GB/s figures are emulated and mean nothing; only the "max rel. diff" column matters here.
# Installs gcc-aarch64-linux-gnu and qemu-user with apt-get when missing.
# Usage: bench/kernels/arm.sh   (writes nothing into the repository; KBENCH_ONLY / KBENCH_NB as in bench.c)
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for f in "$K"/*.c; do
    aarch64-linux-gnu-gcc -O2 -Wall -Wextra -Werror -I "$K/include" -c -o "$OUT/$(basename "$f" .c).o" "$f"
done
echo "aarch64: every CKernels source compiles with -Wall -Wextra -Werror"
# SwiftPM compiles the sources with clang: check that too when a clang and the cross headers are here
if command -v clang >/dev/null && [ -d /usr/aarch64-linux-gnu/include ]; then
    for f in "$K"/*.c; do
        clang --target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include -O2 -Wall -Wextra -Werror \
            -I "$K/include" -c -o "$OUT/clang.o" "$f"
    done
    echo "aarch64: ... and with $(clang --version | head -1)"
fi
aarch64-linux-gnu-gcc -O2 -static -I "$K/include" -o "$OUT/kbench" \
    "$K/quants.c" "$K/dispatch.c" "$K/dot_scalar.c" "$K/dot_avx2.c" "$K/dot_avx512.c" "$K/dot_avx512vnni.c" \
    "$K/dot_neon.c" "$ROOT/bench/kernels/bench.c" -lm
aarch64-linux-gnu-gcc -O2 -static -I "$K/include" -o "$OUT/edge" \
    "$K/quants.c" "$K/dispatch.c" "$K/dot_scalar.c" "$K/dot_avx2.c" "$K/dot_avx512.c" "$K/dot_avx512vnni.c" \
    "$K/dot_neon.c" "$ROOT/bench/kernels/edge.c" -lm
export KBENCH_ONLY="${KBENCH_ONLY:-Q8_0,Q4_K,Q6_K,Q5_K,F16}" KBENCH_NB="${KBENCH_NB:-1,4}" KBENCH_TOL="${KBENCH_TOL:-1e-5}"
for cpu in max cortex-a53; do
    echo "qemu-aarch64 -cpu $cpu:"
    # edge cases the benchmark's data does not reach (bench/kernels/edge.c): exits 1 on a mismatch
    if ! qemu-aarch64 -cpu "$cpu" "$OUT/edge"; then echo "aarch64 ($cpu): FAILED: edge cases differ from scalar"; exit 1; fi
    if ! qemu-aarch64 -cpu "$cpu" "$OUT/kbench" "$OUT/kernels.md" >"$OUT/log"; then
        cat "$OUT/log"
        echo "aarch64 ($cpu): FAILED: a NEON kernel differs from scalar (or the benchmark crashed)"
        exit 1
    fi
    cat "$OUT/log"
    # the run-time selection: SDOT only where the CPU has it, and the plain NEON table everywhere
    case "$cpu" in
    max) want="neon-dotprod" ;;
    *) want="neon"; if grep -q "neon-dotprod" "$OUT/log"; then echo "aarch64 ($cpu): FAILED: picked neon-dotprod without the feature"; exit 1; fi ;;
    esac
    if ! grep -q " $want " "$OUT/log"; then echo "aarch64 ($cpu): FAILED: path $want did not run"; exit 1; fi
done
echo "aarch64: the NEON kernels agree with scalar within $KBENCH_TOL on both CPU models"
