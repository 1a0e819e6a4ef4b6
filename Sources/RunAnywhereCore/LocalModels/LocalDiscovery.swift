import Foundation

/// A GGUF model file another tool keeps on this machine, found by ``ModelManager/discoverLocal()``.
public struct DiscoveredModel: Sendable, Hashable, Codable {
    /// The tool whose store holds the file.
    public enum Source: String, Sendable, Hashable, Codable, CaseIterable {
        /// The Hugging Face cache (`huggingface_hub`, `transformers`, `llama.cpp -hf`, LM Studio's HF downloads…).
        case huggingFace
        /// Ollama's model store.
        case ollama
    }

    /// The tool whose store holds the file.
    public var source: Source
    /// The file holding the bytes, symbolic links resolved (a Hugging Face blob, an Ollama blob).
    public var path: URL
    /// The path the tool shows: the Hugging Face snapshot file, or the Ollama manifest.
    public var referencePath: URL
    /// What the tool calls it: `Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf`, `llama3.2:1b`.
    public var name: String
    /// The file name it gets in the model folder.
    public var fileName: String
    /// Size in bytes.
    public var sizeBytes: Int64
    /// A free model id to import it under.
    public var suggestedId: String
    /// A catalog model this file appears to be (the SHA-256 its store records is the catalog's, or the same file name
    /// and size). Importing it under that id checks the bytes against the catalog's SHA-256 before the catalog model
    /// counts as downloaded; a catalog entry without a SHA-256 is never matched.
    public var catalogModelId: String?
    /// The SHA-256 the tool records for the bytes (the blob's name or digest), checked when the file is imported.
    public var claimedSHA256: String?
    /// The id of the model already imported from this file, if any.
    public var importedAs: String?

    /// Creates a description of a discovered file.
    public init(source: Source, path: URL, referencePath: URL, name: String, fileName: String, sizeBytes: Int64,
                suggestedId: String, catalogModelId: String? = nil, claimedSHA256: String? = nil, importedAs: String? = nil) {
        self.source = source
        self.path = path
        self.referencePath = referencePath
        self.name = name
        self.fileName = fileName
        self.sizeBytes = sizeBytes
        self.suggestedId = suggestedId
        self.catalogModelId = catalogModelId
        self.claimedSHA256 = claimedSHA256
        self.importedAs = importedAs
    }
}

/// What ``ModelManager/discoverLocal()`` found: the GGUF files, the places looked at, and what was passed over and why.
public struct LocalDiscovery: Sendable, Hashable, Codable {
    /// A store that was looked at.
    public struct SearchedStore: Sendable, Hashable, Codable {
        /// The tool.
        public var source: DiscoveredModel.Source
        /// The folder looked at (`…/huggingface/hub`, `~/.ollama/models`).
        public var path: URL
        /// Whether the folder exists.
        public var exists: Bool

        /// Creates a searched-store entry.
        public init(source: DiscoveredModel.Source, path: URL, exists: Bool) {
            self.source = source
            self.path = path
            self.exists = exists
        }
    }

    /// An entry passed over, with the reason.
    public struct Skipped: Sendable, Hashable, Codable {
        /// The tool.
        public var source: DiscoveredModel.Source
        /// The file or manifest concerned.
        public var path: URL
        /// Why it was passed over, a sentence.
        public var reason: String

        /// Creates a skipped entry.
        public init(source: DiscoveredModel.Source, path: URL, reason: String) {
            self.source = source
            self.path = path
            self.reason = reason
        }
    }

    /// The GGUF files found, Hugging Face first, each once (two names for one file are listed once).
    public var models: [DiscoveredModel]
    /// Entries passed over and why (broken links, bad manifests, files that are not GGUF…).
    public var skipped: [Skipped]
    /// The stores looked at.
    public var searched: [SearchedStore]

    /// Creates a discovery result.
    public init(models: [DiscoveredModel], skipped: [Skipped], searched: [SearchedStore]) {
        self.models = models
        self.skipped = skipped
        self.searched = searched
    }
}
