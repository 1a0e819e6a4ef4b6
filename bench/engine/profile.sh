#!/usr/bin/env bash
# Where a decode run's time goes: `perf record -e cpu-clock` (call graphs through DWARF) of
# `engine-bench MODEL --tg N --pp 1`, classified by bench/engine/profile_summary.py into the row·vector kernels,
# the output matrix, attention, element-wise ops, pool waits, the benchmark's argmax and the Swift side.
#
#   bench/engine/profile.sh MODEL.gguf [--threads 2] [--tg 128] [--reps 2] [--cpu avx2|native] [--sample]
#
# --sample: decode through the token loop the CLI runs, with the default sampling parameters (engine-bench --sample),
# instead of decode + argmax.
# Then a second run without call graphs: each kernel's time a token beside the bytes its weight type streams (needs the
# gguf package: bench/.venv, or LLAMA_PYTHON), i.e. the rate it reads at while it runs, and a token's time outside them.
# Needs perf (Debian: linux-perf) allowed to profile its own children (kernel.perf_event_paranoid <= 2) and
# swift-demangle next to swift. Prints the decode rate of the profiled run, the load average and the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: $0 MODEL.gguf [--threads N] [--tg N] [--reps N] [--cpu PATH] [--sample]" >&2; exit 2; }
MODEL="$1"
shift
THREADS=2 TG=128 REPS=2 CPU=native SAMPLE=
while [ $# -gt 0 ]; do
    case "$1" in
        --threads) THREADS="$2"; shift 2 ;;
        --tg) TG="$2"; shift 2 ;;
        --reps) REPS="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        --sample) SAMPLE=--sample; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v perf >/dev/null || { echo "perf is not installed (Debian: apt-get install linux-perf)" >&2; exit 2; }
DEMANGLE="$(dirname "$(command -v swift)")/swift-demangle"
[ -x "$DEMANGLE" ] || { echo "swift-demangle not found next to swift" >&2; exit 2; }
env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product engine-bench >&2   # as an app builds it (-O2)
BIN="$(env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --show-bin-path)/engine-bench"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
perf record -q -e cpu-clock -F 1000 --call-graph dwarf,8192 -o "$WORK/perf.data" -- \
    "$BIN" "$MODEL" --tg "$TG" --pp 1 --reps "$REPS" --threads "$THREADS" --cpu "$CPU" $SAMPLE 2>/dev/null | grep "^| tg" | tee "$WORK/rate.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
perf script -i "$WORK/perf.data" -F pid,tid,ip,sym,srcline 2>/dev/null | "$DEMANGLE" --simplified > "$WORK/script.txt"
python3 bench/engine/profile_summary.py "$WORK/script.txt" Sources/RunAnywhereGGUF/Transformer/Transformer.swift
# The kernels' read rates: a second run without call graphs (light on the machine), and the gguf package (bench/.venv
# has it; LLAMA_PYTHON as the other scripts take it) for the bytes per weight type.
PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"
if ! "$PY" -c "import gguf" 2>/dev/null; then
    echo "(no gguf package for $PY: the table of the kernels' read rates is left out)"
    exit 0
fi
HZ=2000
echo
perf record -q -e cpu-clock -F "$HZ" -o "$WORK/light.data" -- \
    "$BIN" "$MODEL" --tg "$TG" --pp 1 --reps "$REPS" --threads "$THREADS" --cpu "$CPU" $SAMPLE 2>/dev/null | grep "^| tg" | tee "$WORK/rate2.txt"
perf script -i "$WORK/light.data" -F pid,tid,ip,sym 2>/dev/null > "$WORK/light.txt"
echo
# single-token steps: REPS runs of TG, and the REPS one-token prompts (--pp 1) before them
"$PY" bench/engine/profile_summary.py --budget "$WORK/light.txt" --model "$MODEL" \
    --tok-s "$(awk -F'|' '{ split($4, a, " "); print a[1] }' "$WORK/rate2.txt")" --tokens $((REPS * TG + REPS)) --hz "$HZ"
