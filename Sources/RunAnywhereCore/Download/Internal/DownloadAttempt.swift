import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One attempt of a ``FileDownloader``, run on its own thread: open (and lock) the partial, decide
/// where to resume, transfer, verify, move into place.
struct DownloadAttempt {
    let request: FileDownloadRequest
    let policy: DownloadPolicy
    let tracker: ProgressTracker
    let retryAttempt: Int
    let cancellation: CancellationFlag
    let onVerify: @Sendable (Bool) -> Void

    private var name: String { request.destination.lastPathComponent }

    func run() throws -> FileDownloadResult {
        let fm = FileManager.default
        let partial = request.partialURL
        for folder in [partial.deletingLastPathComponent(), request.destination.deletingLastPathComponent()] {
            do { try fm.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
                throw RunAnywhereError(.storageFailure, "Cannot create \(folder.path): \(error.localizedDescription)")
            }
        }
        let fd = open(partial.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixFailure("open", partial.path) }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            throw TransferError.permanent(RunAnywhereError(.downloadFailed,
                "\(name) is already being downloaded into \(partial.path) by another task or process."))
        }

        // Where to start: the journal's flushed byte counts, if the journal describes this download.
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw posixFailure("stat", partial.path) }
        var journal = DownloadJournal.load(from: request.journalURL)
        if let j = journal, !describesThisDownload(j, partialSize: Int64(info.st_size)) { journal = nil }
        if journal == nil { try? FileManager.default.removeItem(at: request.journalURL) }
        if let j = journal, j.segments != nil, let total = j.totalBytes, let validator = j.resumeValidator {
            try checkDiskSpace(needed: total - j.bytesOnDisk)
            tracker.update(bytesDone: j.bytesOnDisk, bytesTotal: total)
            let hasher = try PrefixHasher(fd: fd, path: partial.path)
            defer { hasher.stop() }
            return try runSegmented(fd: fd, journal: j, validator: validator, hasher: hasher)
        }
        let offset = journal?.bytesWritten ?? 0
        if Int64(info.st_size) != offset, ftruncate(fd, off_t(offset)) != 0 { throw posixFailure("truncate", partial.path) }

        if let total = journal?.totalBytes ?? request.expectedSize {
            try checkDiskSpace(needed: total - offset)
        }
        tracker.update(bytesDone: offset, bytesTotal: journal?.totalBytes ?? request.expectedSize)

        // The bytes already there are hashed on the hashing thread while the rest arrives.
        let sink = try PartialFileSink(attempt: self, fd: fd, offset: offset, journal: journal)
        defer { sink.hasher.stop() }
        let transfer = HTTPRequest(url: request.url, headers: request.headers, authorization: request.authorization,
                                   rangeStart: offset > 0 ? offset : nil, ifRange: journal?.resumeValidator)
        do {
            _ = try CurlTransfer.perform(transfer, options: policy.transfer, sink: sink, cancellation: cancellation)
            try sink.flushPending()
        } catch {
            try? sink.flushPending(handOff: false)
            sink.checkpoint()
            throw error
        }
        tracker.update(bytesDone: sink.received, bytesTotal: sink.total)
        if sink.goesSegmented, var j = sink.journal, let total = sink.total, let validator = j.resumeValidator {
            // The server accepts ranges and most of a large file is missing: fetch the rest over several connections.
            j.segments = SegmentedDownload.layout(total: total, prefix: sink.received, policy: policy)
            return try runSegmented(fd: fd, journal: j, validator: validator, hasher: sink.hasher,
                                    servedFrom: sink.servedFrom)
        }
        return try finish(sink, fd: fd)
    }

    /// Whether a journal left by an earlier attempt is about this URL and file version, and its bytes are on disk.
    private func describesThisDownload(_ j: DownloadJournal, partialSize: Int64) -> Bool {
        guard j.url == request.url.absoluteString, j.resumeValidator != nil,
              request.expectedSHA256 == nil || j.expectedSHA256 == nil || j.expectedSHA256 == request.expectedSHA256
        else { return false }
        guard let segments = j.segments else { return j.bytesWritten <= partialSize }
        guard let total = j.totalBytes, partialSize == total, request.expectedSize == nil || request.expectedSize == total
        else { return false }
        return SegmentedDownload.isValid(segments, total: total)
    }

    /// Preallocates the partial, records the ranges, fetches what is missing over several connections, verifies.
    private func runSegmented(fd: Int32, journal: DownloadJournal, validator: String,
                              hasher: PrefixHasher, servedFrom: URL? = nil) throws -> FileDownloadResult {
        guard let total = journal.totalBytes, let segments = journal.segments else {
            throw RestartDownload(reason: "the journal of \(name) lost its ranges.")
        }
        var info = stat()
        if fstat(fd, &info) == 0, Int64(info.st_size) < total {
            let code = posix_fallocate(fd, 0, off_t(total))
            if code == ENOSPC {
                let folder = request.partialURL.deletingLastPathComponent().path
                throw TransferError.permanent(.insufficientStorage(needed: total, available: (try? policy.freeSpace(folder)) ?? 0, path: folder))
            }
            if code != 0, ftruncate(fd, off_t(total)) != 0 { throw posixFailure("allocate", request.partialURL.path) }
        }
        try journal.save(to: request.journalURL)
        let download = SegmentedDownload(attempt: self, fd: fd, total: total, validator: validator, segments: segments,
                                         servedFrom: servedFrom)
        let digest = try download.run(journal: journal, hasher: hasher)
        return try verifyAndInstall(fd: fd, size: total, digest: digest,
                                    expectedSHA256: journal.expectedSHA256 ?? request.expectedSHA256,
                                    resumedFrom: journal.bytesOnDisk)
    }

    private func finish(_ sink: PartialFileSink, fd: Int32) throws -> FileDownloadResult {
        if sink.gotRangeNotSatisfiable {
            // 416: fine only if we already hold the whole file of the same version.
            guard let total = sink.total, sink.received == total, sink.journal != nil else {
                discard()
                throw RestartDownload(reason: "the server could not serve the rest of \(name) (HTTP 416) and the partial bytes were dropped.")
            }
        }
        if let total = sink.total, sink.received != total {
            sink.checkpoint()
            throw TransferError.transient(reason: "\(request.url.absoluteString) ended after \(sink.received) of \(total) bytes.", retryAfter: nil)
        }
        let digest: String
        do {
            digest = try sink.hasher.finish(total: sink.received, cancellation: cancellation)
        } catch {
            // The hashing thread failed to write a buffer it took (disk full): keep what is written resumable.
            if sink.hasher.writeError != nil { sink.checkpoint() }
            throw error
        }
        return try verifyAndInstall(fd: fd, size: sink.received, digest: digest, expectedSHA256: sink.expectedSHA256,
                                    resumedFrom: sink.startOffset)
    }

    /// Checks size and SHA-256 of the complete partial, flushes it and moves it into place.
    private func verifyAndInstall(fd: Int32, size: Int64, digest: String, expectedSHA256: String?,
                                  resumedFrom: Int64) throws -> FileDownloadResult {
        if let expected = request.expectedSize, size != expected {
            discard()
            throw TransferError.permanent(RunAnywhereError(.checksumMismatch,
                "\(name) arrived with \(size) bytes, but \(expected) were expected. The bad bytes were deleted."))
        }
        // Whether there is a SHA-256 to verify against (the size was checked above).
        onVerify(expectedSHA256 != nil)
        guard fsync(fd) == 0 else { throw posixFailure("flush", request.partialURL.path) }
        if let expected = expectedSHA256, digest != expected {
            discard()
            throw TransferError.permanent(RunAnywhereError(.checksumMismatch,
                "\(name) from \(request.url.absoluteString) has SHA-256 \(digest), but \(expected) was expected. The bad bytes were deleted; download again."))
        }
        try moveIntoPlace()
        try? FileManager.default.removeItem(at: request.journalURL)
        tracker.update(bytesDone: size, bytesTotal: size)
        return FileDownloadResult(fileURL: request.destination, size: size, sha256: digest,
                                  isChecksumVerified: expectedSHA256 != nil, resumedFrom: resumedFrom, retries: retryAttempt)
    }

    private func moveIntoPlace() throws {
        let from = request.partialURL.path, to = request.destination.path
        if rename(from, to) != 0 {
            if errno == ENOENT {
                // The partial or its folder vanished under us: another process deleted the model meanwhile.
                throw lostFiles()
            }
            guard errno == EXDEV else { throw posixFailure("move into place", to) }
            // Different volumes: copy beside the destination, flush, then rename there.
            let staging = to + ".incoming"
            do {
                try? FileManager.default.removeItem(atPath: staging)
                try FileManager.default.copyItem(atPath: from, toPath: staging)
            } catch {
                throw RunAnywhereError(.storageFailure, "Cannot copy \(name) into \(to): \(error.localizedDescription)")
            }
            let copy = open(staging, O_RDONLY | O_CLOEXEC)
            if copy >= 0 { _ = fsync(copy); close(copy) }
            guard rename(staging, to) == 0 else { throw posixFailure("move into place", to) }
            try? FileManager.default.removeItem(atPath: from)
        }
        FileSystem.syncDirectory(request.destination.deletingLastPathComponent())
    }

    func discard() {
        FileDownloader.discardPartial(request)
    }

    /// The error for a partial deleted under the download (another process removed the model).
    func lostFiles() -> RunAnywhereError { Self.lostFiles(name) }

    /// The error for the partial of file `name` deleted under the download.
    static func lostFiles(_ name: String) -> RunAnywhereError {
        RunAnywhereError(.storageFailure, "The download of \(name) lost its files before it could finish: the model was deleted (or its folder removed) while it downloaded. Download it again if you still want it.")
    }

    /// Throws ``lostFiles()`` when the partial open as `fd` no longer has a name (it was deleted): checked at
    /// every checkpoint, so a download whose model another process removed stops within a few MiB rather than
    /// fetching the rest into a file nobody can reach.
    func checkPartialStillThere(_ fd: Int32) throws {
        var info = stat()
        if fstat(fd, &info) == 0, info.st_nlink == 0 { throw TransferError.permanent(lostFiles()) }
    }

    func checkDiskSpace(needed: Int64) throws {
        guard needed > 0 else { return }
        let folder = request.partialURL.deletingLastPathComponent().path
        let free = try policy.freeSpace(folder)
        if needed + policy.diskMargin > free {
            throw TransferError.permanent(.insufficientStorage(needed: needed + policy.diskMargin, available: free, path: folder))
        }
    }

    /// The most one `pwrite` writes: a write holds the file's lock throughout, and another thread writing the same
    /// file (the hashing thread, some buffers) waits for it, spinning.
    static let writePieceBytes = 256 << 10

    /// Writes all of `body` at `offset` of the partial, counting in `done` what landed (also when it throws).
    /// Disk full becomes `.insufficientStorage`.
    func write(_ body: UnsafeRawBufferPointer, to fd: Int32, at offset: Int64, total: Int64?, done: inout Int) throws {
        while done < body.count {
            guard let base = body.baseAddress else { return }
            let n = pwrite(fd, base + done, min(body.count - done, Self.writePieceBytes), off_t(offset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ENOSPC || errno == EDQUOT {
                    let folder = request.partialURL.deletingLastPathComponent().path
                    let free = (try? policy.freeSpace(folder)) ?? 0
                    throw TransferError.permanent(.insufficientStorage(
                        needed: (total ?? offset + Int64(body.count)) - offset, available: free, path: folder))
                }
                throw posixFailure("write", request.partialURL.path)
            }
            done += n
        }
    }

    func posixFailure(_ what: String, _ path: String) -> RunAnywhereError {
        RunAnywhereError(.storageFailure, "Cannot \(what) \(path): \(String(cString: strerror(errno))).")
    }
}

/// The partial file one response is written into, by the receiving thread and by the hashing thread (the buffers
/// it takes unwritten, ``PrefixHasher/offer(_:count:at:)``): its descriptor, and the size expected for disk-full errors.
final class PartialFileWriter {
    let attempt: DownloadAttempt
    let fd: Int32
    /// The file's size, when known: set from a response's head before its body arrives.
    var total: Int64?

    init(attempt: DownloadAttempt, fd: Int32, total: Int64?) {
        self.attempt = attempt
        self.fd = fd
        self.total = total
    }

    /// Writes all of `chunk` at `offset`, counting in `done` what landed (also when it throws).
    func write(_ chunk: UnsafeRawBufferPointer, at offset: Int64, done: inout Int) throws {
        try attempt.write(chunk, to: fd, at: offset, total: total, done: &done)
    }
}

/// Receives the response of one attempt into the partial file.
final class PartialFileSink: TransferSink {
    let attempt: DownloadAttempt
    let fd: Int32
    var journal: DownloadJournal?
    /// Hashes the partial from 0 as bytes are written (on its own thread), and writes some of the buffers.
    var hasher: PrefixHasher
    /// Body bytes handed on: written by this thread, or taken by the hashing thread to write. What is certainly on
    /// disk is ``onDisk``.
    var received: Int64
    var total: Int64? {
        get { file.total }
        set { file.total = newValue }
    }
    private let file: PartialFileWriter
    var expectedSHA256: String?
    var gotRangeNotSatisfiable = false
    /// Set when the response's head shows a large file from a server accepting ranges: its body is not read.
    var goesSegmented = false
    /// Where the bytes of this response started (0 when the server sent the whole file).
    var startOffset: Int64
    /// The URL that answered, when redirects led away from the requested one.
    var servedFrom: URL?
    private var flushedAt: Int64
    /// When the last checkpoint was taken (``monotonicSeconds()``).
    private var checkpointedAt = monotonicSeconds()
    private var request: FileDownloadRequest { attempt.request }
    private let journalFile: FileSystem.FilePath
    /// Body bytes received but not yet written (never more than a checkpoint interval), gathered in the hasher's
    /// buffers so that it hashes them from memory.
    private var pending: WriteCoalescer

    /// The size of each write (and of each buffer the hasher hashes from memory).
    static func writeBytes(_ policy: DownloadPolicy) -> Int { Int(max(1, min(1 << 20, policy.checkpointBytes))) }

    /// A hasher for the partial with a pool of write buffers: four, so that receiving runs up to 3 MiB ahead of
    /// hashing before the hasher has to read bytes back. It writes the buffers it takes unwritten into `file`.
    static func makeHasher(_ file: PartialFileWriter, policy: DownloadPolicy) throws -> PrefixHasher {
        try PrefixHasher(fd: file.fd, path: file.attempt.request.partialURL.path, slots: 4, slotBytes: writeBytes(policy)) {
            chunk, offset in
            var done = 0
            try file.write(chunk, at: offset, done: &done)
        }
    }

    /// Starts its hasher, which first hashes the `offset` bytes already in the file.
    init(attempt: DownloadAttempt, fd: Int32, offset: Int64, journal: DownloadJournal?) throws {
        self.attempt = attempt
        self.fd = fd
        self.journal = journal
        file = PartialFileWriter(attempt: attempt, fd: fd, total: journal?.totalBytes ?? attempt.request.expectedSize)
        hasher = try Self.makeHasher(file, policy: attempt.policy)
        hasher.advance(to: offset)
        received = offset
        flushedAt = offset
        startOffset = offset
        journalFile = FileSystem.FilePath(attempt.request.journalURL)
        // A checksum the server announced for these partial bytes still applies when the resume's answer
        // (a 416, or a 206 from a host that does not repeat the header) carries none.
        expectedSHA256 = attempt.request.expectedSHA256 ?? journal?.expectedSHA256
        pending = WriteCoalescer(capacity: Self.writeBytes(attempt.policy), handingTo: hasher)
    }

    func receive(head: HTTPResponseHead) throws -> Bool {
        let name = request.destination.lastPathComponent
        servedFrom = head.url == request.url ? nil : head.url
        switch head.status {
        case 206:
            guard let range = head.contentRange, range.start == received else {
                attempt.discard()
                throw RestartDownload(reason: "the server answered a resume of \(name) with an unexpected range (\(head.header("content-range") ?? "none")).")
            }
            if let old = journal?.resumeValidator, let new = head.resumeValidator, old != new {
                attempt.discard()
                throw RestartDownload(reason: "\(name) changed on the server while resuming.")
            }
            if let t = range.total { total = t } else if let length = head.contentLength { total = received + length }
        case 200:
            if received > 0 {
                // The server ignored the range or the file changed (If-Range): start over.
                hasher.stop()
                guard ftruncate(fd, 0) == 0 else {
                    throw attempt.posixFailure("truncate", request.partialURL.path)
                }
                hasher = try Self.makeHasher(file, policy: attempt.policy)
                pending = WriteCoalescer(capacity: Self.writeBytes(attempt.policy), handingTo: hasher)
                received = 0
                flushedAt = 0
                startOffset = 0
                expectedSHA256 = request.expectedSHA256   // another version of the file: the old announcement is void
            }
            total = head.contentLength ?? head.linkedSize ?? request.expectedSize
        case 416:
            gotRangeNotSatisfiable = true
            if let t = head.contentRange?.total { total = t }
            return false
        default:
            throw TransferError.permanent(RunAnywhereError(.downloadFailed,
                "\(head.url.absoluteString) answered HTTP \(head.status) with no file."))
        }
        if let expected = request.expectedSize, let total, expected != total {
            attempt.discard()
            throw TransferError.permanent(RunAnywhereError(.checksumMismatch,
                "The server offers \(total) bytes for \(name), but \(expected) were expected. The file on the server differs from the one registered."))
        }
        if let linked = head.linkedSHA256 {
            if let expected = expectedSHA256, expected != linked {
                attempt.discard()
                throw TransferError.permanent(RunAnywhereError(.checksumMismatch,
                    "The server announces SHA-256 \(linked) for \(name), but \(expected) was expected. The file on the server differs from the one registered."))
            }
            expectedSHA256 = linked
        }
        if let total { try attempt.checkDiskSpace(needed: total - received) }
        journal = DownloadJournal(url: request.url.absoluteString, etag: head.etag, lastModified: head.lastModified,
                                  totalBytes: total, bytesWritten: received, expectedSHA256: expectedSHA256)
        let policy = attempt.policy
        if let total, head.resumeValidator != nil, policy.maxConnections > 1, total - received >= policy.minSegmentedBytes,
           head.status == 206 || head.header("accept-ranges")?.lowercased().contains("bytes") == true {
            // End this response here: the caller fetches the rest in ranges.
            goesSegmented = true
            return false
        }
        try journal?.save(to: journalFile)
        attempt.tracker.update(bytesDone: received, bytesTotal: total)
        return true
    }

    func receive(body: UnsafeRawBufferPointer) throws {
        if let failure = hasher.writeError { throw failure }
        if let total, received + Int64(pending.count + body.count) > total {
            attempt.discard()
            throw TransferError.permanent(RunAnywhereError(.checksumMismatch,
                "\(request.url.absoluteString) sent more than the \(total) bytes it announced. The bad bytes were deleted."))
        }
        try pending.add(body, flush: store, unwritten: handOff)
        if checkpointDue() {
            try attempt.checkPartialStillThere(fd)
            checkpoint()
        }
        attempt.tracker.update(bytesDone: received + Int64(pending.count), bytesTotal: total)
    }

    /// Writes what is received but not yet written: at the end of a response, where it may go to the hashing
    /// thread to write, or (`handOff` false) before giving up on the response, where it is written here so that
    /// the checkpoint after it counts it.
    func flushPending(handOff: Bool = true) throws {
        try pending.drain(store, unwritten: handOff ? self.handOff : nil)
    }

    /// What of the file is certainly written: ``received``, less a buffer the hashing thread has yet to write.
    var onDisk: Int64 { hasher.written(upTo: received) }

    /// Writes `chunk` at the end of what is handed on; returns where it went.
    private func store(_ chunk: UnsafeRawBufferPointer) throws -> Int64 {
        let at = received
        var done = 0
        defer {
            // Also when the write failed part way (disk full): what did land counts.
            received += Int64(done)
            hasher.advance(to: received)
        }
        try file.write(chunk, at: at, done: &done)
        return at
    }

    /// Gives a full buffer of the hasher's pool to the hashing thread to write, when it has time for it and no
    /// checkpoint falls due right after it (which would wait for that write).
    private func handOff(_ slot: PrefixHasher.Slot, count: Int) -> Bool {
        guard !checkpointDue(after: Int64(count)), hasher.offer(slot, count: count, at: received) else { return false }
        received += Int64(count)
        return true
    }

    /// Whether a checkpoint is due once `extra` more bytes are handed on: ``DownloadPolicy/checkpointBytes`` since
    /// the last one, and ``DownloadPolicy/checkpointInterval`` seconds.
    private func checkpointDue(after extra: Int64 = 0) -> Bool {
        received + extra - flushedAt >= attempt.policy.checkpointBytes
            && monotonicSeconds() - checkpointedAt >= attempt.policy.checkpointInterval
    }

    /// Flushes the bytes written so far and records them in the journal, so a later attempt resumes there.
    /// Runs every ``DownloadPolicy/checkpointBytes``, at most every ``DownloadPolicy/checkpointInterval``: paths are
    /// worked out once, and the partial's presence is checked on the open descriptor.
    func checkpoint() {
        guard var journal, partialStillNamed() else { return }
        // A buffer the hashing thread took is written by now (handOff leaves the last one before a checkpoint
        // to this thread, so this rarely waits), unless its write failed: then the journal stops before it.
        hasher.waitForWrites()
        let durable = onDisk
        guard fdatasync(fd) == 0 else { return }
        journal.bytesWritten = durable
        journal.totalBytes = total
        if (try? journal.save(to: journalFile)) != nil {
            self.journal = journal
            flushedAt = received
            checkpointedAt = monotonicSeconds()
        }
    }
}

extension PartialFileSink {
    /// Whether the partial open as ``fd`` still has a name (it was not deleted under the download).
    func partialStillNamed() -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_nlink > 0
    }
}
