import Foundation
import Synchronization

/// One file to download and what it must turn out to be.
package struct FileDownloadRequest: Sendable, Hashable {
    /// Where to fetch it (http or https).
    package var url: URL
    /// Where the verified file ends up.
    package var destination: URL
    /// The folder for `<name>.partial` and `<name>.journal`; the destination's folder when nil.
    package var workingDirectory: URL?
    /// The size the file must have, when known (a catalog figure).
    package var expectedSize: Int64?
    /// The SHA-256 (hex) the file must have, when known. Otherwise a Hugging Face `X-Linked-Etag` is used.
    package var expectedSHA256: String?
    /// Extra request headers (not `Authorization`).
    package var headers: [String: String]
    /// An `Authorization` value, sent only to the origin of ``url``.
    package var authorization: String?

    package init(url: URL, destination: URL, workingDirectory: URL? = nil, expectedSize: Int64? = nil,
                 expectedSHA256: String? = nil, headers: [String: String] = [:], authorization: String? = nil) {
        self.url = url
        self.destination = destination
        self.workingDirectory = workingDirectory
        self.expectedSize = expectedSize
        self.expectedSHA256 = expectedSHA256?.lowercased()
        self.headers = headers
        self.authorization = authorization
    }

    /// The file receiving the bytes until they are verified.
    package var partialURL: URL {
        (workingDirectory ?? destination.deletingLastPathComponent()).appendingPathComponent(destination.lastPathComponent + ".partial")
    }

    /// The journal describing the partial bytes.
    package var journalURL: URL {
        (workingDirectory ?? destination.deletingLastPathComponent()).appendingPathComponent(destination.lastPathComponent + ".journal")
    }
}

/// Where a download stands.
package struct FileDownloadProgress: Sendable, Hashable {
    /// Bytes of the file on disk so far (including resumed bytes).
    package var bytesDone: Int64
    /// The file's full size, nil while unknown.
    package var bytesTotal: Int64?
    /// 0 on the first try, then the number of the retry in progress.
    package var retryAttempt: Int
}

/// A finished, verified download.
package struct FileDownloadResult: Sendable, Hashable {
    /// Where the file is.
    package var fileURL: URL
    /// Its size.
    package var size: Int64
    /// Its SHA-256 (hex), computed while it arrived.
    package var sha256: String
    /// Whether the SHA-256 was checked against a known value (caller's or the server's `X-Linked-Etag`).
    package var isChecksumVerified: Bool
    /// The offset the last, successful attempt started from (0 = from scratch).
    package var resumedFrom: Int64
    /// Retries it took (0 = first try).
    package var retries: Int
}

/// How hard to try and how much room to leave.
package struct DownloadPolicy: Sendable {
    /// Consecutive attempts that add no byte before giving up.
    package var maxAttempts = 6
    /// Consecutive refused connections before giving up (a server that is not running; pulling again resumes):
    /// a refused connection fails in about a second instead of after the whole backoff.
    package var maxRefusedAttempts = 2
    /// The first backoff, in seconds; doubled per consecutive failure.
    package var initialBackoff = 1.0
    /// The longest backoff, in seconds.
    package var maxBackoff = 60.0
    /// The longest `Retry-After` honoured, in seconds.
    package var maxRetryAfter = 300.0
    /// Timeouts of each transfer.
    package var transfer = TransferOptions()
    /// Bytes kept free on the volume beyond what the file needs.
    package var diskMargin: Int64 = 32 * 1024 * 1024
    /// Free bytes on the volume holding a path (default: `statvfs` `f_bavail`).
    package var freeSpace: @Sendable (String) throws -> Int64 = { try availableDiskBytes(at: $0) }
    /// Flush to disk and update the journal after this many bytes (over all connections of a file), so a
    /// process killed mid-download fetches at most about this much again.
    package var checkpointBytes: Int64 = 2 * 1024 * 1024
    /// A one-connection download checkpoints no more often than this (seconds): on a fast link a kill then costs
    /// at most this long of transfer to fetch again (25 MB at 1 GB/s), and a checkpoint's flush and journal write
    /// (on a real disk, a flush of the device's cache) come 40 times a second rather than 500. Slower than
    /// ``checkpointBytes`` per interval (80 MB/s by default), the byte count decides.
    package var checkpointInterval = 0.025
    /// Connections opened at most for one file. A file of at least ``minSegmentedBytes`` from a server that
    /// accepts ranges is fetched as ranges of about ``segmentBytes`` over several connections, which is what
    /// beats a server or CDN capping each connection. 1 = always one connection.
    package var maxConnections = 16
    /// Connections a segmented download starts with. Every ``rampInterval`` it doubles them while doubling
    /// raised the throughput by a fifth or more, and goes back to the last count that paid off once it does not:
    /// a capped CDN gets many connections, a phone on a link that one or two connections fill keeps few.
    package var initialConnections = 4
    /// Seconds of transfer measured before each decision to open more connections.
    package var rampInterval = 0.5
    /// The size of each range of a file fetched over several connections (the last one may be smaller).
    package var segmentBytes: Int64 = 16 * 1024 * 1024
    /// Smaller files always use one connection.
    package var minSegmentedBytes: Int64 = 48 * 1024 * 1024
    /// Progress of one file is reported at most this often (seconds), plus at the start, on retries and at the end.
    package var progressInterval = 0.05

    package init() {}
}

/// Downloads one URL to a file: resumable (`.partial` + journal, Range/If-Range), verified (size
/// always, SHA-256 when known, hashed while bytes arrive), moved into place atomically only after
/// verification, with retries (exponential backoff with jitter, `Retry-After`) and disk-space checks.
///
/// Blocking work runs on a thread of its own per attempt; cancelling the calling task stops the
/// transfer within a poll interval and keeps the partial bytes for a later resume.
package struct FileDownloader: Sendable {
    package var policy: DownloadPolicy

    package init(policy: DownloadPolicy = DownloadPolicy()) {
        self.policy = policy
    }

    /// Downloads `request`, reporting progress (from the transfer thread) as bytes arrive and when a retry starts,
    /// and calling `verifying` once all bytes are in, before they are checked, with whether a SHA-256 is known to check.
    /// - Throws: `RunAnywhereError` — `.checksumMismatch`, `.insufficientStorage`, `.authenticationRequired`,
    ///   `.downloadFailed`, `.networkUnavailable`, `.cancelled`, `.storageFailure`.
    package func download(
        _ request: FileDownloadRequest,
        progress: @escaping @Sendable (FileDownloadProgress) -> Void = { _ in },
        verifying: @escaping @Sendable (_ checksumKnown: Bool) -> Void = { _ in }
    ) async throws -> FileDownloadResult {
        guard request.url.isHTTPOrHTTPS else {
            throw RunAnywhereError(.invalidConfiguration, "Cannot download \(request.url.absoluteString): only http and https URLs are supported.")
        }
        let tracker = ProgressTracker(interval: policy.progressInterval, report: progress)
        var retries = 0
        var failuresWithoutProgress = 0
        var restarts = 0
        let name = request.destination.lastPathComponent
        while true {
            if Task.isCancelled { throw RunAnywhereError.cancelled("The download of \(name)") }
            let before = tracker.bytesDone
            let attempt = retries
            do {
                return try await BlockingWork.run(name: "RunAnywhere.download") { flag in
                    var result = try DownloadAttempt(request: request, policy: policy, tracker: tracker,
                                                     retryAttempt: attempt, cancellation: flag, onVerify: verifying).run()
                    result.retries = attempt
                    return result
                }
            } catch TransferError.cancelled {
                throw RunAnywhereError.cancelled("The download of \(name)")
            } catch TransferError.permanent(let error) {
                throw error
            } catch let restart as RestartDownload {
                restarts += 1
                guard restarts <= 3 else {
                    throw RunAnywhereError(.downloadFailed, "Gave up on \(request.url.absoluteString): \(restart.reason)")
                }
                retries += 1
                tracker.retry(retries)
            } catch let error as TransferError {
                guard case .transient(let reason, let retryAfter) = error else { throw error.runAnywhereError }
                failuresWithoutProgress = tracker.bytesDone > before ? 1 : failuresWithoutProgress + 1
                if error.isConnectionRefused, failuresWithoutProgress >= policy.maxRefusedAttempts {
                    throw RunAnywhereError(.networkUnavailable, "Cannot download \(request.url.absoluteString): \(reason)")
                }
                guard failuresWithoutProgress < policy.maxAttempts else {
                    throw RunAnywhereError(.downloadFailed,
                        "Gave up on \(request.url.absoluteString) after \(failuresWithoutProgress) attempts without progress. Last error: \(reason)")
                }
                retries += 1
                tracker.retry(retries)
                let delay = backoff(failures: failuresWithoutProgress, retryAfter: retryAfter)
                do {
                    try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                } catch {
                    throw RunAnywhereError.cancelled("The download of \(name)")
                }
            }
        }
    }

    /// Seconds to wait before the next attempt after `failures` consecutive failures.
    package func backoff(failures: Int, retryAfter: Double?) -> Double {
        let exponential = min(policy.maxBackoff, policy.initialBackoff * pow(2, Double(max(0, failures - 1))))
        let jittered = exponential * Double.random(in: 0.5...1.0)
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, policy.maxRetryAfter))
    }

    /// Whether partial bytes for `request` are on disk and can be continued.
    package static func isResumable(_ request: FileDownloadRequest) -> Bool {
        guard let journal = DownloadJournal.load(from: request.journalURL),
              journal.url == request.url.absoluteString, journal.bytesOnDisk > 0,
              journal.resumeValidator != nil,
              let size = try? FileManager.default.attributesOfItem(atPath: request.partialURL.path)[.size] as? NSNumber
        else { return false }
        return size.int64Value >= (journal.segments == nil ? journal.bytesWritten : journal.totalBytes ?? Int64.max)
    }

    /// Deletes the partial bytes and journal of `request`.
    package static func discardPartial(_ request: FileDownloadRequest) {
        try? FileManager.default.removeItem(at: request.partialURL)
        try? FileManager.default.removeItem(at: request.journalURL)
    }
}

/// Thrown by an attempt that found its partial bytes unusable and deleted them: start again now.
struct RestartDownload: Error {
    var reason: String
}

/// Shares the progress figures between attempts and reports them, at most once per interval while bytes
/// flow (a new total, the last byte, and retries are always reported).
final class ProgressTracker: Sendable {
    private struct State {
        var bytesDone: Int64 = 0
        var bytesTotal: Int64?
        var retryAttempt = 0
        var lastReport = -Double.infinity
    }

    private let state = Mutex(State())
    private let interval: Double
    private let report: @Sendable (FileDownloadProgress) -> Void

    init(interval: Double = 0, report: @escaping @Sendable (FileDownloadProgress) -> Void) {
        self.interval = interval
        self.report = report
    }

    var bytesDone: Int64 { state.withLock { $0.bytesDone } }

    func update(bytesDone: Int64, bytesTotal: Int64?) {
        let snapshot = state.withLock { s -> FileDownloadProgress? in
            let newTotal = bytesTotal != nil && bytesTotal != s.bytesTotal
            s.bytesDone = bytesDone
            if let bytesTotal { s.bytesTotal = bytesTotal }
            let now = interval > 0 ? monotonicSeconds() : 0
            guard newTotal || bytesDone == s.bytesTotal || now - s.lastReport >= interval else { return nil }
            s.lastReport = now
            return FileDownloadProgress(bytesDone: s.bytesDone, bytesTotal: s.bytesTotal, retryAttempt: s.retryAttempt)
        }
        if let snapshot { report(snapshot) }
    }

    func retry(_ attempt: Int) {
        let snapshot = state.withLock { s -> FileDownloadProgress in
            s.retryAttempt = attempt
            return FileDownloadProgress(bytesDone: s.bytesDone, bytesTotal: s.bytesTotal, retryAttempt: attempt)
        }
        report(snapshot)
    }
}
