#!/bin/sh
# Checks that the C kernels build and run on 64-bit ARM (they must not assume x86): cross-compiles every
# CKernels source for aarch64 with warnings as errors, then runs the kernel benchmark's scalar path under
# qemu (slow: emulated; the figures mean nothing, the run must finish and agree with itself).
# Installs gcc-aarch64-linux-gnu and qemu-user with apt-get when missing.
# Usage: bench/kernels/arm.sh   (writes nothing into the repository)
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
aarch64-linux-gnu-gcc -O2 -static -I "$K/include" -o "$OUT/kbench" \
    "$K/quants.c" "$K/dispatch.c" "$K/dot_scalar.c" "$K/dot_avx2.c" "$K/dot_avx512.c" "$K/dot_avx512vnni.c" \
    "$ROOT/bench/kernels/bench.c" -lm
KBENCH_ONLY="${KBENCH_ONLY:-Q8_0,Q4_K,Q6_K,Q5_K,F16}" KBENCH_NB="${KBENCH_NB:-4}" qemu-aarch64 "$OUT/kbench" "$OUT/kernels.md"
echo "aarch64: the kernel benchmark ran under qemu (scalar path)"
