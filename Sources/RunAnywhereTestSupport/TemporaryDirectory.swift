import Foundation

/// A fresh directory under the system temporary folder, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    /// The directory's URL.
    public let url: URL

    /// Creates a new, empty, uniquely named directory.
    public init(prefix: String = "runanywhere-test") throws {
        let base = FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The directory's path.
    public var path: String { url.path }

    /// Deletes the directory and everything below it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
