#!/usr/bin/env bash
# Checks that an app can add this package as a versioned SwiftPM dependency: SwiftPM refuses such a
# dependency when any of its targets carries unsafe compiler flags. Tags a clone of HEAD as 0.0.1, builds a
# small app that depends on it `from: "0.0.1"` and uses the public API, and runs the app.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
unset RUNANYWHERE_DEV_OPTIMIZE   # an app's build does not set it
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
git clone -q "$PWD" "$WORK/sdk"
git -C "$WORK/sdk" tag 0.0.1
mkdir -p "$WORK/app/Sources/App"
cat > "$WORK/app/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v14)],
    dependencies: [.package(url: "file://$WORK/sdk", from: "0.0.1")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "RunAnywhere", package: "sdk")])]
)
EOF
cat > "$WORK/app/Sources/App/main.swift" <<'EOF'
import Foundation
import RunAnywhere

let root = FileManager.default.temporaryDirectory.appendingPathComponent("runanywhere-dependency-check-\(getpid())")
defer { try? FileManager.default.removeItem(at: root) }
RunAnywhere.configure(RunAnywhereConfiguration(storageRoot: root))
let models = try await RunAnywhere.models.list()
print("an app built against RunAnywhere 0.0.1 lists \(models.count) catalog models")
EOF
(cd "$WORK/app" && swift build -q && .build/debug/App)
