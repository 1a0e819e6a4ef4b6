import Foundation

/// Everything the registry knows of one model: what the catalog says, and what is on disk.
public struct ModelInfo: Sendable, Hashable, Codable, Identifiable {
    /// Stable identifier (`qwen3-0.6b`); safe as a folder name.
    public var id: String
    /// Display name.
    public var name: String
    /// What the model does.
    public var category: ModelCategory
    /// What it is packaged for.
    public var framework: InferenceFramework
    /// The format of its main file.
    public var format: ModelFormat
    /// How it is downloaded: one file, an archive, or several files.
    public var artifact: ModelArtifact
    /// Total download size in bytes, or nil when unknown.
    public var downloadSize: Int64?
    /// SHA-256 of the main file when it is known (single-file models).
    public var sha256: String?
    /// The model's context window in tokens, when known.
    public var contextLength: Int?
    /// Memory needed to load it with its default context, when known.
    public var memoryRequirement: Int64?
    /// Quantization of the weights (`Q8_0`, `Q4_K_M`), when known.
    public var quantization: String?
    /// Architecture from the file header (`qwen3`, `llama`), once known.
    public var architecture: String?
    /// Parameter count from the file header, once known.
    public var parameterCount: Int64?
    /// A short description.
    public var summary: String?
    /// Where the registry learned of it.
    public var source: ModelSource
    /// Whether all its files are on disk and verified.
    public var isDownloaded: Bool
    /// The model's folder (downloaded models) — not persisted in manifests.
    public var localPath: URL?
    /// The file a backend loads (downloaded models); for multi-file models, the `.model` role file.
    public var primaryFilePath: URL?

    /// Creates a model description.
    public init(
        id: String, name: String, category: ModelCategory, framework: InferenceFramework,
        format: ModelFormat, artifact: ModelArtifact, downloadSize: Int64? = nil, sha256: String? = nil,
        contextLength: Int? = nil, memoryRequirement: Int64? = nil, quantization: String? = nil,
        architecture: String? = nil, parameterCount: Int64? = nil, summary: String? = nil,
        source: ModelSource, isDownloaded: Bool = false, localPath: URL? = nil, primaryFilePath: URL? = nil
    ) {
        self.id = id
        self.name = name
        self.category = category
        self.framework = framework
        self.format = format
        self.artifact = artifact
        self.downloadSize = downloadSize ?? artifact.totalSizeBytes
        self.sha256 = sha256
        self.contextLength = contextLength
        self.memoryRequirement = memoryRequirement
        self.quantization = quantization
        self.architecture = architecture
        self.parameterCount = parameterCount
        self.summary = summary
        self.source = source
        self.isDownloaded = isDownloaded
        self.localPath = localPath
        self.primaryFilePath = primaryFilePath
    }
}

/// Narrows `list(filter:)`. Every field is optional; nil means "any".
public struct ModelFilter: Sendable, Hashable, Codable {
    /// Only models of this category.
    public var category: ModelCategory?
    /// Only models packaged for this framework.
    public var framework: InferenceFramework?
    /// Only models whose files are on disk (true) or not (false).
    public var downloadedOnly: Bool?
    /// Case-insensitive match against id, name and summary.
    public var search: String?

    /// Creates a filter.
    public init(category: ModelCategory? = nil, framework: InferenceFramework? = nil, downloadedOnly: Bool? = nil, search: String? = nil) {
        self.category = category
        self.framework = framework
        self.downloadedOnly = downloadedOnly
        self.search = search
    }

    /// Whether a model passes this filter.
    public func matches(_ model: ModelInfo) -> Bool {
        if let category, model.category != category { return false }
        if let framework, model.framework != framework { return false }
        if let downloadedOnly, downloadedOnly, !model.isDownloaded { return false }
        if let search, !search.isEmpty {
            let haystack = [model.id, model.name, model.summary ?? ""].joined(separator: " ").lowercased()
            if !haystack.contains(search.lowercased()) { return false }
        }
        return true
    }
}
