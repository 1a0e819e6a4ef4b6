import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the registry persists for one model, beside its files.
///
/// Holds no secrets and no absolute paths, so a storage root can be moved or copied.
struct ModelManifest: Codable, Sendable, Hashable {
    /// One verified file of a downloaded model.
    struct FileRecord: Codable, Sendable, Hashable {
        /// Path relative to the model folder.
        var relativePath: String
        /// Size in bytes.
        var sizeBytes: Int64
        /// SHA-256 when it was verified or computed.
        var sha256: String?
    }

    static let currentSchema = 1

    var schemaVersion: Int = currentSchema
    var model: ModelInfo
    var files: [FileRecord]
    var downloadedAt: Date?

    init(model: ModelInfo, files: [FileRecord] = [], downloadedAt: Date? = nil) {
        var stored = model
        stored.localPath = nil
        stored.primaryFilePath = nil
        self.model = stored
        self.files = files
        self.downloadedAt = downloadedAt
    }

    static func decode(from data: Data) throws -> ModelManifest {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let manifest = try decoder.decode(ModelManifest.self, from: data)
        guard manifest.schemaVersion <= currentSchema else {
            throw RunAnywhereError(.invalidConfiguration, "manifest schema \(manifest.schemaVersion) is newer than this SDK understands (\(currentSchema))")
        }
        return manifest
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }
}
