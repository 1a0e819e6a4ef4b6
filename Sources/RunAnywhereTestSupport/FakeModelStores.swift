import Foundation
import RunAnywhere

/// A Hugging Face cache and an Ollama store laid out on disk as those tools lay them out, for discovery and import tests.
///
/// ```
/// <hf>/hub/models--ORG--NAME/blobs/<sha256>
/// <hf>/hub/models--ORG--NAME/snapshots/<rev>/<file>.gguf -> ../../blobs/<sha256>
/// <hf>/hub/models--ORG--NAME/refs/main                    (the revision)
/// <ollama>/blobs/sha256-<hex>
/// <ollama>/manifests/registry.ollama.ai/<namespace>/<model>/<tag>   (JSON naming the blobs)
/// ```
public struct FakeModelStores: Sendable {
    /// `HF_HOME` (the cache is its `hub` folder).
    public let huggingFaceHome: URL
    /// `OLLAMA_MODELS`.
    public let ollamaModels: URL

    /// Stores under `base` (`base/hf`, `base/ollama`), created empty.
    public init(base: URL) throws {
        huggingFaceHome = base.appendingPathComponent("hf", isDirectory: true)
        ollamaModels = base.appendingPathComponent("ollama", isDirectory: true)
        for dir in [huggingFaceHome.appendingPathComponent("hub"), ollamaModels.appendingPathComponent("blobs"), ollamaModels.appendingPathComponent("manifests")] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
    }

    /// The environment that points the SDK at these stores (and HOME at `home`, so nothing real is found).
    public func environment(home: URL) -> [String: String] {
        ["HOME": home.path, "HF_HOME": huggingFaceHome.path, "OLLAMA_MODELS": ollamaModels.path]
    }

    /// SHA-256 of bytes, hex.
    public static func sha256(_ data: Data) -> String { SHA256Hasher.hexDigest(of: Array(data)) }

    /// The folder of a repository in the cache.
    public func repositoryFolder(_ repository: String) -> URL {
        huggingFaceHome.appendingPathComponent("hub/models--" + repository.replacingOccurrences(of: "/", with: "--"), isDirectory: true)
    }

    /// Stores `data` as a blob of `repository` (named `blobName`, by default its SHA-256) and links
    /// `snapshots/<revision>/<file>` to it; `refs/main` names the revision. Returns the snapshot path.
    @discardableResult
    public func addHuggingFace(repository: String, file: String, data: Data, revision: String = "0123456789abcdef0123456789abcdef01234567",
                               blobName: String? = nil) throws -> URL {
        let repo = repositoryFolder(repository)
        let blob = blobName ?? Self.sha256(data)
        let fm = FileManager.default
        try fm.createDirectory(at: repo.appendingPathComponent("blobs"), withIntermediateDirectories: true)
        try data.write(to: repo.appendingPathComponent("blobs/\(blob)"))
        let snapshot = repo.appendingPathComponent("snapshots/\(revision)/\(file)")
        try fm.createDirectory(at: snapshot.deletingLastPathComponent(), withIntermediateDirectories: true)
        let depth = file.split(separator: "/").count + 1  // up through <file's folders>, <revision>, snapshots
        try fm.createSymbolicLink(atPath: snapshot.path, withDestinationPath: String(repeating: "../", count: depth) + "blobs/\(blob)")
        try fm.createDirectory(at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
        try Data(revision.utf8).write(to: repo.appendingPathComponent("refs/main"))
        return snapshot
    }

    /// Stores `data` as a blob and writes the manifest of `model:tag` naming it as the model layer (with a config and
    /// a licence layer beside it, as Ollama writes them). `digest` and `size` override what the manifest says.
    /// Returns the manifest's path.
    @discardableResult
    public func addOllama(model: String, tag: String = "latest", namespace: String = "library", data: Data?,
                          digest: String? = nil, size: Int64? = nil) throws -> URL {
        let hex = data.map(Self.sha256) ?? String(repeating: "0", count: 64)
        if let data { try data.write(to: ollamaModels.appendingPathComponent("blobs/sha256-\(hex)")) }
        let config = Data(#"{"model_format":"gguf","model_family":"llama"}"#.utf8)
        let configHex = Self.sha256(config)
        try config.write(to: ollamaModels.appendingPathComponent("blobs/sha256-\(configHex)"))
        let json: [String: Any] = [
            "schemaVersion": 2,
            "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
            "config": ["mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:\(configHex)", "size": config.count],
            "layers": [
                ["mediaType": "application/vnd.ollama.image.model", "digest": digest ?? "sha256:\(hex)", "size": size ?? Int64(data?.count ?? 0)],
                ["mediaType": "application/vnd.ollama.image.license", "digest": "sha256:\(configHex)", "size": config.count],
            ],
        ]
        return try writeOllamaManifest(model: model, tag: tag, namespace: namespace,
                                       contents: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
    }

    /// Writes raw bytes as the manifest of `model:tag`.
    @discardableResult
    public func writeOllamaManifest(model: String, tag: String, namespace: String = "library", contents: Data) throws -> URL {
        let url = ollamaModels.appendingPathComponent("manifests/registry.ollama.ai/\(namespace)/\(model)/\(tag)")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try contents.write(to: url)
        return url
    }
}
