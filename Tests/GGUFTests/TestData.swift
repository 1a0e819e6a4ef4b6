import Foundation
import Testing

/// Locates the shared test data (`RUNANYWHERE_TESTDATA`); tests using it are skipped when unset.
enum TestData {
    /// The test-data root, or nil when `RUNANYWHERE_TESTDATA` is unset or does not exist.
    static let root: String? = {
        guard let path = ProcessInfo.processInfo.environment["RUNANYWHERE_TESTDATA"], !path.isEmpty,
              FileManager.default.fileExists(atPath: path + "/models") else { return nil }
        return path
    }()

    /// Whether the shared models are available.
    static var isAvailable: Bool { root != nil }

    /// Why tests that need the shared models are skipped.
    static let skipReason: Comment = "RUNANYWHERE_TESTDATA is not set (export RUNANYWHERE_TESTDATA=/path/to/shared/testdata)"

    /// Path of a model in `models/`.
    static func model(_ file: String) -> String { (root ?? "/nonexistent") + "/models/" + file }
}
