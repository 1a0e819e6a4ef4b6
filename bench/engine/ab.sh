#!/usr/bin/env bash
# Before/after check of an engine change on one GGUF file, next to llama.cpp, in one interleaved run (the machine
# is shared and noisy: medians of REPS rounds; each round runs every engine once, in a fresh process, in an order
# that rotates round by round).
#
#   bench/engine/ab.sh BEFORE_BIN AFTER_BIN MODEL.gguf [--reps 7] [--threads 2] [--pp 128] [--tg 16] [--cpu avx2] [--depth 0]
#                      [--pages huge|asis]
#
# --depth N: the decode steps start after N random tokens were evaluated into the cache (n_ctx N + tg + 16).
# --pages: huge (default) first reads the file back into the page cache as 2 MiB pages (bench/engine/pagecache.py),
# so runs of different sessions start from the same state (it moves decode ~1.2x); asis leaves the cache alone.
#
# BEFORE_BIN and AFTER_BIN are engine-bench executables (`env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release
# --product engine-bench` at the two commits, copied aside: an app's release build, clang -O2 for the kernels; with
# RUNANYWHERE_DEV_OPTIMIZE=1 they get -O3, which is not what users run); llama.cpp is llama-cpp-python from bench/.venv (bench/engine/llama_tool.py; LLAMA_PYTHON to use
# another, skipped when absent). Prints a Markdown table of median prompt (pp) and decode (tg) tokens/s and ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { echo "usage: $0 BEFORE_BIN AFTER_BIN MODEL.gguf [--reps N] [--threads N] [--pp N] [--tg N] [--cpu PATH] [--depth N] [--pages huge|asis]" >&2; exit 2; }
BEFORE="$1" AFTER="$2" MODEL="$3"
shift 3
REPS=7 THREADS=2 PP=128 TG=16 CPU=native DEPTH=0 PAGES=huge
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --pp) PP="$2"; shift 2 ;;
        --tg) TG="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        --depth) DEPTH="$2"; shift 2 ;;
        --pages) PAGES="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"
ENGINES="before after"
if "$PY" -c 'import llama_cpp' 2>/dev/null; then ENGINES="$ENGINES llama"; else echo "no llama-cpp-python at $PY: skipping llama.cpp" >&2; fi
DEPTH_ARGS=
[ "$DEPTH" -gt 0 ] && DEPTH_ARGS="--depth $DEPTH --ctx $((DEPTH + TG + 16))"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
run() {
    case "$1" in
        before) "$BEFORE" "$MODEL" --report --threads "$THREADS" --pp "$PP" --tg "$TG" --cpu "$CPU" $DEPTH_ARGS ;;
        after) "$AFTER" "$MODEL" --report --threads "$THREADS" --pp "$PP" --tg "$TG" --cpu "$CPU" $DEPTH_ARGS ;;
        llama) "$PY" bench/engine/llama_tool.py bench "$MODEL" --threads "$THREADS" --pp "$PP" --tg "$TG" $DEPTH_ARGS ;;
    esac
}
case "$PAGES" in
    huge) python3 bench/engine/pagecache.py huge "$MODEL" ;;
    asis) python3 bench/engine/pagecache.py report "$MODEL" ;;
    *) echo "--pages takes huge or asis" >&2; exit 2 ;;
esac
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
read -r -a ORDER <<<"$ENGINES"
for ((r = 0; r < REPS; r++)); do
    for ((i = 0; i < ${#ORDER[@]}; i++)); do
        E="${ORDER[$(((i + r) % ${#ORDER[@]}))]}"
        echo "$E $(run "$E" | grep '^RESULT')" >> "$OUT"
    done
done
python3 - "$OUT" "$ENGINES" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, *kv = line.split()
    d = dict(x.split("=") for x in kv)
    rows.setdefault(name, {"pp": [], "tg": []})
    for k in ("pp", "tg"):
        rows[name][k].append(float(d[k]))
med = {n: {k: statistics.median(v) for k, v in r.items()} for n, r in rows.items()}
print("| engine | pp tok/s (median) | tg tok/s (median) | pp runs |")
print("|---|---:|---:|---|")
for n in sys.argv[2].split():
    print(f"| {n} | {med[n]['pp']:.1f} | {med[n]['tg']:.1f} | {' '.join(f'{v:.0f}' for v in rows[n]['pp'])} |")
print()
print(f"after / before: pp {med['after']['pp'] / med['before']['pp']:.2f}x, tg {med['after']['tg'] / med['before']['tg']:.2f}x")
if "llama" in med:
    print(f"after / llama.cpp: pp {med['after']['pp'] / med['llama']['pp']:.2f}x (before {med['before']['pp'] / med['llama']['pp']:.2f}x), "
          f"tg {med['after']['tg'] / med['llama']['tg']:.2f}x")
PY
echo
echo "load average before/after: $LOAD0 / $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/engine/pagecache.py report "$MODEL"
