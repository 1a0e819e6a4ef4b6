import Foundation
import RunAnywhere

/// The `--json` shape of a model in `models list`, `models info` and `models register`: flat fields, plain
/// paths, the files as a list. Scripts can rely on it (README, "The CLI"); it does not follow the SDK's
/// Codable form, which serves the manifests.
struct ModelJSON: Encodable {
    /// One file of the model.
    struct File: Encodable {
        var url: String
        var fileName: String
        var sizeBytes: Int64?
        var sha256: String?
        var role: String
    }

    /// How an archive unpacks.
    struct Archive: Encodable {
        var format: String?
        var rootDirectory: String?
        var expectedFiles: [String]
        var primaryFile: String?
    }

    var id: String
    var name: String
    var category: String
    var framework: String
    var format: String
    var source: String
    var isDownloaded: Bool
    var downloadSize: Int64?
    var sha256: String?
    var contextLength: Int?
    var memoryRequirement: Int64?
    var quantization: String?
    var architecture: String?
    var parameterCount: Int64?
    var summary: String?
    /// The model's folder, a plain path, when downloaded.
    var localPath: String?
    /// The main file, a plain path, when downloaded.
    var primaryFilePath: String?
    /// `singleFile`, `archive` or `multiFile`.
    var packaging: String
    var files: [File]
    var archive: Archive?
    /// Bytes of an interrupted download on disk (models info only, when there are any).
    var partialBytes: Int64?

    init(_ m: ModelInfo, partialBytes: Int64? = nil) {
        id = m.id
        name = m.name
        category = m.category.rawValue
        framework = m.framework.rawValue
        format = m.format.rawValue
        source = m.source.rawValue
        isDownloaded = m.isDownloaded
        downloadSize = m.downloadSize
        sha256 = m.sha256
        contextLength = m.contextLength
        memoryRequirement = m.memoryRequirement
        quantization = m.quantization
        architecture = m.architecture
        parameterCount = m.parameterCount
        summary = m.summary
        localPath = m.localPath?.path
        primaryFilePath = m.primaryFilePath?.path
        files = m.artifact.files.map { File(url: $0.url.absoluteString, fileName: $0.fileName, sizeBytes: $0.sizeBytes, sha256: $0.sha256, role: $0.role.rawValue) }
        switch m.artifact {
        case .singleFile: packaging = "singleFile"
        case .multiFile: packaging = "multiFile"
        case .archive(_, let s):
            packaging = "archive"
            archive = Archive(format: s.format?.rawValue, rootDirectory: s.rootDirectory, expectedFiles: s.expectedFiles, primaryFile: s.primaryFile)
        }
        self.partialBytes = partialBytes
    }
}
