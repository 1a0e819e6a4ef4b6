#!/bin/sh
# Decode streaming benchmark (bench/kernels/stream.c): GB/s of all 2-D tensors of a GGUF multiplied with one
# activation row, the weights read from the file mapping as in a decode step. Needs python3 with `gguf`
# (bench/.venv has it) to list the tensors.
# Usage: bench/kernels/stream.sh MODEL.gguf [THREADS] [STEPS]   (STREAM_CLOCK=cpu: time the calling thread's CPU time;
# with THREADS 1, a kernel comparison that a busy machine disturbs less; CC=clang: build with the engine's compiler;
# STREAM_MATCH=REGEX: only the tensors whose names match, e.g. a few that stay in cache between steps, so that with
# STREAM_CLOCK=cpu the rate from cache can be set beside the rate from memory)
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K="$ROOT/Sources/CKernels"
MODEL="$1"; THREADS="${2:-2}"; STEPS="${3:-32}"
[ -f "$MODEL" ] || { echo "usage: $0 MODEL.gguf [THREADS] [STEPS]" >&2; exit 2; }
PY=python3
[ -x "$ROOT/bench/.venv/bin/python" ] && PY="$ROOT/bench/.venv/bin/python"
OUT=$(mktemp -d)
"$PY" - "$MODEL" > "$OUT/tensors.txt" <<'PYEOF'
import os, re, sys, gguf
r = gguf.GGUFReader(sys.argv[1])
match = os.environ.get("STREAM_MATCH")
for t in r.tensors:
    if len(t.shape) == 2 and (not match or re.search(match, t.name)):
        print(t.name, int(t.tensor_type), int(t.data_offset), int(t.shape[0]), int(t.shape[1]))
PYEOF
${CC:-gcc} -O3 -fno-math-errno -Wall -Wextra -I "$K/include" -o "$OUT/stream" \
    "$K"/*.c "$ROOT/bench/kernels/stream.c" -lm -lpthread
"$OUT/stream" "$MODEL" "$OUT/tensors.txt" "$THREADS" "$STEPS"
rm -rf "$OUT"
