import Foundation

/// The JSON form of a catalog, shared by the built-in catalog and remote catalogs.
///
/// ```json
/// {"version": 1, "models": [{"id": "qwen3-0.6b", "name": "Qwen3 0.6B", "category": "language",
///   "framework": "llamaCpp", "format": "gguf", "quantization": "Q8_0", "contextLength": 40960,
///   "files": [{"url": "https://huggingface.co/…/Qwen3-0.6B-Q8_0.gguf", "sizeBytes": null, "sha256": null}]}]}
/// ```
/// `archive` (an ``ArchiveStructure``) makes the single file an archive; several `files` make a multi-file model.
struct CatalogDocument: Codable, Sendable {
    struct Entry: Codable, Sendable {
        var id: String
        var name: String
        var category: ModelCategory
        var framework: InferenceFramework
        var format: ModelFormat?
        var quantization: String?
        var contextLength: Int?
        var memoryRequirement: Int64?
        var parameterCount: Int64?
        var architecture: String?
        var summary: String?
        var files: [ModelFileDescriptor]
        var archive: ArchiveStructure?
    }

    var version: Int
    var models: [Entry]

    /// The models of a catalog document; `origin` (a URL or file) names it in errors.
    static func decode(_ data: Data, source: ModelSource, origin: String) throws -> [ModelInfo] {
        let doc: CatalogDocument
        do {
            doc = try JSONDecoder().decode(CatalogDocument.self, from: data)
        } catch {
            throw RunAnywhereError(.invalidConfiguration, "The catalog \(origin) is not a valid catalog: \(ErrorWords.describe(error)).")
        }
        guard doc.version == 1 else {
            throw RunAnywhereError(.invalidConfiguration, "The catalog \(origin) has version \(doc.version), which this SDK does not read (it reads 1).")
        }
        var seen = Set<String>()
        return try doc.models.map { e in
            try ModelID.validate(e.id)
            guard seen.insert(e.id).inserted else {
                throw RunAnywhereError(.invalidConfiguration, "The catalog \(origin) lists id '\(e.id)' twice.")
            }
            guard !e.files.isEmpty else {
                throw RunAnywhereError(.invalidConfiguration, "The catalog \(origin): entry '\(e.id)' has no files.")
            }
            for f in e.files { try ModelRegistry.validate(f) }
            let artifact: ModelArtifact
            if let archive = e.archive {
                guard e.files.count == 1 else {
                    throw RunAnywhereError(.invalidConfiguration, "The catalog \(origin): entry '\(e.id)' is an archive but lists \(e.files.count) files.")
                }
                artifact = .archive(e.files[0], structure: archive)
            } else if e.files.count == 1 {
                artifact = .singleFile(e.files[0])
            } else {
                artifact = .multiFile(e.files)
            }
            let main = e.files.first { $0.role == .model } ?? e.files[0]
            return ModelInfo(
                id: e.id, name: e.name, category: e.category, framework: e.framework,
                format: e.format ?? ModelFormat(fileName: main.fileName), artifact: artifact,
                sha256: e.files.count == 1 ? e.files[0].sha256 : nil,
                contextLength: e.contextLength, memoryRequirement: e.memoryRequirement,
                quantization: e.quantization, architecture: e.architecture, parameterCount: e.parameterCount,
                summary: e.summary, source: source)
        }
    }
}

/// The curated catalog shipped with the SDK (`Catalog/catalog.json`, a bundled resource).
enum BuiltInCatalog {
    /// The catalog's models, or an error naming where the resource was looked for.
    static func load() throws -> [ModelInfo] {
        // SwiftPM names the resource bundle <package>_<target>: the catalog is a resource of RunAnywhereCore.
        let name = "RunAnywhere_RunAnywhereCore.resources"
        var candidates: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(Bundle.main.bundleURL.appendingPathComponent(name))
        if let r = Bundle.main.resourceURL { candidates.append(r.appendingPathComponent(name)) }
        #if os(macOS) || os(iOS)
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("RunAnywhere_RunAnywhereCore.bundle"))
        #endif
        for dir in candidates {
            let file = dir.appendingPathComponent("catalog.json")
            if let data = try? Data(contentsOf: file) {
                return try CatalogDocument.decode(data, source: .builtIn, origin: file.path)
            }
        }
        throw RunAnywhereError(.invalidConfiguration,
            "The built-in catalog resource (\(name)/catalog.json) was not found next to the executable; keep the resources folder beside the binary. Looked in: \(candidates.map(\.path).joined(separator: ", ")).")
    }
}
