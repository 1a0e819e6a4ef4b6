import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything one model download does: lock, fetch every file (resumably), verify, unpack archives,
/// move into the model folder, register as downloaded.
struct ModelDownloadWork: Sendable {
    let model: ModelInfo
    let layout: StorageLayout
    let registry: ModelRegistry
    let tokens: HFTokenStore
    let policy: DownloadPolicy

    /// How many files of a multi-file model are fetched at once.
    static let parallelFiles = 3

    private var downloadDirectory: URL { layout.downloadDirectory(id: model.id) }
    private var modelDirectory: URL { layout.modelDirectory(id: model.id, framework: model.framework) }

    /// Where a file's verified bytes wait until every file of the model is verified.
    /// Hugging Face URLs go to the configured mirror (`HF_ENDPOINT`), if any.
    func request(for file: ModelFileDescriptor) -> FileDownloadRequest {
        let url = tokens.resolve(file.url)
        return FileDownloadRequest(url: url, destination: downloadDirectory.appendingPathComponent(file.fileName),
                                   expectedSize: file.sizeBytes, expectedSHA256: file.sha256,
                                   authorization: tokens.authorizationHeader(for: url))
    }

    // MARK: - Run

    func run(emit: @escaping @Sendable (DownloadEvent) -> Void) async throws -> ModelInfo {
        do {
            return try await runLocked(emit: emit)
        } catch let error as RunAnywhereError {
            throw explained(error)
        }
    }

    private func runLocked(emit: @escaping @Sendable (DownloadEvent) -> Void) async throws -> ModelInfo {
        if let problem = tokens.endpointProblem { throw problem }
        try FileSystem.createDirectory(downloadDirectory)
        let lock = try await ModelDownloadLock.acquire(downloadDirectory.appendingPathComponent(".lock"), modelId: model.id)
        defer {
            removeDownloadDirectoryIfIdle()
            lock.release()
        }
        // Another process may have finished it while we waited for the lock.
        if let current = await registry.model(id: model.id), current.isDownloaded { return current }

        let files = model.artifact.files
        var resumed: Int64 = 0
        var alreadyVerified: [Int: VerifiedFile] = [:]
        for (i, file) in files.enumerated() {
            if let record = verifiedRecord(for: file) {
                alreadyVerified[i] = record
                resumed += record.size
            } else if let journal = DownloadJournal.load(from: request(for: file).journalURL),
                      FileDownloader.isResumable(request(for: file)) {
                resumed += journal.bytesOnDisk
            }
        }
        if let total = model.artifact.totalSizeBytes {
            let folder = downloadDirectory.path
            let free = try policy.freeSpace(folder)
            let needed = total - resumed + policy.diskMargin
            if needed > free {
                throw RunAnywhereError.insufficientStorage(needed: needed, available: free, path: folder, modelId: model.id)
            }
        }
        emit(.started(totalBytes: model.artifact.totalSizeBytes, totalFiles: files.count, resumedBytes: resumed))

        let progress = ModelProgressAggregator(sizes: files.map(\.sizeBytes), emit: emit)
        for (i, record) in alreadyVerified { progress.markComplete(i, size: record.size) }
        let verified = try await fetchAll(files, skipping: alreadyVerified, progress: progress, emit: emit)

        let records: [ModelManifest.FileRecord]
        if case .archive(let file, let structure) = model.artifact {
            emit(.extracting(fileName: file.fileName))
            records = try await install(archive: file, structure: structure)
        } else {
            records = try files.enumerated().map { i, file in try install(file, verified: verified[i]) }
        }
        let info: ModelInfo
        do {
            info = try await registry.markDownloaded(model, files: records)
        } catch {
            // The registry refused the files (an invalid GGUF, say): do not leave them looking installed.
            removeInstalled(records)
            throw error
        }
        cleanDownloadDirectory()
        return info
    }

    private func fetchAll(_ files: [ModelFileDescriptor], skipping done: [Int: VerifiedFile],
                          progress: ModelProgressAggregator,
                          emit: @escaping @Sendable (DownloadEvent) -> Void) async throws -> [Int: VerifiedFile] {
        var results = done
        let pending = files.indices.filter { done[$0] == nil }
        let downloader = FileDownloader(policy: policy)
        try await withThrowingTaskGroup(of: (Int, VerifiedFile).self) { group in
            var queue = pending[...]
            func startNext() {
                guard let i = queue.popFirst() else { return }
                let file = files[i]
                let request = request(for: file)
                group.addTask {
                    let result = try await downloader.download(request, progress: { progress.update(i, $0) },
                                                               verifying: { checksumKnown in
                        progress.flush()
                        // "Verifying" only when there is a checksum to verify against (the size is always checked).
                        if checksumKnown { emit(.verifying(fileName: file.fileName)) }
                    })
                    let record = VerifiedFile(url: file.url.absoluteString, size: result.size, sha256: result.sha256)
                    try record.save(to: verifiedRecordURL(for: file))
                    return (i, record)
                }
            }
            for _ in 0..<Self.parallelFiles { startNext() }
            while let (i, record) = try await group.next() {
                results[i] = record
                startNext()
            }
        }
        return results
    }

    // MARK: - Install

    /// Moves one verified file into the model folder.
    private func install(_ file: ModelFileDescriptor, verified: VerifiedFile?) throws -> ModelManifest.FileRecord {
        guard let verified else {
            throw RunAnywhereError(.downloadFailed, "\(file.fileName) of '\(model.id)' was not downloaded.", modelId: model.id)
        }
        let from = request(for: file).destination
        let to = modelDirectory.appendingPathComponent(file.fileName)
        try FileSystem.createDirectory(to.deletingLastPathComponent())
        guard rename(from.path, to.path) == 0 else { throw FileSystem.storageError("move \(file.fileName) into \(modelDirectory.path)") }
        FileSystem.syncDirectory(to.deletingLastPathComponent())
        try? FileManager.default.removeItem(at: verifiedRecordURL(for: file))
        return ModelManifest.FileRecord(relativePath: file.fileName, sizeBytes: verified.size, sha256: verified.sha256)
    }

    /// Unpacks a verified archive beside the model folder, checks its declared layout, moves its files in.
    private func install(archive file: ModelFileDescriptor, structure: ArchiveStructure) async throws -> [ModelManifest.FileRecord] {
        let archiveURL = request(for: file).destination
        let parent = modelDirectory.deletingLastPathComponent()
        let staging = parent.appendingPathComponent(".\(model.id).extract-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        let archiveSize = FileSystem.fileSize(archiveURL) ?? 0
        let free = (try? policy.freeSpace(parent.path)) ?? Int64.max
        let limit = max(64 << 20, min(archiveSize.multipliedReportingOverflow(by: 50).overflow ? Int64.max : archiveSize * 50,
                                      free - policy.diskMargin))
        try await BlockingWork.run(name: "RunAnywhere.extract") { flag in
            _ = try ArchiveExtractor.extract(archive: archiveURL, into: staging, maxTotalBytes: limit, cancellation: flag)
        }
        var content = staging
        if let root = structure.rootDirectory?.trimmingCharacters(in: CharacterSet(charactersIn: "/")), !root.isEmpty {
            content = staging.appendingPathComponent(root, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: content.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw RunAnywhereError(.extractionFailed,
                    "\(file.fileName) has no top folder '\(root)' as its ArchiveStructure.rootDirectory declares.", modelId: model.id)
            }
            // Links that stayed inside the archive may still climb out of the folder that becomes the model folder.
            try ArchiveExtractor.refuseLinksLeaving(content.path, archive: file.fileName)
        }
        for expected in structure.expectedFiles where !FileManager.default.fileExists(atPath: content.appendingPathComponent(expected).path) {
            throw RunAnywhereError(.extractionFailed,
                "\(file.fileName) does not contain '\(expected)', which its ArchiveStructure lists as expected.", modelId: model.id)
        }
        try FileSystem.createDirectory(modelDirectory)
        let items = (try? FileManager.default.contentsOfDirectory(atPath: content.path)) ?? []
        for name in items {
            if name == "manifest.json" {
                throw RunAnywhereError(.extractionFailed, "\(file.fileName) holds a top-level manifest.json, a name the SDK reserves.", modelId: model.id)
            }
            let target = modelDirectory.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: target.path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: target.path)) != nil {
                try? FileManager.default.removeItem(at: target)
            }
            guard rename(content.appendingPathComponent(name).path, target.path) == 0 else {
                throw FileSystem.storageError("move \(name) into \(modelDirectory.path)")
            }
        }
        FileSystem.syncDirectory(modelDirectory)
        try? FileManager.default.removeItem(at: archiveURL)
        try? FileManager.default.removeItem(at: verifiedRecordURL(for: file))
        return items.sorted().flatMap { regularFiles(below: $0) }
    }

    /// Records of every regular file at or below `relative` in the model folder.
    private func regularFiles(below relative: String) -> [ModelManifest.FileRecord] {
        let url = modelDirectory.appendingPathComponent(relative)
        if let size = FileSystem.fileSize(url) { return [ModelManifest.FileRecord(relativePath: relative, sizeBytes: size, sha256: nil)] }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else { return [] }
        return names.sorted().flatMap { regularFiles(below: relative + "/" + $0) }
    }

    /// Deletes installed files (and the folders they emptied) from the model folder; the manifest stays.
    private func removeInstalled(_ records: [ModelManifest.FileRecord]) {
        let fm = FileManager.default
        for record in records {
            try? fm.removeItem(at: modelDirectory.appendingPathComponent(record.relativePath))
            var parts = record.relativePath.split(separator: "/").dropLast()
            while !parts.isEmpty {
                let folder = modelDirectory.appendingPathComponent(parts.joined(separator: "/"))
                guard (try? fm.contentsOfDirectory(atPath: folder.path))?.isEmpty == true else { break }
                try? fm.removeItem(at: folder)
                parts = parts.dropLast()
            }
        }
    }

    /// Drops empty partials (and their journals, which describe no byte), then removes the download folder,
    /// lock file included, when nothing is left to resume. Called with the lock held; a process waiting on the
    /// old lock file sees it unlinked and takes a fresh one (``ModelDownloadLock/acquire(_:modelId:pollInterval:)``).
    private func removeDownloadDirectoryIfIdle() {
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: downloadDirectory.path)) ?? [] where name.hasSuffix(".partial") {
            let url = downloadDirectory.appendingPathComponent(name)
            if FileSystem.fileSize(url) == 0 {
                try? fm.removeItem(at: url)
                try? fm.removeItem(at: downloadDirectory.appendingPathComponent(String(name.dropLast(".partial".count)) + ".journal"))
            }
        }
        guard ((try? fm.contentsOfDirectory(atPath: downloadDirectory.path)) ?? []).allSatisfy({ $0 == ".lock" }) else { return }
        unlink(downloadDirectory.appendingPathComponent(".lock").path)
        rmdir(downloadDirectory.path)
    }

    private func cleanDownloadDirectory() {
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: downloadDirectory.path)) ?? [] where name != ".lock" {
            try? fm.removeItem(at: downloadDirectory.appendingPathComponent(name))
        }
    }

    // MARK: - Verified files waiting for the rest

    struct VerifiedFile: Codable, Sendable, Hashable {
        var url: String
        var size: Int64
        var sha256: String

        func save(to url: URL) throws {
            try FileSystem.writeAtomically(try JSONEncoder().encode(self), to: url, mode: 0o600)
        }
    }

    func verifiedRecordURL(for file: ModelFileDescriptor) -> URL {
        downloadDirectory.appendingPathComponent(file.fileName + ".verified")
    }

    /// The record of a file verified by an earlier run, when it and its bytes still match.
    func verifiedRecord(for file: ModelFileDescriptor) -> VerifiedFile? {
        guard let data = try? Data(contentsOf: verifiedRecordURL(for: file)),
              let record = try? JSONDecoder().decode(VerifiedFile.self, from: data),
              record.url == file.url.absoluteString,
              FileSystem.fileSize(request(for: file).destination) == record.size,
              file.sizeBytes == nil || file.sizeBytes == record.size,
              file.sha256 == nil || file.sha256 == record.sha256
        else { return nil }
        return record
    }

    // MARK: - Errors

    /// Adds the model id, and for Hugging Face the repository, to an error.
    private func explained(_ error: RunAnywhereError) -> RunAnywhereError {
        var message = error.message
        if error.code == .authenticationRequired, let repo = huggingFaceRepository() {
            message = "\(repo) is gated or private: accept its terms on the website, then set a token with RunAnywhere.setHfToken(_:). (\(error.message))"
        }
        // A server may echo the request (its Authorization header) in an error page that the message quotes.
        if let token = tokens.token, !token.isEmpty {
            message = message.replacingOccurrences(of: token, with: "<hf-token>")
        }
        return RunAnywhereError(error.code, message, modelId: error.modelId ?? model.id)
    }

    private func huggingFaceRepository() -> String? {
        for file in model.artifact.files {
            guard let host = file.url.host?.lowercased(),
                  host == "huggingface.co" || host == "hf.co" || host.hasSuffix(".huggingface.co") else { continue }
            let parts = file.url.path.split(separator: "/")
            if parts.count >= 2 { return "\(host)/\(parts[0])/\(parts[1])" }
        }
        return nil
    }
}

/// A cross-process lock on one model's download folder (`flock` on `downloads/<id>/.lock`).
/// A second process waits (polling) until the first is done, then finds the model downloaded.
final class ModelDownloadLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    static func acquire(_ url: URL, modelId: String, pollInterval: Double = 0.2) async throws -> ModelDownloadLock {
        var folderGone = 0
        while true {
            // The holder may finish and remove the whole folder between our mkdir and our open: make it again (a
            // folder that keeps vanishing is someone else's doing, not a finished download: an error after a few).
            guard let lock = try await lockOnce(url, modelId: modelId, pollInterval: pollInterval) else {
                folderGone += 1
                if folderGone > 8 { throw FileSystem.storageError("open \(url.path)", errorNumber: ENOENT) }
                try FileSystem.createDirectory(url.deletingLastPathComponent())
                continue
            }
            // The holder before us may have removed the lock file (its download finished): a lock on an unlinked
            // file excludes nobody, so take the one now at that path.
            var held = stat(), current = stat()
            if fstat(lock.fd, &held) == 0, stat(url.path, &current) == 0, held.st_ino == current.st_ino, held.st_dev == current.st_dev {
                return lock
            }
            lock.release()
            try FileSystem.createDirectory(url.deletingLastPathComponent())
        }
    }

    /// The lock on the file at `url`, or nil when its folder is gone (removed by the holder that just finished).
    private static func lockOnce(_ url: URL, modelId: String, pollInterval: Double) async throws -> ModelDownloadLock? {
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0, errno == ENOENT { return nil }
        guard fd >= 0 else { throw FileSystem.storageError("open \(url.path)") }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let error = FileSystem.storageError("lock \(url.path)")
                close(fd)
                throw error
            }
            do {
                try await Task.sleep(nanoseconds: UInt64(pollInterval * 1e9))
            } catch {
                close(fd)
                throw RunAnywhereError.cancelled("The download of '\(modelId)'", modelId: modelId)
            }
        }
        return ModelDownloadLock(fd: fd)
    }

    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
