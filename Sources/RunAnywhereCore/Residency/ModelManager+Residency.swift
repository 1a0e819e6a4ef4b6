import Foundation

extension ModelManager {
    /// Loads a downloaded model into memory (or returns it if it is already resident with the same options).
    ///
    /// ```swift
    /// let loaded = try await RunAnywhere.models.load(id: "qwen3-0.6b", options: LoadOptions(contextLength: 4096, threads: 4))
    /// ```
    /// - Throws: `.modelNotFound`, `.modelNotDownloaded`, `.invalidConfiguration` (an option out of range or
    ///   contradicting another), `.backendUnavailable` (a required backend or GPU is not available),
    ///   `.insufficientMemory` (checked before anything is allocated), `.invalidModelFormat`.
    @discardableResult
    public func load(id: String, options: LoadOptions = LoadOptions()) async throws -> LoadedModel {
        let model = try await require(id)
        return try await residency.load(model, options: options)
    }

    /// Unloads a model, freeing its memory; the files stay on disk. Unloading a model that is not resident does nothing.
    public func unload(id: String) async throws {
        try ModelID.validate(id)
        await residency.unload(await get(id: id)?.id ?? ModelID.canonical(id))
    }

    /// Unloads every resident model, or only those of one category.
    public func unloadAll(category: ModelCategory? = nil) async throws {
        await residency.unloadAll(category: category)
    }

    /// What is resident right now (most recently used first), and how the storage stands.
    public func state() async -> ModelsState {
        let loaded = await residency.loaded()
        return ModelsState(
            loaded: loaded,
            memoryInUseBytes: loaded.reduce(0) { $0 + $1.memoryBytes },
            storageUsedBytes: await registry.downloadedBytes(),
            storageFreeBytes: FileSystem.freeBytes(at: layout.root))
    }

    /// Registers an inference backend; it is tried after the ones already registered.
    public func registerBackend(_ backend: any InferenceBackend) async {
        await residency.register(backend)
    }
}

extension ModelManager {
    /// Downloads a model and waits for its verified files; progress is visible to anyone else
    /// downloading the same id (the transfer is shared).
    package func downloadToCompletion(id: String) async throws -> ModelInfo {
        for try await event in try await download(id: id) {
            if case .completed(let model) = event { return model }
        }
        throw RunAnywhereError(.downloadFailed, "The download of '\(id)' ended without completing.", modelId: id)
    }
}
