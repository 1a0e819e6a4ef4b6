#!/usr/bin/env bash
# The test command of the README: installs missing system packages, builds, runs every test.
# Tests that compare against llama.cpp's reference outputs read RUNANYWHERE_TESTDATA
# (default: ../shared/testdata beside the repository, when it exists); without it they are skipped and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
bash scripts/bootstrap.sh
if [ -z "${RUNANYWHERE_TESTDATA:-}" ] && [ -d ../shared/testdata ]; then
  export RUNANYWHERE_TESTDATA="$(cd ../shared/testdata && pwd)"
fi
echo "RUNANYWHERE_TESTDATA=${RUNANYWHERE_TESTDATA:-<unset: reference tests are skipped>}" >&2
# Optimise the kernels and the engine in this debug build too (Package.swift explains why it is opt-in).
export RUNANYWHERE_DEV_OPTIMIZE=1
swift build --build-tests
swift test --disable-xctest --skip-build "$@"
