import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Synchronization
import Testing

/// A loopback server, a temp folder and a file to fetch.
struct DownloadFixture {
    let server: LoopbackHTTPServer
    let dir: TemporaryDirectory
    let body: [UInt8]
    let sha: String

    init(size: Int = 300_000, route: (inout LoopbackRoute) -> Void = { _ in }) throws {
        server = try LoopbackHTTPServer()
        dir = try TemporaryDirectory()
        body = testBytes(size)
        sha = try sha256Hex(body)
        var r = LoopbackRoute(body: body, etag: "\"v1\"")
        route(&r)
        server.setRoute("/model.gguf", r)
    }

    var url: URL { server.url("/model.gguf") }
    var destination: URL { dir.url.appendingPathComponent("models/model.gguf") }

    func request(sha: String? = nil, size: Int64? = nil, authorization: String? = nil) -> FileDownloadRequest {
        FileDownloadRequest(url: url, destination: destination, workingDirectory: dir.url.appendingPathComponent("downloads"),
                            expectedSize: size, expectedSHA256: sha, authorization: authorization)
    }

    func cleanUp() {
        server.stop()
        dir.remove()
    }

    /// Ranges asked for, in order (nil = whole file).
    var rangesRequested: [String?] { server.requests(to: "/model.gguf").map { $0.header("Range") } }
}

@Suite("FileDownloader")
struct FileDownloaderTests {
    @Test("downloads, verifies and moves the file into place, leaving no partial or journal")
    func plainDownload() async throws {
        let f = try DownloadFixture()
        defer { f.cleanUp() }
        let log = ProgressLog()
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha)) { log.append($0) }
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.sha256 == f.sha)
        #expect(result.isChecksumVerified)
        #expect(result.size == Int64(f.body.count))
        #expect(!fileExists(f.request().partialURL))
        #expect(!fileExists(f.request().journalURL))
        #expect(log.all.last?.bytesDone == Int64(f.body.count))
        #expect(log.all.contains { $0.bytesTotal == Int64(f.body.count) })
    }

    @Test("resumes with Range and If-Range after a dropped connection (206 appends)")
    func resumeWith206() async throws {
        let f = try DownloadFixture { $0.plan = [.dropAfter(bytes: 100_000)] }
        defer { f.cleanUp() }
        await #expect(throws: RunAnywhereError.self) {
            _ = try await FileDownloader(policy: fastPolicy(attempts: 1)).download(f.request())
        }
        #expect(FileDownloader.isResumable(f.request()))
        #expect(!fileExists(f.destination))
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.resumedFrom > 0)
        let second = try #require(f.server.requests(to: "/model.gguf").last)
        #expect(second.header("Range") == "bytes=\(result.resumedFrom)-")
        #expect(second.header("If-Range") == "\"v1\"")
    }

    @Test("starts over when the server ignores the range and answers 200")
    func serverIgnoresRange() async throws {
        let f = try DownloadFixture { $0.acceptsRanges = false; $0.plan = [.dropAfter(bytes: 120_000)] }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.resumedFrom == 0)
        #expect(f.rangesRequested.count == 2)
        #expect(f.rangesRequested.last??.hasPrefix("bytes=") == true)
    }

    @Test("recovers from dropped, truncated and stalled connections at several offsets")
    func manyFaults() async throws {
        let f = try DownloadFixture(size: 400_000) {
            $0.plan = [.dropAfter(bytes: 10_000), .dropAfter(bytes: 50_000), .truncateAfter(bytes: 30_000),
                       .stallAfter(bytes: 5000, seconds: 10), .dropAfter(bytes: 1)]
        }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: fastPolicy(stall: 0.5)).download(f.request(sha: f.sha))
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.retries == 5)
        let starts = f.rangesRequested.map { $0.flatMap { Int($0.dropFirst(6).dropLast()) } ?? 0 }
        #expect(starts.count == 6)
        #expect(starts == starts.sorted())
        #expect(starts.last ?? 0 > 90_000)
    }

    @Test("a 416 on resume means done when the partial already holds the whole file")
    func rangeNotSatisfiableComplete() async throws {
        let f = try DownloadFixture()
        defer { f.cleanUp() }
        let request = f.request(sha: f.sha)
        try FileManager.default.createDirectory(at: request.partialURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(f.body).write(to: request.partialURL)
        try DownloadJournal(url: f.url.absoluteString, etag: "\"v1\"", totalBytes: Int64(f.body.count),
                            bytesWritten: Int64(f.body.count), expectedSHA256: f.sha).save(to: request.journalURL)
        let result = try await FileDownloader(policy: fastPolicy()).download(request)
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.resumedFrom == Int64(f.body.count))
        #expect(f.rangesRequested == ["bytes=\(f.body.count)-"])
    }

    @Test("a 416 for a partial longer than the file starts over")
    func rangeNotSatisfiableStale() async throws {
        let f = try DownloadFixture()
        defer { f.cleanUp() }
        let request = f.request()
        try FileManager.default.createDirectory(at: request.partialURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        let stale = testBytes(f.body.count + 5000, seed: 7)
        try Data(stale).write(to: request.partialURL)
        try DownloadJournal(url: f.url.absoluteString, etag: "\"v1\"", totalBytes: Int64(stale.count),
                            bytesWritten: Int64(stale.count)).save(to: request.journalURL)
        _ = try await FileDownloader(policy: fastPolicy()).download(request)
        #expect(fileBytes(f.destination) == f.body)
        #expect(f.rangesRequested == ["bytes=\(stale.count)-", nil])
    }

    @Test("starts over when the ETag changed between attempts")
    func changedETag() async throws {
        let f = try DownloadFixture { $0.plan = [.dropAfter(bytes: 100_000)] }
        defer { f.cleanUp() }
        await #expect(throws: RunAnywhereError.self) {
            _ = try await FileDownloader(policy: fastPolicy(attempts: 1)).download(f.request())
        }
        let newBody = testBytes(250_000, seed: 42)
        f.server.setRoute("/model.gguf", LoopbackRoute(body: newBody, etag: "\"v2\""))
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request())
        #expect(fileBytes(f.destination) == newBody)
        #expect(result.resumedFrom == 0)
        #expect(f.server.requests(to: "/model.gguf").last?.header("If-Range") == "\"v1\"")
    }

    @Test("starts over within one call when the file changes between a drop and the retry")
    func changesMidDownload() async throws {
        let newBody = testBytes(280_000, seed: 99)
        let f = try DownloadFixture { $0.plan = [.dropAfter(bytes: 100_000), .replaceResource(body: newBody, etag: "\"v2\"")] }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request())
        #expect(fileBytes(f.destination) == newBody)
        #expect(result.resumedFrom == 0)
        #expect(result.retries == 1)
        #expect(f.server.requests(to: "/model.gguf").last?.header("If-Range") == "\"v1\"")
    }

    @Test("retries a 503 and shows the attempt number")
    func retries503() async throws {
        let f = try DownloadFixture { $0.plan = [.status(503)] }
        defer { f.cleanUp() }
        let log = ProgressLog()
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha)) { log.append($0) }
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.retries == 1)
        #expect(log.all.contains { $0.retryAttempt == 1 })
        #expect(log.all.last?.retryAttempt == 1)
    }

    @Test("waits as long as Retry-After says on a 429")
    func honoursRetryAfter() async throws {
        let f = try DownloadFixture { $0.plan = [.retryAfter(seconds: 1, status: 429)] }
        defer { f.cleanUp() }
        let started = Date()
        _ = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        #expect(Date().timeIntervalSince(started) >= 1.0)
        #expect(fileBytes(f.destination) == f.body)
    }

    @Test("gives up after the allowed attempts with downloadFailed")
    func givesUp() async throws {
        let f = try DownloadFixture { $0.fallback = .status(500) }
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy(attempts: 3)).download(f.request())
        } throws: { ($0 as? RunAnywhereError)?.code == .downloadFailed }
        #expect(f.server.requests.count == 3)
    }

    @Test("a corrupted body fails with checksumMismatch and leaves nothing in place", arguments: [false, true])
    func corruptedBody(shaFromServer: Bool) async throws {
        let f = try DownloadFixture { $0.plan = [.corrupt(offset: 123_456)] }
        defer { f.cleanUp() }
        if shaFromServer {
            var route = try #require(f.server.route("/model.gguf"))
            route.linkedSHA256 = f.sha
            f.server.setRoute("/model.gguf", route)
        }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: shaFromServer ? nil : f.sha))
        } throws: { ($0 as? RunAnywhereError)?.code == .checksumMismatch }
        #expect(!fileExists(f.destination))
        #expect(!fileExists(f.request().partialURL))
        #expect(!fileExists(f.request().journalURL))
    }

    @Test("a short declared Content-Length is caught by the checksum")
    func shortContentLength() async throws {
        let f = try DownloadFixture { $0.plan = [.declaredLength(1000)] }
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        } throws: { ($0 as? RunAnywhereError)?.code == .checksumMismatch }
        #expect(!fileExists(f.destination))
    }

    @Test("a long declared Content-Length ends transiently and the resume completes")
    func longContentLength() async throws {
        let f = try DownloadFixture { $0.plan = [.declaredLength(400_000)] }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.retries >= 1)
    }

    @Test("a size that differs from the expected one fails before any byte is kept")
    func wrongSize() async throws {
        let f = try DownloadFixture()
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy()).download(f.request(size: Int64(f.body.count + 1)))
        } throws: { ($0 as? RunAnywhereError)?.code == .checksumMismatch }
        #expect(!fileExists(f.destination))
        #expect(!fileExists(f.request().partialURL))
    }

    @Test("uses the SHA-256 from a Hugging Face redirect and never sends the token to the other host")
    func huggingFaceRedirect() async throws {
        let f = try DownloadFixture()
        let cdn = try LoopbackHTTPServer()
        defer { f.cleanUp(); cdn.stop() }
        cdn.setRoute("/blob", LoopbackRoute(body: f.body, etag: "\"cdn\"", plan: [.dropAfter(bytes: 70_000)]))
        f.server.setRoute("/model.gguf", LoopbackRoute(body: f.body, linkedSHA256: f.sha,
                                                       fallback: .redirect(to: cdn.url("/blob").absoluteString)))
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(authorization: "Bearer hf_secret"))
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.isChecksumVerified)
        #expect(f.server.requests.allSatisfy { $0.header("Authorization") == "Bearer hf_secret" })
        #expect(cdn.requests.count == 2)
        #expect(cdn.requests.allSatisfy { $0.header("Authorization") == nil })
        #expect(cdn.requests.last?.header("If-Range") == "\"cdn\"")
        let journalText = try? String(contentsOf: f.request().journalURL, encoding: .utf8)
        #expect(journalText == nil)
    }

    @Test("401 fails at once with authenticationRequired")
    func unauthorized() async throws {
        let f = try DownloadFixture { $0.fallback = .status(401) }
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy()).download(f.request())
        } throws: { ($0 as? RunAnywhereError)?.code == .authenticationRequired }
        #expect(f.server.requests.count == 1)
    }

    @Test("too little disk fails with insufficientStorage before any byte is written", arguments: [true, false])
    func insufficientDisk(sizeKnown: Bool) async throws {
        let f = try DownloadFixture()
        defer { f.cleanUp() }
        var policy = fastPolicy()
        policy.freeSpace = { _ in 1000 }
        policy.diskMargin = 500
        await #expect {
            _ = try await FileDownloader(policy: policy).download(f.request(size: sizeKnown ? Int64(f.body.count) : nil))
        } throws: { error in
            guard let e = error as? RunAnywhereError, e.code == .insufficientStorage else { return false }
            return e.message.contains(ByteFormatter.string(Int64(f.body.count + 500))) && e.message.contains(ByteFormatter.string(1000))
        }
        let partialSize = (try? FileManager.default.attributesOfItem(atPath: f.request().partialURL.path)[.size] as? NSNumber)?.intValue ?? 0
        #expect(partialSize == 0)
        #expect(!fileExists(f.destination))
        #expect(f.server.requests.count == (sizeKnown ? 0 : 1))
    }

    @Test("cancelling mid-file keeps the partial and a later download resumes it")
    func cancelThenResume() async throws {
        // 8 s at this rate: the cancel lands mid-file even on a heavily loaded machine.
        let f = try DownloadFixture(size: 2_000_000) { $0.bandwidthBytesPerSecond = 250_000 }
        defer { f.cleanUp() }
        let log = ProgressLog()
        let task = Task { try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha)) { log.append($0) } }
        while (log.all.last?.bytesDone ?? 0) < 300_000 { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        await #expect {
            _ = try await task.value
        } throws: { ($0 as? RunAnywhereError)?.code == .cancelled }
        #expect(!fileExists(f.destination))
        #expect(FileDownloader.isResumable(f.request()))

        var route = try #require(f.server.route("/model.gguf"))
        route.bandwidthBytesPerSecond = nil
        f.server.setRoute("/model.gguf", route)
        let result = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        #expect(result.resumedFrom >= 300_000)
        #expect(fileBytes(f.destination) == f.body)
    }

    @Test("refuses a second concurrent download of the same file")
    func concurrentSameFile() async throws {
        // The first download stalls mid-body (its stall timeout is longer), so it holds the partial for as long
        // as the test needs, however loaded the machine is.
        let f = try DownloadFixture(size: 500_000) { $0.plan = [.stallAfter(bytes: 100_000, seconds: 60)] }
        defer { f.cleanUp() }
        let first = Task { try await FileDownloader(policy: fastPolicy(stall: 120)).download(f.request(sha: f.sha)) }
        while f.server.requests.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        } throws: { ($0 as? RunAnywhereError)?.code == .downloadFailed }
        first.cancel()
        await #expect { _ = try await first.value } throws: { ($0 as? RunAnywhereError)?.code == .cancelled }
        // With the first one gone, the file downloads (resuming what it had written).
        _ = try await FileDownloader(policy: fastPolicy()).download(f.request(sha: f.sha))
        #expect(fileBytes(f.destination) == f.body)
    }

    @Test("with 1 MiB write buffers, some written by the hashing thread, a dropped connection resumes where it stopped")
    func resumeAfterDropWithHandedOffBuffers() async throws {
        // The default checkpoint (2 MiB) and so 1 MiB buffers: the first full buffer finds the hashing thread idle
        // and is written there. The drop comes 0.77 MiB past the last periodic checkpoint (4 MiB): the journal
        // reaches the drop only if the attempt's last checkpoint counts the buffer being gathered then (written on
        // this thread, or waited for when the hashing thread took it).
        let f = try DownloadFixture(size: 7 << 20) { $0.plan = [.dropAfter(bytes: 5_000_000)] }
        defer { f.cleanUp() }
        var policy = fastPolicy()
        policy.checkpointBytes = 2 << 20
        let result = try await FileDownloader(policy: policy).download(f.request(sha: f.sha))
        #expect(fileBytes(f.destination) == f.body)
        #expect(result.retries == 1)
        #expect(result.resumedFrom == 5_000_000)
        #expect(f.rangesRequested == [nil, "bytes=5000000-"])
    }

    @Test("one connection checkpoints no more often than the policy's interval, however many bytes pass")
    func checkpointInterval() async throws {
        // 400 kB/s: 600 kB take 1.5 s, nine checkpoints' worth of bytes at 64 KiB.
        for (interval, expectCheckpoint) in [(60.0, false), (0.1, true)] {
            let f = try DownloadFixture(size: 1_000_000) { $0.bandwidthBytesPerSecond = 400_000 }
            defer { f.cleanUp() }
            var policy = fastPolicy()
            policy.checkpointInterval = interval
            let request = f.request(sha: f.sha)
            let seen = JournalProbe()
            _ = try await FileDownloader(policy: policy).download(request) { p in
                if p.bytesDone >= 600_000 { seen.record(DownloadJournal.load(from: request.journalURL)?.bytesWritten) }
            }
            let recorded = try #require(seen.first)
            // The journal written when the response began says 0 bytes; a checkpoint since says more.
            #expect((recorded > 0) == expectCheckpoint, "interval \(interval) s: the journal said \(recorded) bytes")
        }
    }
}

/// The first journal figure seen from a progress callback.
private final class JournalProbe: Sendable {
    private let value = Mutex<Int64?>(nil)
    func record(_ bytes: Int64?) {
        guard let bytes else { return }
        value.withLock { if $0 == nil { $0 = bytes } }
    }
    var first: Int64? { value.withLock { $0 } }
}
