#!/usr/bin/env bash
# Vision benchmark: image encoding (a 512x512 PNG and JPEG) and time to first token with one image, native engine
# (vlm-bench) against llama.cpp's mtmd (bench_mtmd.py) on the same files and threads, with a random-weight model
# in SmolVLM-256M's shapes (Q8_0, written by make_smolvlm.py). Writes bench/results/vlm.md.
#
#   bench/vlm/run.sh [--threads N] [--reps N]
#
# Needs the bench venv with llama-cpp-python 0.3.36 (PYTHON, default bench/.venv/bin/python) and ImageMagick.
# VLM_BENCH_BIN may name an already built vlm-bench (else it is built with `swift build -c release`).
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
PY="${PYTHON:-bench/.venv/bin/python}"
CACHE="${BENCH_CACHE:-${TMPDIR:-/tmp}/runanywhere-bench}/vlm"
mkdir -p "$CACHE" bench/results
TEXT="$CACHE/smolvlm-smolvlm-256m-q8_0.gguf"
PROJ="$CACHE/mmproj-smolvlm-smolvlm-256m-q8_0.gguf"
[ -s "$PROJ" ] || "$PY" bench/vlm/make_smolvlm.py --shape smolvlm-256m --type q8_0 --out "$CACHE" >&2
# A photo-like picture (plasma fractal, fixed seed) as PNG and JPEG.
[ -s "$CACHE/photo.png" ] || convert -seed 7 -size 512x512 plasma:fractal -blur 0x1 -strip "$CACHE/photo.png"
[ -s "$CACHE/photo.jpg" ] || convert "$CACHE/photo.png" -quality 90 -strip "$CACHE/photo.jpg"

if [ -z "${VLM_BENCH_BIN:-}" ]; then
    swift build -c release --product vlm-bench >&2
    VLM_BENCH_BIN="$(swift build -c release --show-bin-path)/vlm-bench"
fi
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
ROWS=()
for img in photo.png photo.jpg; do
    modes=(avx2); [ "$img" = photo.png ] && modes+=(scalar)   # the scalar path once: it is slow
    for mode in "${modes[@]}"; do
        flag=(); [ "$mode" = scalar ] && flag=(--scalar)
        ours="$("$VLM_BENCH_BIN" --text "$TEXT" --mmproj "$PROJ" --image "$CACHE/$img" --threads "$THREADS" --reps "$REPS" "${flag[@]}")"
        ROWS+=("$img|native ($mode)|$ours")
    done
    theirs="$("$PY" bench/vlm/bench_mtmd.py --text "$TEXT" --mmproj "$PROJ" --image "$CACHE/$img" --threads "$THREADS" --reps "$REPS")"
    ROWS+=("$img|llama.cpp mtmd (native build, AVX2)|$theirs")
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
CPU="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //' || uname -m)"
{
    echo "# Vision benchmark (SmolVLM-256M shapes)"
    echo
    echo "Random-weight SmolVLM pair in SmolVLM-256M-Instruct's shapes (text: llama, 30 layers, 576 wide; vision: SigLIP"
    echo "12 layers × 768, 512 px tiles of 16 px patches, pixel shuffle 4, longest edge 1536), every matrix Q8_0"
    echo "(bench/vlm/make_smolvlm.py). A 512x512 image becomes 3x3 tiles + the global tile = 10 encoder passes and"
    echo "640 image tokens. encode = all tiles of one image; ttft = encode + prompt (image tokens and text) + first"
    echo "token. Median of $REPS runs, $THREADS threads; mtmd without flash attention (its F32 path, as ours)."
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- CPU: $CPU, $(nproc) cores visible (no AVX-512 here: that column of the issue is not measured)"
    echo "- load average before / after: $LOAD_BEFORE / $LOAD_AFTER"
    echo
    echo "| image | engine | result |"
    echo "|---|---|---|"
    for r in "${ROWS[@]}"; do echo "| ${r//|/ | } |"; done
} > bench/results/vlm.md
cat bench/results/vlm.md
