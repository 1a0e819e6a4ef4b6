import Foundation
import RunAnywhereTestSupport
import Testing

/// Locates the shared test data (`RUNANYWHERE_TESTDATA`); tests using it are skipped when unset.
enum TestData {
    /// The test-data root, or nil when `RUNANYWHERE_TESTDATA` is unset or does not exist.
    static let root = SharedTestData.root

    /// Whether the shared models are available.
    static var isAvailable: Bool { root != nil }

    /// Why tests that need the shared models are skipped.
    static let skipReason = Comment(rawValue: SharedTestData.missingReason)

    /// Path of a model in `models/`.
    static func model(_ file: String) -> String { (root ?? "/nonexistent") + "/models/" + file }
}
