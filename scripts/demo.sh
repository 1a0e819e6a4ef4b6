#!/usr/bin/env bash
# The demo command of the README: installs missing system packages, builds the CLI, runs `runanywhere demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
bash scripts/bootstrap.sh
swift build -c release --product runanywhere >&2
exec .build/release/runanywhere demo "$@"
