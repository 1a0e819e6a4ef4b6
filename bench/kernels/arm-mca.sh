#!/bin/sh
# Static throughput of the NEON dot kernels: llvm-mca's cycles per weight block of each kernel's inner loop on
# models of real cores (apple-m1; cortex-a76, which LLVM schedules with its Cortex-A57 model; neoverse-n1, the
# A76's server sibling, which has a model of its own), ours next to llama.cpp's kernel for the same type, both
# compiled the same way (clang -O3 --target=aarch64-linux-gnu -mcpu=CPU). Two flavours: with the ARMv8.2 dot
# product (both cores have it: our SDOT table against llama.cpp built for the core), and plain ARMv8
# (-mcpu=CPU+nodotprod: our plain NEON table against llama.cpp's non-dotprod fallback; llvm-mca gets -mcpu=CPU).
# llama.cpp is built with -DNDEBUG as its release builds are. Method and caveats: bench/results/arm.md;
# the loop extraction is bench/kernels/arm_mca.py.
# llama.cpp's source: LLAMA_SRC (the ggml directory of a llama.cpp tree), default the one vendored in the
# llama-cpp-python 0.3.36 sdist the benches use, unpacked under /work/cache/llama-sdist; fetch it with
#   pip download --no-binary :all: --no-deps llama-cpp-python==0.3.36   (then tar xzf it there)
# It is only compiled here, never copied into our sources.
# Needs clang with the AArch64 target, the aarch64 libc headers (libc6-dev-arm64-cross) and llvm-mca (Debian's llvm).
# Usage: bench/kernels/arm-mca.sh  (prints a markdown table; writes nothing into the repository)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
LLAMA_SRC="${LLAMA_SRC:-/work/cache/llama-sdist/llama_cpp_python-0.3.36/vendor/llama.cpp/ggml}"
[ -f "$LLAMA_SRC/src/ggml-cpu/arch/arm/quants.c" ] || { echo "arm-mca: no llama.cpp ggml source at $LLAMA_SRC (set LLAMA_SRC)" >&2; exit 2; }
# The newest llvm-mca here (Debian 12: llvm-mca-19 from the llvm-19 package, llvm-mca 14 from llvm).
LLVM_MCA="${LLVM_MCA:-$(command -v llvm-mca-19 || command -v llvm-mca || true)}"
[ -n "$LLVM_MCA" ] || { echo "arm-mca: llvm-mca not found (apt-get install llvm-19, or llvm)" >&2; exit 2; }
export LLVM_MCA
CC="clang --target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include -O3"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "llvm-mca: $("$LLVM_MCA" --version | grep -i 'llvm version' | head -1 | sed 's/^ *//'), compiler: $(clang --version | head -1)"
echo
echo "| -mcpu | type | ours cycles/block | llama.cpp cycles/block | ours / llama.cpp | ours without prefetch | ours loop (instr × blocks) | llama.cpp loop |"
echo "|---|---|---:|---:|---:|---:|---|---|"
for flavour in sdot plain; do
    for cpu in apple-m1 cortex-a76 neoverse-n1; do
        march="$cpu"
        [ "$flavour" = plain ] && march="$cpu+nodotprod"
        $CC -mcpu="$march" -I "$K/include" -S -o "$OUT/a.s" "$K/dot_neon.c"
        $CC -mcpu="$march" -I "$K/include" -S -o "$OUT/b.s" "$K/dot_neon_k.c"
        cat "$OUT/a.s" "$OUT/b.s" >"$OUT/ours.s"
        $CC -mcpu="$march" -DRA_NO_PREFETCH -I "$K/include" -S -o "$OUT/a.s" "$K/dot_neon.c"
        $CC -mcpu="$march" -DRA_NO_PREFETCH -I "$K/include" -S -o "$OUT/b.s" "$K/dot_neon_k.c"
        cat "$OUT/a.s" "$OUT/b.s" >"$OUT/ours-nopf.s"
        $CC -mcpu="$march" -DNDEBUG -I "$LLAMA_SRC/include" -I "$LLAMA_SRC/src" -I "$LLAMA_SRC/src/ggml-cpu" -S \
            -o "$OUT/theirs.s" "$LLAMA_SRC/src/ggml-cpu/arch/arm/quants.c"
        python3 "$ROOT/bench/kernels/arm_mca.py" "$OUT/ours.s" "$OUT/theirs.s" "$OUT/ours-nopf.s" "$cpu" "$flavour"
    done
done
