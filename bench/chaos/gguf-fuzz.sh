#!/usr/bin/env bash
# GGUF reader fuzz campaign: the 5,000-case mutation test of Tests/GGUFTests run with SEEDS different seeds
# (default 20: 100,000 mutated files), each file ending in a GGUFError or a valid file. With ASAN=1 the
# package is built with AddressSanitizer (-sanitize=address) into .build-asan first.
#   [ASAN=1] bench/chaos/gguf-fuzz.sh [SEEDS=20]
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds="${1:-20}"
flags=()
if [[ "${ASAN:-0}" == 1 ]]; then export CHAOS_ASAN=1; flags=(-Xswiftc -sanitize=address); fi
failed=0
for i in $(seq 1 "$seeds"); do
  export RUNANYWHERE_GGUF_FUZZ_SEED=$(( 1000003 * i ))
  out="$(bench/chaos/run-tests.sh "GGUFReaderFuzzTests/mutations" "${flags[@]}" 2>&1)" || failed=$((failed + 1))
  echo "$out" | grep -E "gguf fuzz:|✘|ERROR: AddressSanitizer|wall time" || true
done
echo "gguf fuzz campaign: $seeds seeds x 5000 cases = $(( seeds * 5000 )) mutated files, failed runs: $failed, asan: ${ASAN:-0}"
[[ $failed == 0 ]]
