#!/usr/bin/env bash
# Tokenizer encoding throughput: builds the tests in release mode and runs the benchmark test,
# which encodes ~4 MB of generated English-like text with each shared vocabulary (median of 5)
# and writes bench/results/tokenizer.md.
#
# usage: bench/tokenizer/run.sh            (RUNANYWHERE_TESTDATA defaults to ../shared/testdata)
set -euo pipefail
cd "$(dirname "$0")/../.."
export RUNANYWHERE_TESTDATA="${RUNANYWHERE_TESTDATA:-$(cd .. && pwd)/shared/testdata}"
if [ ! -d "$RUNANYWHERE_TESTDATA/vocab" ]; then
    echo "error: no vocabularies in $RUNANYWHERE_TESTDATA/vocab (set RUNANYWHERE_TESTDATA)" >&2
    exit 2
fi
mkdir -p bench/results
out="$(pwd)/bench/results/tokenizer.md"
swift build -c release --build-tests -Xswiftc -enable-testing
RUNANYWHERE_TOKENIZER_BENCH="$out" RUNANYWHERE_BENCH_CONFIG="release (swift build -c release), $(uname -m), $(date -u +%Y-%m-%d)" \
    swift test -c release --skip-build --disable-xctest -Xswiftc -enable-testing --filter TokenizerBenchmark
cat "$out"
