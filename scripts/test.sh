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
# The vision tests' tiny models are generated (deterministically, checked by SHA-256), never committed.
bash scripts/make-vision-fixtures.sh || echo "test.sh: could not generate the tiny vision models; the vision tests skip" >&2
swift build --build-tests
if [ $# -gt 0 ]; then
  exec swift test --disable-xctest --skip-build "$@"
fi
# Separate runs: the download tests measure time (stall timeouts, cancellation latency, connection ramps, a disk that
# fills mid-transfer) against a loopback server, and on 2 cores they must not share the CPU with the suites that
# saturate it (speech decoding, llama.cpp's spinning threads, engine references on every kernel path).
# The remote backend's tests time read timeouts and refused connections too, and the server's tests pace a model
# and time its queue: a run each of their own (beside speech and the engine references, a first token took > 10 s).
swift test --disable-xctest --skip-build --skip "^(DownloadTests|RemoteTests|ServerTests)\."
swift test --disable-xctest --skip-build --filter "^DownloadTests\."
swift test --disable-xctest --skip-build --filter "^RemoteTests\."
swift test --disable-xctest --skip-build --filter "^ServerTests\."
