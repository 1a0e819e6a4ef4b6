# Sourced by the in-process kernel benchmarks (rows_ab.sh, decode_split.sh): ROOT, K (the kernel sources), CC (clang
# when on PATH, as SwiftPM builds the kernels, else gcc) and OUT (a temporary folder removed on exit).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
CC=gcc
command -v clang >/dev/null && CC=clang
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
