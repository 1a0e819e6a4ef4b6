#!/bin/sh
# Decode streaming benchmark (bench/kernels/stream.c): GB/s of all 2-D tensors of a GGUF multiplied with one
# activation row, the weights read from the file mapping as in a decode step. Needs python3 with `gguf`
# (bench/.venv has it) to list the tensors.
# Usage: bench/kernels/stream.sh MODEL.gguf [THREADS] [STEPS]   (STREAM_CLOCK=cpu: time the calling thread's CPU time;
# with THREADS 1, a kernel comparison that a busy machine disturbs less; CC=clang: build with the engine's compiler;
# KOPT: the optimisation level, -O2 by default as SwiftPM's release build gives the kernels in an app;
# STREAM_MATCH=REGEX: only the tensors whose names match, e.g. a few that stay in cache between steps, so that with
# STREAM_CLOCK=cpu the rate from cache can be set beside the rate from memory)
# STREAM_AB=COMMIT: an in-process before/after of the AVX2 K-quant decode rows kernels, COMMIT's dot_avx2_k.c
# (symbols renamed) against the working tree's, alternating step by step (stream.c), on the AVX2 path even where the
# CPU has AVX-512 (the machine needs AVX2).
# STREAM_PATHS=1: steps alternate between the AVX2 path ("old") and the CPU's own ("new"), e.g. an AVX-512 rows kernel
# against the AVX2 one it stands in for.
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
EXTRA=
if [ -n "${STREAM_AB:-}" ]; then
    mkdir "$OUT/K" && cp -r "$K"/. "$OUT/K" && K="$OUT/K"
    cat >> "$K/dispatch.c" <<'CEOF'

// stream.sh STREAM_AB: replaces the AVX2 path's decode rows kernel of one type
void ra_ab_set_rows(int di, ra_dot_rows_fn f);
void ra_ab_set_rows(int di, ra_dot_rows_fn f) {
    static pthread_once_t ab_once = PTHREAD_ONCE_INIT;
    pthread_once(&ab_once, build_dispatch);
    g_rows[RA_PATH_AVX2][di] = f;
}
CEOF
    RENAME=
    for f in q4_k q5_k q6_k; do RENAME="$RENAME -Dra_avx2_dot_$f=old_avx2_dot_$f -Dra_avx2_rows_$f=old_avx2_rows_$f -Dra_avx2_multi_$f=old_avx2_multi_$f"; done
    (cd "$ROOT" && git show "$STREAM_AB:Sources/CKernels/dot_avx2_k.c") > "$OUT/old_k.c"
    ${CC:-gcc} ${KOPT:--O2} -fno-math-errno -I "$K/include" -I "$K" $RENAME -c "$OUT/old_k.c" -o "$OUT/old_k.o"
    EXTRA="-DSTREAM_AB -I $K $OUT/old_k.o"
fi
${CC:-gcc} ${KOPT:--O2} -fno-math-errno -Wall -Wextra -I "$K/include" -o "$OUT/stream" \
    "$K"/*.c "$ROOT/bench/kernels/stream.c" $EXTRA -lm -lpthread
"$OUT/stream" "$MODEL" "$OUT/tensors.txt" "$THREADS" "$STEPS"
rm -rf "$OUT"
