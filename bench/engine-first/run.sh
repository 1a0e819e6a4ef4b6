#!/usr/bin/env bash
# Engine-first benchmark: prompt (pp128) and decode (tg64) tokens/s of the native GGUF engine on a random
# model shaped like Qwen3-0.6B (Q8_0), with 2 threads. Writes bench/results/engine-first.md.
#
#   bench/engine-first/run.sh [--threads N] [--reps N]
#
# Needs python3 with numpy and the PyPI package gguf (to write the model once; cached in
# $BENCH_CACHE, default ${TMPDIR:-/tmp}/runanywhere-bench). RUNANYWHERE_TESTDATA (optional) supplies
# the real Qwen2 tokenizer from vocab/ggml-vocab-qwen2.gguf.
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS=2
REPS=3
while [ $# -gt 0 ]; do
    case "$1" in
        --threads) THREADS="$2"; shift 2 ;;
        --reps) REPS="$2"; shift 2 ;;
        *) echo "usage: $0 [--threads N] [--reps N]" >&2; exit 2 ;;
    esac
done
CACHE="${BENCH_CACHE:-${TMPDIR:-/tmp}/runanywhere-bench}"
MODEL="$CACHE/qwen3-0.6b-shape-q8_0.gguf"
mkdir -p "$CACHE" bench/results

if [ ! -s "$MODEL" ]; then
    VOCAB_ARGS=()
    if [ -n "${RUNANYWHERE_TESTDATA:-}" ] && [ -f "$RUNANYWHERE_TESTDATA/vocab/ggml-vocab-qwen2.gguf" ]; then
        VOCAB_ARGS=(--vocab-file "$RUNANYWHERE_TESTDATA/vocab/ggml-vocab-qwen2.gguf")
    fi
    echo "writing $MODEL ..." >&2
    python3 bench/engine-first/make_model.py "$MODEL.tmp" --type q8_0 "${VOCAB_ARGS[@]}"
    mv "$MODEL.tmp" "$MODEL"
fi

swift build -c release --product engine-bench >&2
BIN="$(swift build -c release --show-bin-path)/engine-bench"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
OUT="$("$BIN" "$MODEL" --threads "$THREADS" --pp 128 --tg 64 --reps "$REPS")"
# One thread for comparison (shows how much the second thread adds on this machine).
OUT1="$("$BIN" "$MODEL" --threads 1 --pp 128 --tg 64 --reps "$REPS" | grep -E '^\| (pp|tg)')"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
CPU="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //' || uname -m)"

{
    echo "# Engine-first benchmark"
    echo
    echo "Native GGUF engine (RunAnywhereGGUF), random-weight model shaped like Qwen3-0.6B: 28 layers,"
    echo "hidden 1024, 16 q heads / 8 kv heads × 128, ffn 3072, tied embeddings, vocab 151936, every matrix Q8_0"
    echo "(written by bench/engine-first/make_model.py). pp128 = 128 tokens in one batch into an empty cache;"
    echo "tg64 = 64 tokens decoded one at a time. Mean ± sd and best of $REPS runs (bench/engine-first/run.sh)."
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- CPU: $CPU, $(nproc) cores visible; kernel path chosen at run time"
    echo "- load average before / after: $LOAD_BEFORE / $LOAD_AFTER (other work on the machine slows the numbers;"
    echo "  when other processes keep the cores busy a second thread adds little: compare the 1-thread rows)"
    echo
    echo '```'
    echo "$OUT"
    echo "$OUT1"
    echo '```'
} > bench/results/engine-first.md
cat bench/results/engine-first.md
