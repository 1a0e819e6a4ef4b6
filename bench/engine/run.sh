#!/usr/bin/env bash
# Engine benchmark: our native GGUF engine against llama.cpp (llama-cpp-python 0.3.36, built here without
# AMX) on the same files and threads. Writes bench/results/engine.md.
#
#   bench/engine/run.sh [--reps N] [--threads "2 1"] [--shapes "qwen3-0.6b llama-1b"] [--types "q8_0 q4_k_m"] [--out FILE]
#
# 1. bench/.venv (gitignored): numpy, gguf and llama-cpp-python==0.3.36 compiled from source with
#    -mno-amx-* (about 6 minutes on 2 cores the first time; the venv is reused afterwards).
# 2. bench/work (gitignored): random-weight F16 models shaped like Qwen3-0.6B and Llama-3.2-1B
#    (bench/engine/make_model.py, vocabularies from $RUNANYWHERE_TESTDATA/vocab), quantized to Q8_0 and
#    Q4_K_M by llama_model_quantize; kept for the next run.
# 3. For every model and thread count, REPS rounds; each round runs both engines once, in a fresh process
#    each (order alternating round by round): load time (model + context), pp128 (one batch of 128 tokens
#    into an empty cache), tg128 (128 single-token steps from an empty cache), RSS after load, peak RSS.
#    Medians and ratios are written with the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=5
THREADS="2 1"
SHAPES="qwen3-0.6b llama-1b"
TYPES="q8_0 q4_k_m"
OUT=
CPU=native
ARGS="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --shapes) SHAPES="$2"; shift 2 ;;
        --types) TYPES="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        *) echo "usage: $0 [--reps N] [--threads \"2 1\"] [--shapes \"qwen3-0.6b llama-1b\"] [--types \"q8_0 q4_k_m\"] [--cpu native|avx2] [--out FILE]" >&2; exit 2 ;;
    esac
done
TESTDATA="${RUNANYWHERE_TESTDATA:-../shared/testdata}"
[ -d "$TESTDATA/vocab" ] || { echo "set RUNANYWHERE_TESTDATA to the shared test data (needs vocab/)" >&2; exit 2; }
# --cpu avx2: what a machine without AVX-512 runs. Our kernels are held to their AVX2 path; llama.cpp is
# built (in a venv of its own) for AVX2/FMA/F16C only, so both use the same instruction set.
case "$CPU" in
    native) VENV=bench/.venv; OUT="${OUT:-bench/results/engine.md}"
            LLAMA_BUILD="with -march=native -mno-amx-*"
            LLAMA_CMAKE="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" ;;
    avx2) VENV=bench/.venv-avx2; OUT="${OUT:-bench/results/engine-avx2.md}"
          LLAMA_BUILD="for AVX2/FMA/F16C only (GGML_NATIVE=OFF, GGML_AVX512=OFF); ours held to its AVX2 kernels (--cpu avx2)"
          LLAMA_CMAKE="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DLLAMA_CURL=OFF" ;;
    *) echo "--cpu must be native or avx2" >&2; exit 2 ;;
esac
PY="$VENV/bin/python"
WORK=bench/work
mkdir -p "$WORK" bench/results

# 1. Python tools.
if [ ! -x "$PY" ]; then python3 -m venv "$VENV"; fi
if ! "$PY" -c 'import numpy, gguf' 2>/dev/null; then "$PY" -m pip install -q numpy gguf; fi
if ! "$PY" -c 'import importlib.metadata as m, sys; sys.exit(m.version("llama_cpp_python") != "0.3.36")' 2>/dev/null; then
    echo "building llama-cpp-python 0.3.36 without AMX (several minutes) ..." >&2
    FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    CFLAGS="$FLAGS" CXXFLAGS="$FLAGS" CMAKE_ARGS="$LLAMA_CMAKE" \
        "$PY" -m pip install -q --no-cache-dir llama-cpp-python==0.3.36
fi

# 2. Models.
vocab_for() { case "$1" in qwen3-0.6b) echo "$TESTDATA/vocab/ggml-vocab-qwen2.gguf" ;; llama-1b) echo "$TESTDATA/vocab/ggml-vocab-llama-bpe.gguf" ;; esac; }
MODELS=()
for shape in $SHAPES; do
    F16="$WORK/$shape-f16.gguf"
    if [ ! -s "$F16" ]; then
        echo "writing $F16 ..." >&2
        "$PY" bench/engine/make_model.py "$F16.tmp" --shape "$shape" --vocab-file "$(vocab_for "$shape")"
        mv "$F16.tmp" "$F16"
    fi
    for type in $TYPES; do
        Q="$WORK/$shape-$type.gguf"
        if [ ! -s "$Q" ]; then
            echo "quantizing $Q ..." >&2
            "$PY" bench/engine/llama_tool.py quantize "$F16" "$Q.tmp" "$type" >/dev/null 2>&1
            mv "$Q.tmp" "$Q"
        fi
        MODELS+=("$shape-$type")
    done
done

# 3. Measurements.
swift build -c release --product engine-bench >&2
BIN="$(swift build -c release --show-bin-path)/engine-bench"
RAW="$WORK/$(basename "$OUT" .md)-raw.tsv"
: > "$RAW"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
START=$(date +%s)
for m in "${MODELS[@]}"; do
    for t in $THREADS; do
        for rep in $(seq 1 "$REPS"); do
            if [ $((rep % 2)) -eq 1 ]; then order="ours llama.cpp"; else order="llama.cpp ours"; fi
            for e in $order; do
                if [ "$e" = ours ]; then
                    line="$("$BIN" "$WORK/$m.gguf" --report --threads "$t" --pp 128 --tg 128 --ctx 256 --cpu "$CPU" | grep '^RESULT')"
                else
                    line="$("$PY" bench/engine/llama_tool.py bench "$WORK/$m.gguf" --threads "$t" --pp 128 --tg 128 --ctx 256 2>/dev/null | grep '^RESULT')"
                fi
                printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$t" "$e" "$rep" "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$RAW" >&2
            done
        done
    done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
MINUTES=$(( ($(date +%s) - START + 59) / 60 ))
CPU="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
SIZES="$(for m in "${MODELS[@]}"; do printf '%s %s MiB; ' "$m" $(( $(stat -L -c %s "$WORK/$m.gguf") / 1048576 )); done)"

{
    echo "# Engine benchmark: native engine vs llama.cpp"
    echo
    echo "Reproduce: \`RUNANYWHERE_TESTDATA=/work/shared/testdata bench/engine/run.sh $ARGS\`"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD); $REPS rounds per row, $MINUTES min of measuring"
    echo "- CPU: $CPU, $(nproc) cores; our kernels pick their SIMD path at run time; llama.cpp: llama-cpp-python 0.3.36"
    echo "  (llama.cpp 0c1e570) built here $LLAMA_BUILD, through its low-level API (llama_decode)"
    echo "- load average (1/5/15 min) before: $LOAD_BEFORE, after: $LOAD_AFTER. Other jobs share the 2 cores, so"
    echo "  the engines take turns run by run (fresh process each) and the table shows medians and ratios."
    echo "- models (random weights, F16 written by bench/engine/make_model.py, quantized by llama_model_quantize): $SIZES"
    echo "- pp128: one batch of 128 tokens into an empty cache; tg128: 128 single-token steps from an empty cache;"
    echo "  load: model + context (n_ctx 256, batch 128) with the file in the page cache; RSS from /proc/self/status"
    echo "  (llama.cpp's includes the Python interpreter, ~10-20 MiB). Ratios are ours / llama.cpp."
    echo
    "$PY" bench/engine/summarize.py "$RAW"
    echo
    echo "Raw runs (model, threads, engine, round, result, 1-min load average after the run):"
    echo
    echo '```'
    cat "$RAW"
    echo '```'
} > "$OUT.tmp"
# The profile findings (written by hand) follow the measured table.
if [ "$OUT" = bench/results/engine.md ] && [ -f bench/results/engine-notes.md ]; then cat bench/results/engine-notes.md >> "$OUT.tmp"; fi
mv "$OUT.tmp" "$OUT"
cat "$OUT"
