import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds GGUF models in Ollama's store: `manifests/<registry>/<namespace>/<model>/<tag>` is an OCI-style JSON manifest
/// whose layer of media type `application/vnd.ollama.image.model` names the weights by digest `sha256:<hex>`, stored
/// as `blobs/sha256-<hex>`, a GGUF file.
enum OllamaStoreScanner {
    /// `$OLLAMA_MODELS`, else `~/.ollama/models`.
    static func modelsDirectory(environment: [String: String]) -> URL {
        if let dir = environment["OLLAMA_MODELS"], !dir.isEmpty { return URL(fileURLWithPath: dir, isDirectory: true) }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".ollama/models", isDirectory: true)
    }

    static let modelMediaType = "application/vnd.ollama.image.model"
    static let defaultRegistry = "registry.ollama.ai"
    /// Manifests are a few hundred bytes; anything over this is not one.
    static let manifestSizeLimit: Int64 = 1 << 20

    private struct Manifest: Decodable {
        struct Layer: Decodable {
            var mediaType: String
            var digest: String
            var size: Int64?
        }
        var layers: [Layer]
    }

    /// Every manifest's model layer that is a GGUF blob.
    static func scan(_ root: URL) -> LocalStoreScan {
        var scan = LocalStoreScan()
        var budget = LocalStoreScan.entryLimit
        let manifests = root.appendingPathComponent("manifests", isDirectory: true)
        func folders(_ dir: URL) -> [String] {
            let names = LocalStoreScan.names(in: dir)
            budget -= names.count
            return budget > 0 ? names.filter { LocalStoreScan.kind(dir.appendingPathComponent($0)) == S_IFDIR } : []
        }
        for host in folders(manifests) {
            let hostDir = manifests.appendingPathComponent(host, isDirectory: true)
            for namespace in folders(hostDir) {
                let namespaceDir = hostDir.appendingPathComponent(namespace, isDirectory: true)
                for model in folders(namespaceDir) {
                    let modelDir = namespaceDir.appendingPathComponent(model, isDirectory: true)
                    for tag in LocalStoreScan.names(in: modelDir) {
                        let name = displayName(host: host, namespace: namespace, model: model, tag: tag)
                        if let candidate = candidate(manifest: modelDir.appendingPathComponent(tag), name: name, root: root, scan: &scan) {
                            scan.candidates.append(candidate)
                        }
                    }
                }
            }
        }
        if budget <= 0 {
            scan.skipped.append(.init(source: .ollama, path: manifests, reason: "more than \(LocalStoreScan.entryLimit) entries; the rest was not searched"))
        }
        return scan
    }

    /// `llama3.2:1b` for the default registry's `library` namespace, else `namespace/model:tag` or `host/namespace/model:tag`.
    static func displayName(host: String, namespace: String, model: String, tag: String) -> String {
        let short = "\(model):\(tag)"
        if host == defaultRegistry { return namespace == "library" ? short : "\(namespace)/\(short)" }
        return "\(host)/\(namespace)/\(short)"
    }

    private static func candidate(manifest url: URL, name: String, root: URL, scan: inout LocalStoreScan) -> LocalStoreCandidate? {
        func skip(_ reason: String) -> LocalStoreCandidate? {
            scan.skipped.append(.init(source: .ollama, path: url, reason: reason))
            return nil
        }
        guard LocalStoreScan.kind(url) == S_IFREG else { return skip("the manifest is not a regular file") }
        guard let size = FileSystem.fileSize(url), size <= manifestSizeLimit else { return skip("the manifest is larger than 1 MiB, so not a manifest") }
        guard let data = try? Data(contentsOf: url), let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else {
            return skip("the manifest is not the JSON Ollama writes (no layers list)")
        }
        guard let layer = manifest.layers.first(where: { $0.mediaType == modelMediaType }) else {
            return skip("the manifest has no model layer (\(modelMediaType))")
        }
        let parts = layer.digest.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0] == "sha256", LocalStoreScan.isSHA256(parts[1]) else {
            return skip("the model layer's digest '\(layer.digest.prefix(100))' is not sha256: and 64 hex digits")
        }
        let hex = String(parts[1])
        let blob = root.appendingPathComponent("blobs", isDirectory: true).appendingPathComponent("sha256-\(hex)")
        guard let file = scan.checkedGGUF(blob, source: .ollama, reportAs: url) else { return nil }
        if let declared = layer.size, declared != file.size {
            return skip("the manifest says the model is \(declared) bytes but its blob holds \(file.size) (incomplete or altered)")
        }
        let (model, tag) = (url.deletingLastPathComponent().lastPathComponent, url.lastPathComponent)
        let base = ModelID.stem(of: URL(fileURLWithPath: "/" + (tag == "latest" ? model : "\(model)-\(tag)")))
        return LocalStoreCandidate(source: .ollama, file: file, referencePath: url, name: name, fileName: "\(base).gguf", baseId: base,
                                   claimedSHA256: hex)
    }
}
