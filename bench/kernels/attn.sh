#!/bin/sh
# Decode attention alone (bench/kernels/attn.c) for the model shapes of the depth benchmark, at one depth:
# milliseconds per token over all layers and GB/s of K+V read. With REV, the same program is also built from the
# C kernels of that git revision and both run interleaved (ROUNDS rounds, fresh process each).
# Usage: bench/kernels/attn.sh [DEPTH] [THREADS] [REV] [ROUNDS] [PATH]   (CC, KOPT: cc.sh; clang -O2, as an app builds the kernels)
#   ATTN_PROMPT=N: each step is a prompt batch of N tokens after DEPTH cached positions instead of one decoded token
#   shapes: qwen3-0.6b (16/8 heads, 128, 28 layers), SmolLM2-135M (9/3, 64, 30), Gemma 3 270M (4/1, 256, 18 layers,
#   window 512 on five of every six)
set -e
. "$(dirname "$0")/cc.sh"
DEPTH="${1:-4096}"; THREADS="${2:-2}"; REV="${3:-}"; ROUNDS="${4:-3}"; KPATH="${5:-native}"
build() {   # kernel source dir, binary
    $CC $KOPT -fno-math-errno -Wall -Wextra -Wno-missing-field-initializers -I "$1/include" -I "$1" -o "$2" "$1"/*.c \
        "$ROOT/bench/kernels/attn.c" -lm -lpthread 2>/dev/null
}
build "$ROOT/Sources/CKernels" "$OUT/after"
BINS="after"
if [ -n "$REV" ]; then
    mkdir -p "$OUT/rev/include"
    git -C "$ROOT" archive "$REV" Sources/CKernels | tar -x -C "$OUT/rev"
    build "$OUT/rev/Sources/CKernels" "$OUT/before"
    BINS="before after"
fi
for r in $(seq 1 "$ROUNDS"); do
    for shape in "16 8 128 28 $DEPTH $THREADS 16 0 0" "9 3 64 30 $DEPTH $THREADS 16 0 0" "4 1 256 18 $DEPTH $THREADS 16 512 6"; do
        for b in $BINS; do
            printf '%s\t' "$b"
            # The engine keeps its cache head-major (ra_attention_params.kv_head_stride); a revision from before that
            # field (stop 21) needs ATTN_BEFORE_POSITION_MAJOR=1 to run the position-major layout it had.
            if [ "$b" = before ] && [ -n "${ATTN_BEFORE_POSITION_MAJOR:-}" ]; then unset ATTN_HEAD_MAJOR; else export ATTN_HEAD_MAJOR=1; fi
            # shellcheck disable=SC2086
            "$OUT/$b" $shape "$KPATH"
        done
    done
    BINS=$(echo "$BINS" | awk '{for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "")}')
done
