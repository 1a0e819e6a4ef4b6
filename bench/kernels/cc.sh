# Sourced by the in-process kernel benchmarks (rows_ab.sh, decode_split.sh, b32_batch_ab.sh, stream.sh, attn.sh): ROOT,
# K (the kernel sources), CC (clang when on PATH, as SwiftPM builds the kernels, else gcc), KOPT (-O2: what SwiftPM's
# release build gives the kernels in an app; KOPT=-O3 for what RUNANYWHERE_DEV_OPTIMIZE=1 gives them, the two differ
# in unrolling, bench/results/engine-notes.md "Stop 20") and OUT (a temporary folder removed on exit).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
CC=gcc
command -v clang >/dev/null && CC=clang
KOPT="${KOPT:--O2}"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
