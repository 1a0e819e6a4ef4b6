import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ModelManager {
    /// Finds GGUF model files other tools keep on this machine: the Hugging Face cache (`$HF_HUB_CACHE`, else
    /// `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`) and Ollama's store
    /// (`$OLLAMA_MODELS`, else `~/.ollama/models`), read from ``RunAnywhereConfiguration/environment``.
    ///
    /// Reads folders, manifests and the first bytes of each file; makes no network request and changes nothing.
    /// Entries that are broken (a dangling link, a link loop, a manifest with a bad digest, a blob that is not GGUF or
    /// not the size its manifest says) are listed in ``LocalDiscovery/skipped`` with the reason.
    ///
    /// ```swift
    /// for found in await RunAnywhere.models.discoverLocal().models where found.importedAs == nil {
    ///     let imported = try await RunAnywhere.models.importLocal(found)
    ///     print(imported.model.id, imported.placement)
    /// }
    /// ```
    public func discoverLocal() async -> LocalDiscovery {
        let environment = configuration.environment
        let hub = HuggingFaceCacheScanner.hubDirectory(environment: environment)
        let ollama = OllamaStoreScanner.modelsDirectory(environment: environment)
        let scans = (try? await BlockingWork.run(name: "runanywhere-discover") { _ in
            [HuggingFaceCacheScanner.scan(hub), OllamaStoreScanner.scan(ollama)]
        }) ?? []
        let searched = [LocalDiscovery.SearchedStore(source: .huggingFace, path: hub, exists: LocalStoreScan.kind(hub) != nil),
                        LocalDiscovery.SearchedStore(source: .ollama, path: ollama, exists: LocalStoreScan.kind(ollama) != nil)]
        let registered = await registry.all()
        var found: [DiscoveredModel] = []
        var seenFiles = Set<[UInt64]>()
        var usedIds = Set(registered.map(\.id))
        for candidate in scans.flatMap(\.candidates) where seenFiles.insert([candidate.file.device, candidate.file.inode]).inserted {
            let importedAs = registered.first { m in
                guard let primary = m.primaryFilePath else { return false }
                return Self.placement(of: primary.path, relativeTo: candidate.file, model: m) != nil
            }?.id
            let catalog = importedAs == nil ? Self.catalogMatch(for: candidate, in: registered) : nil
            let suggested = importedAs ?? catalog?.id ?? Self.freeId(for: candidate, avoiding: usedIds)
            usedIds.insert(suggested)
            found.append(DiscoveredModel(source: candidate.source, path: URL(fileURLWithPath: candidate.file.path),
                                         referencePath: candidate.referencePath, name: candidate.name, fileName: candidate.fileName,
                                         sizeBytes: candidate.file.size, suggestedId: suggested, catalogModelId: catalog?.id,
                                         claimedSHA256: candidate.claimedSHA256, importedAs: importedAs))
        }
        return LocalDiscovery(models: found, skipped: scans.flatMap(\.skipped), searched: searched)
    }

    /// Imports a file found by ``discoverLocal()``, by hard link when it is on the storage root's file system, else
    /// by symbolic link — never copying the bytes — after checking its GGUF header and that its SHA-256 is the one its
    /// store records (the Hugging Face blob name, the Ollama digest).
    ///
    /// With ``DiscoveredModel/catalogModelId`` set and `id` nil (or that id), the file becomes that catalog model's
    /// download, only when its SHA-256 equals the catalog's; otherwise it fails with `.checksumMismatch` and nothing
    /// changes.
    ///
    /// Why a hard link first: the model keeps working when the other tool deletes or garbage-collects its copy, and
    /// deleting the model here removes only this name. A symbolic link (another file system) costs nothing either, but
    /// the model shows as not downloaded once the other tool removes its file.
    /// - Parameters:
    ///   - found: What ``discoverLocal()`` returned.
    ///   - id: The model id (default: ``DiscoveredModel/suggestedId``).
    ///   - placements: How the file may be placed, tried in order.
    ///   - onProgress: Called while the bytes are read to hash them.
    /// - Throws: As ``importLocal(file:id:name:placements:onProgress:)``; `.checksumMismatch` when the bytes are not what
    ///   the store or the catalog says; `.invalidConfiguration` when the file changed since it was found.
    public func importLocal(_ found: DiscoveredModel, id: String? = nil, placements: [LocalImport.Placement] = [.hardLink, .symlink],
                            onProgress: (@Sendable (LocalImportProgress) -> Void)? = nil) async throws -> LocalImport {
        let source = try LocalSourceFile.resolve(found.path)
        guard source.size == found.sizeBytes else {
            throw RunAnywhereError(.invalidConfiguration,
                "\(found.path.path) changed since it was found (\(source.size) bytes, was \(found.sizeBytes)); discover again.")
        }
        try source.checkGGUFMagic()
        var expected: [ExpectedDigest] = []
        let storeName = found.source == .huggingFace ? "the Hugging Face cache's blob name" : "Ollama's manifest digest"
        if let claimed = found.claimedSHA256 { expected.append(ExpectedDigest(sha256: claimed, authority: storeName)) }
        if let catalogId = found.catalogModelId, id == nil || id == catalogId,
           var entry = await registry.model(id: catalogId), case .singleFile(let file) = entry.artifact {
            guard let sha = file.sha256 ?? entry.sha256 else {
                throw RunAnywhereError(.checksumMismatch, "The catalog knows no SHA-256 for '\(catalogId)', so \(found.name) cannot be checked against it; import it under its own id.", modelId: catalogId)
            }
            expected.append(ExpectedDigest(sha256: sha, authority: "the catalog entry of '\(catalogId)'"))
            entry.localPath = nil
            entry.primaryFilePath = nil
            return try await importFile(source, as: entry, expecting: expected, placements: placements, onProgress: onProgress)
        }
        let modelId = id ?? found.suggestedId
        try ModelID.validate(modelId)
        let storeText = found.source == .huggingFace ? "the Hugging Face cache" : "Ollama's store"
        let descriptor = ModelFileDescriptor(url: URL(fileURLWithPath: source.path), fileName: Self.storedFileName(found.fileName, id: modelId),
                                             sizeBytes: source.size)
        let model = ModelInfo(id: modelId, name: found.name, category: .language, framework: .llamaCpp, format: .gguf,
                              artifact: .singleFile(descriptor), summary: "Imported from \(storeText): \(found.name).", source: .imported)
        return try await importFile(source, as: model, expecting: expected, placements: placements, onProgress: onProgress)
    }

    /// The catalog model (not downloaded, one GGUF file, its SHA-256 known) that `candidate` appears to be: the same
    /// recorded SHA-256, or — when the store records none — the same file name and size. The import then checks the
    /// bytes against the catalog's SHA-256; a catalog entry without one is never matched (nothing to check against).
    static func catalogMatch(for candidate: LocalStoreCandidate, in models: [ModelInfo]) -> ModelInfo? {
        models.first { m in
            guard m.source != .imported, m.source != .discovered, !m.isDownloaded, m.format == .gguf,
                  case .singleFile(let file) = m.artifact, let sha = file.sha256 ?? m.sha256,
                  file.sizeBytes == nil || file.sizeBytes == candidate.file.size else { return false }
            if let claimed = candidate.claimedSHA256 { return claimed == sha }
            return (file.fileName as NSString).lastPathComponent == candidate.fileName
        }
    }

    /// The candidate's own id when free, else with its store's name, else with 8 hex digits of its hash or path.
    static func freeId(for candidate: LocalStoreCandidate, avoiding used: Set<String>) -> String {
        let base = candidate.baseId
        if ModelID.isValid(base), !used.contains(base) { return base }
        let tagged = "\(base)-\(candidate.source == .huggingFace ? "hf" : "ollama")"
        if ModelID.isValid(tagged), !used.contains(tagged) { return tagged }
        let hash = candidate.claimedSHA256 ?? SHA256Hasher.hexDigest(of: Array(candidate.file.path.utf8))
        return "\(base)-\(hash.prefix(8))"
    }
}
