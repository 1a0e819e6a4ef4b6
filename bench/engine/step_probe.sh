#!/usr/bin/env bash
# Decode's read limit per model file: bench/engine/bandwidth.c (one flat buffer) next to bench/engine/step_probe.c
# (the ranges one decode step reads, from the file's mapping, split across the threads as the engine splits a
# product, with and without a barrier after each range). Prints a markdown table; run it on a quiet machine, and
# compare the engine's decode GB/s (bench/engine/ab.sh) with the `synced` columns.
#
#   bench/engine/step_probe.sh MODEL.gguf ... [--threads 2] [--passes 15] [--pages huge|asis]
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS=2 PASSES=15 PAGES=huge MODELS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --threads) THREADS="$2"; shift 2 ;;
        --passes) PASSES="$2"; shift 2 ;;
        --pages) PAGES="$2"; shift 2 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) MODELS+=("$1"); shift ;;
    esac
done
[ ${#MODELS[@]} -gt 0 ] || { echo "usage: $0 MODEL.gguf ... [--threads N] [--passes N] [--pages huge|asis]" >&2; exit 2; }
PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"   # decode_bytes.py needs the gguf package (in bench/.venv)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
gcc -O3 -march=native -Wall -Wextra -o "$WORK/bandwidth" bench/engine/bandwidth.c -lpthread
gcc -O3 -march=native -Wall -Wextra -o "$WORK/step_probe" bench/engine/step_probe.c -lpthread
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $THREADS threads, $PASSES passes each, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| file | MB a token | flat best / median GB/s | synced best / median | free best / median |"
echo "|---|---:|---:|---:|---:|"
for m in "${MODELS[@]}"; do
    [ "$PAGES" = huge ] && python3 bench/engine/pagecache.py huge "$m" >/dev/null
    "$PY" bench/engine/decode_bytes.py --segments "$m" > "$WORK/seg"
    flat="$("$WORK/bandwidth" "$THREADS" 0 "$PASSES")"
    step="$("$WORK/step_probe" "$m" "$THREADS" "$PASSES" < "$WORK/seg")"
    mb="$(echo "$step" | field bytes)"
    printf '| %s | %.1f | %s / %s | %s / %s | %s / %s |\n' "$(basename "$m" .gguf)" "$(echo "$mb / 1000000" | bc -l)" \
        "$(echo "$flat" | field best_gbs)" "$(echo "$flat" | field median_gbs)" \
        "$(echo "$step" | field synced_best_gbs)" "$(echo "$step" | field synced_median_gbs)" \
        "$(echo "$step" | field free_best_gbs)" "$(echo "$step" | field free_median_gbs)"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
