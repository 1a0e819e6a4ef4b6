#!/usr/bin/env bash
# Builds the tests once, copies the test binary aside (so later builds do not touch a long run) and runs
# the Swift Testing filter given, with the environment the caller set. Used by the other scripts here.
#   bench/chaos/run-tests.sh FILTER [extra swift build flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
filter="$1"; shift
build_path=".build"
if [[ "${CHAOS_ASAN:-0}" == 1 ]]; then build_path=".build-asan"; fi
swift build --build-tests --build-path "$build_path" "$@" >/tmp/chaos-build-$$.log 2>&1 || { tail -30 /tmp/chaos-build-$$.log; exit 1; }
rm -f /tmp/chaos-build-$$.log
bin="$(swift build --build-path "$build_path" "$@" --show-bin-path)"
export RUNANYWHERE_CLI="${RUNANYWHERE_CLI:-$bin/runanywhere}"
export RUNANYWHERE_TESTDATA="${RUNANYWHERE_TESTDATA:-$(cd .. && pwd)/shared/testdata}"
copy="$(mktemp -d /tmp/chaos-bin.XXXXXX)"
trap 'rm -rf "$copy"' EXIT
cp "$bin/RunAnywherePackageTests.xctest" "$copy/"
cp -R "$bin"/*.resources "$copy/"   # the built-in catalog is looked up next to the executable
cp "$bin/runanywhere" "$copy/" && export RUNANYWHERE_CLI="$copy/runanywhere"
start=$(date +%s)
set +e
"$copy/RunAnywherePackageTests.xctest" --testing-library swift-testing --filter "$filter" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
status=${PIPESTATUS[0]}
echo "wall time: $(( $(date +%s) - start )) s, exit status $status"
exit "$status"
