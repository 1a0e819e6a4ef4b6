import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ModelManager {
    /// Registers a GGUF file already on this machine as a downloaded model, without copying it when it can.
    ///
    /// The file is checked before anything is written: it must be a regular file (symbolic links are followed) whose
    /// GGUF header the backends can read. It is then put in the model folder by the first of `placements` that
    /// works — by default a hard link when the file is on the storage root's file system (no byte copied), else a copy
    /// with progress — and its SHA-256 is computed and recorded in the manifest. Nothing is registered and nothing is
    /// left behind when a check fails. Importing the same file under the same id again changes nothing.
    ///
    /// Deleting the model (``delete(id:)``) removes the link or the copy and the registration, never `file` itself.
    ///
    /// ```swift
    /// let imported = try await RunAnywhere.models.importLocal(file: URL(fileURLWithPath: "/data/Qwen3-0.6B-Q8_0.gguf"))
    /// let reply = try await RunAnywhere.llm.generate(prompt: "Hello", options: LlmOptions(model: imported.model.id))
    /// ```
    /// - Parameters:
    ///   - file: The GGUF file.
    ///   - id: The model id; by default derived from the file name (`Qwen3-0.6B-Q8_0.gguf` → `qwen3-0.6b-q8_0`).
    ///   - name: Display name; by default the file name.
    ///   - placements: How the file may be placed, tried in order (``LocalImport/Placement``).
    ///   - onProgress: Called while bytes are copied or hashed, about four times a second, on a background thread.
    /// - Returns: The model, how it was placed, and the SHA-256.
    /// - Throws: `.invalidConfiguration` when `file` is missing, a folder or a link loop, for an invalid id, or an id
    ///   taken by another model; `.invalidModelFormat` when it is not a readable GGUF model; `.insufficientStorage` when
    ///   a copy does not fit; `.storageFailure` for other file-system errors; `.cancelled`.
    public func importLocal(file: URL, id: String? = nil, name: String? = nil,
                            placements: [LocalImport.Placement] = [.hardLink, .copy],
                            onProgress: (@Sendable (LocalImportProgress) -> Void)? = nil) async throws -> LocalImport {
        let source = try LocalSourceFile.resolve(file)
        try source.checkGGUFMagic()
        let modelId = id ?? ModelID.stem(of: file)
        try ModelID.validate(modelId)
        let descriptor = ModelFileDescriptor(url: URL(fileURLWithPath: source.path),
                                             fileName: Self.storedFileName(file.lastPathComponent, id: modelId), sizeBytes: source.size)
        let model = ModelInfo(id: modelId, name: name ?? file.lastPathComponent, category: .language, framework: .llamaCpp,
                              format: .gguf, artifact: .singleFile(descriptor), summary: "Imported from \(source.path).", source: .imported)
        return try await importFile(source, as: model, expecting: [], placements: placements, onProgress: onProgress)
    }

    /// A SHA-256 the imported bytes must have, and who says so (for the error message).
    struct ExpectedDigest: Sendable {
        var sha256: String
        var authority: String
    }

    /// Checks, places and registers `source` as `model` (an `.imported` model, or a catalog model whose file it is).
    /// Imports into one storage root run one at a time in this process, so two of one id cannot interleave.
    func importFile(_ source: LocalSourceFile, as model: ModelInfo, expecting expected: [ExpectedDigest],
                    placements: [LocalImport.Placement], onProgress: (@Sendable (LocalImportProgress) -> Void)?) async throws -> LocalImport {
        try await ImportLocks.lock(for: layout.root).withLock {
            try await self.importFileLocked(source, as: model, expecting: expected, placements: placements, onProgress: onProgress)
        }
    }

    private func importFileLocked(_ source: LocalSourceFile, as model: ModelInfo, expecting expected: [ExpectedDigest],
                                  placements: [LocalImport.Placement], onProgress: (@Sendable (LocalImportProgress) -> Void)?) async throws -> LocalImport {
        guard !placements.isEmpty else { throw RunAnywhereError(.invalidConfiguration, "No placement allowed for the import (placements is empty).") }
        guard case .singleFile(let descriptor) = model.artifact else {
            throw RunAnywhereError(.invalidConfiguration, "Only single-file models can be imported ('\(model.id)' is not one).", modelId: model.id)
        }
        let progress = onProgress ?? { _ in }
        if let existing = await registry.model(id: model.id), let same = Self.alreadyImported(existing, from: source) {
            guard same.placement == .symlink else { return same }
            // A symbolic link follows whatever is at the path now: the bytes must still be the ones recorded.
            let now = try await BlockingWork.run(name: "runanywhere-import-hash") { flag in
                try LocalFilePlacement.hash(source.path, expectedSize: source.size, cancellation: flag, progress: progress)
            }
            if now == same.sha256, expected.allSatisfy({ $0.sha256 == now }) { return same }
            try await registry.deleteFiles(id: model.id)
        }
        if let existing = await registry.model(id: model.id) {
            if model.source != .imported {
                guard !existing.isDownloaded else {
                    throw RunAnywhereError(.invalidConfiguration, "'\(model.id)' is already downloaded from other bytes; import this file under another id.", modelId: model.id)
                }
            } else if existing.source == .imported, !existing.isDownloaded, existing.artifact.files.first?.url.path == source.path {
                try await registry.deleteFiles(id: model.id)  // an earlier import of this file whose bytes went away
            } else {
                throw RunAnywhereError(.invalidConfiguration,
                    "Id '\(model.id)' is taken by another model (\(existing.name)); import the file under another id (--id on the command line).",
                    modelId: model.id)
            }
        }
        // The header first, before any byte moves.
        var located = model
        located.primaryFilePath = URL(fileURLWithPath: source.path)
        located.localPath = located.primaryFilePath?.deletingLastPathComponent()
        let checked = located
        let backends = registry.backends
        let described = try await BlockingWork.run(name: "runanywhere-import-check") { _ in try Self.inspect(checked, backends: backends) }

        let staging = layout.downloadDirectory(id: model.id)
        try FileSystem.createDirectory(staging)
        let staged = staging.appendingPathComponent(".import-\(UUID().uuidString).gguf")
        func cleanUp() {
            unlink(staged.path)
            rmdir(staging.path)  // only when empty: a partial download of the id stays
        }
        let placement: LocalImport.Placement, sha256: String
        do {
            (placement, sha256) = try await BlockingWork.run(name: "runanywhere-import") { flag in
                try LocalFilePlacement.place(source, at: staged.path, placements: placements, cancellation: flag, progress: progress)
            }
            // A cancel that arrives as the last bytes are placed still wins: nothing is registered.
            if Task.isCancelled {
                throw RunAnywhereError(.cancelled, "The import of \(source.path) was cancelled; nothing was imported.", modelId: model.id)
            }
            if let wrong = expected.first(where: { $0.sha256 != sha256 }) {
                throw RunAnywhereError(.checksumMismatch,
                    "\(source.path) does not hold the bytes \(wrong.authority) names: its SHA-256 is \(sha256), expected \(wrong.sha256). Nothing was imported.",
                    modelId: model.id)
            }
        } catch {
            cleanUp()
            throw error
        }

        let final = layout.modelDirectory(id: model.id, framework: model.framework).appendingPathComponent(descriptor.fileName)
        var stored = described.map { Self.merging($0, into: model) } ?? model
        var file = descriptor
        file.sizeBytes = source.size
        file.sha256 = sha256
        stored.artifact = .singleFile(file)
        stored.sha256 = sha256
        stored.downloadSize = source.size
        stored.isDownloaded = true
        stored.localPath = nil
        stored.primaryFilePath = nil
        do {
            try FileSystem.createDirectory(final.deletingLastPathComponent())
            guard rename(staged.path, final.path) == 0 else { throw FileSystem.storageError("move the imported file into \(final.path)") }
        } catch {
            cleanUp()
            throw error
        }
        FileSystem.syncDirectory(final.deletingLastPathComponent())
        cleanUp()
        do {
            let registered = try await registry.recordImport(stored, file: .init(relativePath: descriptor.fileName, sizeBytes: source.size, sha256: sha256))
            return LocalImport(model: registered, placement: placement, sourcePath: URL(fileURLWithPath: source.path), sha256: sha256,
                               wasAlreadyImported: false)
        } catch {
            unlink(final.path)  // our link or copy; the original is another name
            throw error
        }
    }

    /// What the backends read in the file's header; nil when none knows GGUF or none can run this one (a load says why).
    /// - Throws: `.invalidModelFormat` for a malformed file or a vision projector, which is not a model by itself.
    static func inspect(_ model: ModelInfo, backends: BackendSet) throws -> ModelInfo? {
        let described: ModelInfo?
        do {
            described = try backends.inspect(model)
        } catch let error as RunAnywhereError where error.code == .backendUnavailable {
            return nil
        }
        if described?.architecture == "clip" {
            throw RunAnywhereError(.invalidModelFormat, "\(model.primaryFilePath?.path ?? model.id) is a vision projector (mmproj), not a model by itself.", modelId: model.id)
        }
        return described
    }

    /// `model` with what the header said (architecture, size, context, quantization, memory need).
    static func merging(_ described: ModelInfo, into model: ModelInfo) -> ModelInfo {
        var m = model
        m.architecture = described.architecture ?? m.architecture
        m.parameterCount = described.parameterCount ?? m.parameterCount
        m.contextLength = described.contextLength ?? m.contextLength
        m.quantization = described.quantization ?? m.quantization
        m.memoryRequirement = described.memoryRequirement ?? m.memoryRequirement
        return m
    }

    /// The import result for `existing` when it already uses `source`'s bytes (same file, or a symbolic link to it,
    /// or an imported copy of it); nil otherwise.
    static func alreadyImported(_ existing: ModelInfo, from source: LocalSourceFile) -> LocalImport? {
        guard existing.isDownloaded, let primary = existing.primaryFilePath,
              let placement = placement(of: primary.path, relativeTo: source, model: existing) else { return nil }
        let sha = existing.sha256 ?? existing.artifact.files.first?.sha256 ?? ""
        return LocalImport(model: existing, placement: placement, sourcePath: URL(fileURLWithPath: source.path), sha256: sha, wasAlreadyImported: true)
    }

    /// How the model file at `path` holds `source`'s bytes, or nil when it does not.
    static func placement(of path: String, relativeTo source: LocalSourceFile, model: ModelInfo) -> LocalImport.Placement? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            return source.isSameFile(as: path) ? .symlink : nil
        }
        if UInt64(truncatingIfNeeded: st.st_dev) == source.device, UInt64(truncatingIfNeeded: st.st_ino) == source.inode { return .hardLink }
        if model.source == .imported, model.artifact.files.first?.url.path == source.path, Int64(st.st_size) == source.size { return .copy }
        return nil
    }

    /// The name an imported file gets in its model folder: its own when it is a safe `.gguf` name, else `<id>.gguf`.
    static func storedFileName(_ name: String, id: String) -> String {
        let safe = (try? ModelRegistry.validateRelativePath(name)) != nil && !name.contains("/")
            && !ModelRegistry.reservedDownloadSuffixes.contains { name.hasSuffix($0) }
        return safe && name.lowercased().hasSuffix(".gguf") ? name : "\(id).gguf"
    }

    /// The error for downloading an imported model whose file went away: there is nothing to download it from.
    static func importedFileGone(_ model: ModelInfo) -> RunAnywhereError {
        let origin = model.artifact.files.first?.url.path ?? "its file"
        return RunAnywhereError(.modelNotDownloaded,
            "Model '\(model.id)' was imported from \(origin), which is gone or changed, and has nothing to download from. "
            + "Import the file again (`runanywhere models import PATH`), or delete the model.", modelId: model.id)
    }
}

/// One import lock per storage root (in this process).
enum ImportLocks {
    private static let locks = Mutex<[String: AsyncSerialLock]>([:])

    static func lock(for root: URL) -> AsyncSerialLock {
        locks.withLock { all in
            if let lock = all[root.path] { return lock }
            let lock = AsyncSerialLock()
            all[root.path] = lock
            return lock
        }
    }
}

extension ModelRegistry {
    /// Writes the manifest of a model whose verified file an import has just put in its folder; returns the model as
    /// the registry now sees it.
    func recordImport(_ model: ModelInfo, file: ModelManifest.FileRecord) throws -> ModelInfo {
        try write(ModelManifest(model: model, files: [file], downloadedAt: Date()), to: layout.manifestURL(id: model.id, framework: model.framework))
        guard let seen = self.model(id: model.id), seen.isDownloaded else {
            throw RunAnywhereError(.storageFailure, "The import of '\(model.id)' was written but its file is not where the manifest says.", modelId: model.id)
        }
        return seen
    }
}
