import Foundation

/// `RunAnywhere.models`: the model catalog and its residency.
///
/// Everything about getting a model onto the device and into memory lives here.
/// ```swift
/// let language = try await RunAnywhere.models.list(filter: ModelFilter(category: .language))
/// if let model = await RunAnywhere.models.get(id: "qwen3-0.6b") { print(model.name) }
/// ```
public final class ModelManager: Sendable {
    let configuration: RunAnywhereConfiguration
    let layout: StorageLayout
    let registry: ModelRegistry
    let tokens: HFTokenStore
    let residency: ResidencyManager
    /// Runs downloads (one shared job per model).
    let downloads: DownloadCoordinator
    private let catalogError: RunAnywhereError?

    init(configuration: RunAnywhereConfiguration, layout: StorageLayout, tokens: HFTokenStore, backends: [any InferenceBackend]) {
        self.configuration = configuration
        self.layout = layout
        self.tokens = tokens
        var builtIn: [ModelInfo] = []
        var catalogError: RunAnywhereError?
        do {
            builtIn = try BuiltInCatalog.load()
        } catch let error as RunAnywhereError {
            catalogError = error
        } catch {
            catalogError = RunAnywhereError(.invalidConfiguration, "Built-in catalog: \(error)")
        }
        self.catalogError = catalogError
        let backends = BackendSet(backends)
        registry = ModelRegistry(layout: layout, builtIn: builtIn, backends: backends,
                                 served: configuration.remoteEndpoints.flatMap { e in e.models.map { Self.servedInfo($0, endpoint: e) } })
        downloads = DownloadCoordinator(layout: layout, registry: registry, tokens: tokens)
        residency = ResidencyManager(backends: backends, memoryBudget: configuration.memoryBudgetBytes,
                                     maxResident: configuration.maxResidentModels, routing: configuration.remoteRouting)
    }

    /// The storage root in use.
    public var storageRoot: URL { layout.root }

    /// Every model the registry knows (built-in catalog, registered, remote catalog, discovered on disk),
    /// optionally narrowed by `filter`.
    /// - Throws: `.invalidConfiguration` when the built-in catalog resource is missing or malformed.
    public func list(filter: ModelFilter = ModelFilter()) async throws -> [ModelInfo] {
        if let catalogError { throw catalogError }
        return await registry.all().filter(filter.matches)
    }

    /// One model by id, or nil when the id is unknown (or not a valid id).
    public func get(id: String) async -> ModelInfo? {
        guard ModelID.isValid(id) else { return nil }
        return await registry.model(id: ModelID.canonical(id))
    }

    /// The model with this id, or `.modelNotFound` (`.invalidConfiguration` for an id that cannot exist).
    func require(_ id: String) async throws -> ModelInfo {
        try ModelID.validate(id)
        guard let model = await registry.model(id: ModelID.canonical(id)) else { throw RunAnywhereError.modelNotFound(id) }
        return model
    }

    /// Removes a model's files (and any partial download) from disk, unloading it first if it is resident.
    /// A registered model stays registered, ready to be downloaded again.
    /// - Throws: `.modelNotFound` for an unknown id.
    public func delete(id: String) async throws {
        let model = try await require(id)
        try await unloadForDelete(id: model.id)
        try await registry.deleteFiles(id: model.id)
    }

    /// Reconciles the catalog against the bytes actually on disk.
    /// - Parameters:
    ///   - rescanLocal: Re-read what is on disk, rebuilding unreadable manifests from the catalog and the files.
    ///   - includeRemoteCatalog: Also fetch the remote catalog (`RunAnywhereConfiguration.remoteCatalogURL`).
    ///   - pruneOrphans: Drop registry entries with no files.
    /// - Returns: What was found and done; problems are listed there rather than thrown.
    @discardableResult
    public func refresh(rescanLocal: Bool = true, includeRemoteCatalog: Bool = false, pruneOrphans: Bool = false) async -> RefreshReport {
        var problems: [String: String] = [:]
        var remoteCount = 0
        if includeRemoteCatalog {
            if let url = configuration.remoteCatalogURL {
                do {
                    let data = try await HTTPGet.fetch(url)
                    let models = try CatalogDocument.decode(data, source: .remoteCatalog, origin: url.absoluteString)
                    try await registry.setRemote(models, raw: data)
                    remoteCount = models.count
                } catch {
                    problems["remote catalog"] = (error as? RunAnywhereError)?.message ?? ErrorWords.describe(error)
                }
            } else {
                problems["remote catalog"] = "no remoteCatalogURL is configured (RunAnywhereConfiguration.remoteCatalogURL or RUNANYWHERE_CATALOG_URL)"
            }
        }
        var recovered: [String] = []
        var pruned: [String] = []
        if rescanLocal || pruneOrphans {
            let r = await registry.rescan(pruneOrphans: pruneOrphans)
            recovered = r.recovered
            pruned = r.pruned
            problems.merge(r.problems) { a, _ in a }
        }
        let stray = rescanLocal ? await registry.removeStrayFiles() : []
        let all = await registry.all()
        problems.merge(await registry.problems()) { a, _ in a }
        var report = RefreshReport(modelCount: all.count, downloadedCount: all.filter(\.isDownloaded).count,
                                   pruned: pruned, recovered: recovered, problems: problems, remoteModels: remoteCount)
        report.removedStrayFiles = stray
        return report
    }

    // MARK: Registration

    /// Registers a model (keeping its download state when the id is already known with the same files).
    func register(_ model: ModelInfo) async throws -> ModelInfo {
        try await registry.register(model)
    }

    /// The id to give a model registered from `url` without an explicit id: the same id as an earlier
    /// registration of that URL, else the file name's stem, else (stem taken) the stem plus a URL hash.
    func derivedID(for url: URL) async -> String {
        let all = await registry.all()
        if let same = all.first(where: { $0.artifact.files.first?.url == url }) { return same.id }
        let stem = ModelID.stem(of: url)
        return all.contains(where: { $0.id == stem }) ? ModelID.hashed(from: url) : stem
    }

    /// Delete unloads first, so no mapping of the files outlives them.
    func unloadForDelete(id: String) async throws {
        await residency.unload(id)
    }
}
