import Foundation

/// What `refresh` found and did.
public struct RefreshReport: Sendable, Hashable {
    /// Models known after the refresh.
    public var modelCount: Int
    /// Models whose files are on disk and verified.
    public var downloadedCount: Int
    /// Ids whose entries were dropped by `pruneOrphans`.
    public var pruned: [String]
    /// Ids whose manifests were rebuilt from the catalog and the files on disk.
    public var recovered: [String]
    /// Problems found, by path or id, each a sentence. Nothing here stopped the rest of the refresh.
    public var problems: [String: String]
    /// Models merged from the remote catalog.
    public var remoteModels: Int
    /// Files removed from model folders because no manifest lists them (left by an earlier registration of the
    /// id with other files), as paths under the storage root.
    public var removedStrayFiles: [String] = []
}

/// The registry: the catalog (built-in, remote) joined with what is on disk.
///
/// The files on disk are the truth: every read re-checks the manifests (cached by modification time),
/// so two registries on one root — two processes — see each other's changes.
actor ModelRegistry {
    let layout: StorageLayout
    private let builtIn: [ModelInfo]
    private var remote: [ModelInfo] = []
    /// Models that exist only on a remote endpoint (configured or registered in this process; never written to disk).
    private var served: [ModelInfo] = []
    private var cache: [String: (mtime: timespec, size: Int64, manifest: ModelManifest)] = [:]
    private var lastProblems: [String: String] = [:]

    /// Inspects downloaded files (``InferenceBackend/inspect(_:)``).
    let backends: BackendSet

    init(layout: StorageLayout, builtIn: [ModelInfo], backends: BackendSet, served: [ModelInfo] = []) {
        self.backends = backends
        self.served = served
        self.layout = layout
        self.builtIn = builtIn
        if let data = try? Data(contentsOf: layout.remoteCatalogCache),
           let models = try? CatalogDocument.decode(data, source: .remoteCatalog, origin: layout.remoteCatalogCache.path) {
            remote = models
        }
    }

    // MARK: Reading

    /// Every model, with download state from disk.
    func all() -> [ModelInfo] {
        let local = scanManifests()
        var byId: [String: ModelInfo] = [:]
        var order: [String] = []
        func add(_ m: ModelInfo) {
            if byId[m.id] == nil { order.append(m.id) }
            byId[m.id] = m
        }
        for m in builtIn { add(m) }
        for m in remote where !builtIn.contains(where: { $0.id == m.id }) { add(m) }
        for (_, entry) in local.sorted(by: { $0.key < $1.key }) { add(entry) }
        for m in served where byId[m.id] == nil { add(m) }
        return order.compactMap { byId[$0] }
    }

    /// Adds (or replaces) models that exist only on a remote endpoint. An id the catalog or the disk already has
    /// is not listed twice: the endpoint then serves that model (``RemoteEndpoint/models``).
    func setServed(_ models: [ModelInfo]) {
        for m in models {
            served.removeAll { $0.id == m.id }
            served.append(m)
        }
    }

    /// The model with this id, compared without case (an id stored before ids were lower-cased is still found).
    func model(id: String) -> ModelInfo? {
        let wanted = ModelID.canonical(id)
        return all().first { ModelID.canonical($0.id) == wanted }
    }

    func problems() -> [String: String] { lastProblems }

    /// Reads every `models/<framework>/<id>/manifest.json`, returning the models keyed by id.
    private func scanManifests() -> [String: ModelInfo] {
        var result: [String: ModelInfo] = [:]
        var problems: [String: String] = [:]
        let fm = FileManager.default
        for framework in InferenceFramework.allCases {
            let frameworkDir = layout.modelsDirectory.appendingPathComponent(framework.rawValue, isDirectory: true)
            guard let ids = try? fm.contentsOfDirectory(atPath: frameworkDir.path) else { continue }
            for id in ids.sorted() where ModelID.isValid(id) {
                let dir = frameworkDir.appendingPathComponent(id, isDirectory: true)
                let manifestURL = dir.appendingPathComponent("manifest.json")
                guard fm.fileExists(atPath: manifestURL.path) else { continue }
                do {
                    let manifest = try readManifest(manifestURL)
                    guard manifest.model.id == id, manifest.model.framework == framework else {
                        problems[id] = "manifest at \(manifestURL.path) names model '\(manifest.model.id)' (\(manifest.model.framework.rawValue)); ignored"
                        continue
                    }
                    if result[id] != nil {
                        problems[id] = "model '\(id)' exists under two frameworks; using the first"
                        continue
                    }
                    result[id] = resolve(manifest, dir: dir)
                } catch {
                    problems[id] = "manifest of '\(id)' is unreadable (\(error)); run refresh(rescanLocal: true) to rebuild it"
                }
            }
        }
        lastProblems = problems
        return result
    }

    func readManifest(_ url: URL) throws -> ModelManifest {
        var st = stat()
        guard stat(url.path, &st) == 0 else { throw FileSystem.storageError("read \(url.path)") }
        if let hit = cache[url.path], hit.mtime.tv_sec == st.st_mtim.tv_sec, hit.mtime.tv_nsec == st.st_mtim.tv_nsec, hit.size == Int64(st.st_size) {
            return hit.manifest
        }
        let data = try Data(contentsOf: url)
        let manifest = try ModelManifest.decode(from: data)
        cache[url.path] = (st.st_mtim, Int64(st.st_size), manifest)
        return manifest
    }

    /// A manifest's model with the truth from disk: downloaded only if every recorded file is there at its size.
    private func resolve(_ manifest: ModelManifest, dir: URL) -> ModelInfo {
        var model = manifest.model
        let filesPresent = !manifest.files.isEmpty && manifest.files.allSatisfy { record in
            FileSystem.fileSize(dir.appendingPathComponent(record.relativePath)) == record.sizeBytes
        }
        model.isDownloaded = model.isDownloaded && filesPresent
        if model.isDownloaded {
            model.localPath = dir
            model.primaryFilePath = Self.primaryFile(of: model, records: manifest.files).map { dir.appendingPathComponent($0) }
        } else {
            model.localPath = nil
            model.primaryFilePath = nil
        }
        return model
    }

    /// The file a backend loads first.
    static func primaryFile(of model: ModelInfo, records: [ModelManifest.FileRecord]) -> String? {
        switch model.artifact {
        case .singleFile(let f): return f.fileName
        case .multiFile(let fs): return (fs.first { $0.role == .model } ?? fs.first)?.fileName
        case .archive(_, let structure):
            if let p = structure.primaryFile { return p }
            return records.first { $0.relativePath.hasSuffix(".gguf") || $0.relativePath.hasSuffix(".onnx") || $0.relativePath.hasSuffix(".ort") }?.relativePath
        }
    }

    // MARK: Writing

    /// Registers (or re-registers) a model. Re-registering keeps its download state.
    @discardableResult
    func register(_ model: ModelInfo) throws -> ModelInfo {
        var model = model
        model.id = ModelID.canonical(model.id)
        try ModelID.validate(model.id)
        for file in model.artifact.files { try Self.validate(file) }
        if let existing = self.model(id: model.id) {
            if existing.source == .builtIn, model.source != .builtIn, !existing.artifact.isSameSource(as: model.artifact) {
                throw RunAnywhereError(.invalidConfiguration, "Id '\(model.id)' belongs to a built-in catalog model; register yours under another id.", modelId: model.id)
            }
        }
        let dir = layout.modelDirectory(id: model.id, framework: model.framework)
        let url = dir.appendingPathComponent("manifest.json")
        var manifest = ModelManifest(model: model)
        if let old = try? readManifest(url) {
            if old.model.isDownloaded, !old.model.artifact.isSameSource(as: model.artifact),
               resolve(old, dir: dir).isDownloaded {
                throw RunAnywhereError(.invalidConfiguration,
                    "'\(model.id)' is downloaded from \(old.model.artifact.files.first?.url.absoluteString ?? "other files"); registering other files under the same id would strand them. Delete it first with models.delete(id:), or choose another id.",
                    modelId: model.id)
            }
            // Same id again: keep what is on disk if the files are the same ones.
            if old.model.artifact.isSameSource(as: model.artifact) {
                manifest.model.artifact = model.artifact.filling(from: old.model.artifact)
                manifest.files = old.files
                manifest.downloadedAt = old.downloadedAt
                manifest.model.isDownloaded = old.model.isDownloaded
                manifest.model.architecture = model.architecture ?? old.model.architecture
                manifest.model.parameterCount = model.parameterCount ?? old.model.parameterCount
                manifest.model.quantization = model.quantization ?? old.model.quantization
                manifest.model.contextLength = model.contextLength ?? old.model.contextLength
                manifest.model.downloadSize = model.downloadSize ?? old.model.downloadSize
                manifest.model.memoryRequirement = model.memoryRequirement ?? old.model.memoryRequirement
            }
        }
        try write(manifest, to: url)
        return resolve(manifest, dir: dir)
    }

    /// Records that a model's files are on disk and verified.
    @discardableResult
    func markDownloaded(_ model: ModelInfo, files: [ModelManifest.FileRecord]) throws -> ModelInfo {
        var stored = model
        stored.isDownloaded = true
        // Sizes learnt from the bytes themselves fill what the catalog did not know.
        if case .archive = stored.artifact {} else {
            let sizes = Dictionary(files.map { ($0.relativePath, $0.sizeBytes) }, uniquingKeysWith: { a, _ in a })
            let filled = stored.artifact.files.map { f -> ModelFileDescriptor in
                var f = f
                if f.sizeBytes == nil { f.sizeBytes = sizes[f.fileName] }
                return f
            }
            if case .multiFile = stored.artifact { stored.artifact = .multiFile(filled) } else if let one = filled.first { stored.artifact = .singleFile(one) }
            if stored.downloadSize == nil { stored.downloadSize = stored.artifact.totalSizeBytes }
        }
        let dir = layout.modelDirectory(id: model.id, framework: model.framework)
        // The backends read the files once here: what they say (a GGUF header's architecture, context, …) joins the
        // registry, and a malformed file is reported now rather than at load time.
        if let primary = Self.primaryFile(of: stored, records: files) {
            var located = stored
            located.localPath = dir
            located.primaryFilePath = dir.appendingPathComponent(primary)
            if var described = try backends.inspect(located) {
                described.localPath = stored.localPath
                described.primaryFilePath = stored.primaryFilePath
                stored = described
            }
        }
        let manifest = ModelManifest(model: stored, files: files, downloadedAt: Date())
        try write(manifest, to: dir.appendingPathComponent("manifest.json"))
        return resolve(manifest, dir: dir)
    }

    /// Removes a model's files and partial downloads. A registered model stays registered (not downloaded).
    func deleteFiles(id: String) throws {
        try ModelID.validate(id)
        guard let model = model(id: id) else { throw RunAnywhereError.modelNotFound(id) }
        let id = model.id
        let dir = layout.modelDirectory(id: id, framework: model.framework)
        let fm = FileManager.default
        do {
            if model.source == .builtIn || model.source == .remoteCatalog || model.source == .discovered || model.source == .imported {
                try FileSystem.removeTree(dir)
            } else {
                // Keep the registration: rewrite the manifest as not downloaded, then remove everything else.
                var kept = model
                kept.isDownloaded = false
                try write(ModelManifest(model: kept), to: dir.appendingPathComponent("manifest.json"))
                for name in (try? fm.contentsOfDirectory(atPath: dir.path)) ?? [] where name != "manifest.json" {
                    try FileSystem.removeTree(dir.appendingPathComponent(name))
                }
            }
            let partials = layout.downloadDirectory(id: id)
            try FileSystem.removeTree(partials)
            // Unpacking folders an interrupted (killed) archive install left beside the model folder, and what a
            // killed removal left half-removed beside it or beside the partial downloads.
            for parent in [dir.deletingLastPathComponent(), partials.deletingLastPathComponent()] {
                for name in (try? fm.contentsOfDirectory(atPath: parent.path)) ?? []
                where Self.isUnpackingFolder(name, of: id) || FileSystem.isRemovalLeftover(name, of: id) {
                    try FileSystem.removeTree(parent.appendingPathComponent(name))
                }
            }
        } catch let error as RunAnywhereError {
            throw error
        } catch {
            throw RunAnywhereError(.storageFailure, "Could not delete the files of '\(id)': \(ErrorWords.describe(error))", modelId: id)
        }
        cache.removeValue(forKey: dir.appendingPathComponent("manifest.json").path)
    }

    /// Whether `name` is `.<id>.extract-<UUID>` (an archive install's folder) or the extractor's own
    /// `..<id>.extract-<UUID>.extracting-<UUID>` inside it.
    static func isUnpackingFolder(_ name: String, of id: String) -> Bool {
        for prefix in [".\(id).extract-", "..\(id).extract-"] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let parts = rest.components(separatedBy: ".extracting-")
            if prefix.hasPrefix("..") ? parts.count == 2 : parts.count == 1, parts.allSatisfy({ UUID(uuidString: $0) != nil }) {
                return true
            }
        }
        return false
    }

    func write(_ manifest: ModelManifest, to url: URL) throws {
        // Mode 0600: a file URL may carry a secret in its query string (a signed link, `?token=`).
        try FileSystem.writeAtomically(try manifest.encoded(), to: url, mode: 0o600)
        cache.removeValue(forKey: url.path)
    }

    static func validate(_ file: ModelFileDescriptor) throws {
        guard file.url.isHTTPOrHTTPS else {
            throw RunAnywhereError(.invalidConfiguration, "Unsupported URL '\(file.url.absoluteString)': only http and https downloads are allowed.")
        }
        if file.url.user != nil || file.url.password != nil {
            throw RunAnywhereError(.invalidConfiguration, "URL for '\(file.fileName)' carries credentials; use setHfToken (or a token header) instead of user:password in the URL.")
        }
        try validateRelativePath(file.fileName)
        // A file is fetched into downloads/<id>/ beside these working files of other files; the names must not meet.
        let last = file.fileName.split(separator: "/").last.map(String.init) ?? file.fileName
        if last == ".lock" || reservedDownloadSuffixes.contains(where: { last.hasSuffix($0) }) {
            throw RunAnywhereError(.invalidConfiguration,
                "File name '\(file.fileName.prefix(100))' ends like the downloader's working files (\(reservedDownloadSuffixes.joined(separator: ", ")), .lock); rename it.")
        }
        if let sha = file.sha256, sha.count != 64 || !sha.allSatisfy({ $0.isHexDigit }) {
            throw RunAnywhereError(.invalidConfiguration, "SHA-256 '\(sha)' for '\(file.fileName)' is not 64 hex digits.")
        }
        if let size = file.sizeBytes, size < 0 {
            throw RunAnywhereError(.invalidConfiguration, "Size \(size) for '\(file.fileName)' is negative.")
        }
    }

    /// Suffixes of the files the downloader keeps beside a file while it arrives.
    static let reservedDownloadSuffixes = [".partial", ".journal", ".verified", ".incoming"]

    /// A relative path inside a model folder: no `..`, no absolute path, no control characters, no empty parts.
    static func validateRelativePath(_ path: String) throws {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let bad = path.isEmpty || path.hasPrefix("/") || path.utf8.count > 512
            || parts.contains { $0.isEmpty || $0 == "." || $0 == ".." }
            || path.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\\" }
            || path == "manifest.json"
        if bad {
            throw RunAnywhereError(.invalidConfiguration, "File name '\(path.prefix(100))' is not a safe relative path inside the model folder.")
        }
    }

    // MARK: Refresh

    func setRemote(_ models: [ModelInfo], raw: Data) throws {
        remote = models
        try FileSystem.writeAtomically(raw, to: layout.remoteCatalogCache)
    }

    /// Reconciles manifests with the files on disk: rebuilds unreadable manifests where the catalog or the
    /// files tell enough, registers model folders that have files but no manifest, and optionally prunes.
    func rescan(pruneOrphans: Bool) -> (recovered: [String], pruned: [String], problems: [String: String]) {
        var recovered: [String] = []
        var pruned: [String] = []
        var problems: [String: String] = [:]
        let fm = FileManager.default
        let catalog = builtIn + remote
        cache.removeAll()
        for framework in InferenceFramework.allCases {
            let frameworkDir = layout.modelsDirectory.appendingPathComponent(framework.rawValue, isDirectory: true)
            guard let ids = try? fm.contentsOfDirectory(atPath: frameworkDir.path) else { continue }
            for id in ids.sorted() {
                let dir = frameworkDir.appendingPathComponent(id, isDirectory: true)
                guard ModelID.isValid(id) else {
                    problems[dir.path] = "folder name is not a valid model id; left alone"
                    continue
                }
                let manifestURL = dir.appendingPathComponent("manifest.json")
                let files = Self.regularFiles(in: dir).filter { $0.relativePath != "manifest.json" && !$0.relativePath.hasPrefix(".") }
                var manifest: ModelManifest?
                if fm.fileExists(atPath: manifestURL.path) {
                    do { manifest = try readManifest(manifestURL) } catch {
                        problems[id] = "manifest was unreadable (\(error))"
                    }
                }
                if manifest == nil {
                    // Rebuild from the catalog, or from the files alone.
                    if let entry = catalog.first(where: { $0.id == id && $0.framework == framework }) {
                        let expected = entry.artifact.files
                        let complete: Bool
                        switch entry.artifact {
                        case .archive: complete = !files.isEmpty
                        default:
                            complete = expected.allSatisfy { f in
                                guard let have = files.first(where: { $0.relativePath == f.fileName }) else { return false }
                                return f.sizeBytes == nil || f.sizeBytes == have.sizeBytes
                            }
                        }
                        var m = entry
                        m.isDownloaded = complete
                        manifest = ModelManifest(model: m, files: complete ? files : [], downloadedAt: complete ? Date() : nil)
                    } else if let main = files.first(where: { $0.relativePath.hasSuffix(".gguf") }) ?? files.first {
                        let m = ModelInfo(
                            id: id, name: id, category: .language, framework: framework,
                            format: ModelFormat(fileName: main.relativePath),
                            artifact: .singleFile(ModelFileDescriptor(url: URL(fileURLWithPath: "/" + main.relativePath), fileName: main.relativePath, sizeBytes: main.sizeBytes)),
                            downloadSize: main.sizeBytes, source: .discovered, isDownloaded: true)
                        manifest = ModelManifest(model: m, files: files, downloadedAt: Date())
                    } else {
                        if problems[id] != nil { problems[id] = (problems[id] ?? "") + "; no files to rebuild it from" }
                        continue
                    }
                    if let manifest {
                        do {
                            try write(manifest, to: manifestURL)
                            recovered.append(id)
                            problems.removeValue(forKey: id)
                        } catch {
                            problems[id] = "could not rewrite manifest: \(error)"
                        }
                    }
                }
                guard let manifest else { continue }
                let resolved = resolve(manifest, dir: dir)
                if pruneOrphans, !resolved.isDownloaded, files.isEmpty, manifest.model.source != .builtIn {
                    do {
                        try fm.removeItem(at: dir)
                        pruned.append(id)
                    } catch {
                        problems[id] = "could not prune: \(ErrorWords.describe(error))"
                    }
                } else if !resolved.isDownloaded, manifest.model.isDownloaded {
                    // Files were deleted outside the SDK: record the truth.
                    var m = manifest.model
                    m.isDownloaded = false
                    try? write(ModelManifest(model: m), to: manifestURL)
                }
            }
        }
        return (recovered, pruned, problems)
    }

    static func regularFiles(in dir: URL) -> [ModelManifest.FileRecord] {
        guard let e = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey]) else { return [] }
        let base = dir.standardizedFileURL.path
        var out: [ModelManifest.FileRecord] = []
        for case let url as URL in e {
            guard let v = try? url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey]), v.isRegularFile == true else { continue }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(base + "/") else { continue }
            out.append(.init(relativePath: String(path.dropFirst(base.count + 1)), sizeBytes: Int64(v.fileSize ?? 0), sha256: nil))
        }
        return out.sorted { $0.relativePath < $1.relativePath }
    }
}
