import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// A policy that fetches files of 256 KiB or more as 128 KiB ranges over up to 4 connections.
func segmentedPolicy(stall: Double = 1, attempts: Int = 6) -> DownloadPolicy {
    var policy = fastPolicy(stall: stall, attempts: attempts)
    policy.maxConnections = 4
    policy.segmentBytes = 128 * 1024
    policy.minSegmentedBytes = 256 * 1024
    policy.checkpointBytes = 32 * 1024
    return policy
}

/// `bytes=a-b` as (a, b); nil for anything else.
func closedRange(_ header: String?) -> (start: Int, end: Int)? {
    guard let header, header.hasPrefix("bytes=") else { return nil }
    let parts = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let a = Int(parts[0]), let b = Int(parts[1]) else { return nil }
    return (a, b)
}

@Suite("Segmented downloads")
struct SegmentedDownloadTests {
    @Test("a large file from a server accepting ranges arrives as parallel ranges, whole and with the right SHA-256")
    func parallelRanges() async throws {
        let f = try DownloadFixture(size: 1_000_000)
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha, size: 1_000_000))
        #expect(fileHolds(f.destination, f.body))
        #expect(result.sha256 == f.sha)
        #expect(result.isChecksumVerified)
        #expect(!fileExists(f.request().partialURL))
        #expect(!fileExists(f.request().journalURL))
        // One plain request learns the size and the validator, then one closed range per 128 KiB.
        let ranges = f.rangesRequested
        #expect(ranges.first == .some(nil))
        let closed = ranges.dropFirst().compactMap { closedRange($0) }.sorted { $0.start < $1.start }
        #expect(closed.count == 8)
        #expect(closed.first?.start == 0)
        #expect(closed.last?.end == 999_999)
        #expect(zip(closed, closed.dropFirst()).allSatisfy { $0.end + 1 == $1.start })
        #expect(f.server.requests(to: "/model.gguf").dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
    }

    @Test("several connections are open at once on a server capping each one")
    func connectionsOverlap() async throws {
        let f = try DownloadFixture(size: 2_000_000) { $0.bandwidthBytesPerSecond = 1_000_000 }
        defer { f.cleanUp() }
        let peak = try await peakOpenConnections(f.server) {
            _ = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        }
        #expect(fileHolds(f.destination, f.body))
        #expect(peak >= 3)
    }

    @Test("on a server capping each connection, the connections double past the starting count while that pays")
    func connectionsRampUp() async throws {
        // Windows of 0.5 s (the default): long enough that a busy machine's scheduling noise does not decide a
        // doubling (at 0.3 s, 1 run in 5 stopped at 2 connections with both cores taken by other processes).
        let f = try DownloadFixture(size: 6_000_000) { $0.bandwidthBytesPerSecond = 1_000_000 }
        defer { f.cleanUp() }
        var policy = segmentedPolicy()
        policy.initialConnections = 1
        policy.maxConnections = 8
        policy.rampInterval = 0.5
        let peak = try await peakOpenConnections(f.server) {
            _ = try await FileDownloader(policy: policy).download(f.request(sha: f.sha))
        }
        #expect(fileHolds(f.destination, f.body))
        // One connection (two while one closes and the next opens) unless it doubled to 2, 4, then 8.
        #expect(peak >= 5)
    }

    @Test("each connection carries range after range when the server keeps connections alive")
    func connectionsAreReused() async throws {
        let f = try DownloadFixture(size: 2_000_000)
        defer { f.cleanUp() }
        f.server.keepsConnectionsAlive = true
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(result.sha256 == f.sha)
        #expect(fileHolds(f.destination, f.body))
        let requests = f.server.requests(to: "/model.gguf").count
        #expect(requests == 17)   // the first request, then 16 ranges of 128 KiB
        // The first connection is closed after its head; each of the 4 workers then needs one.
        #expect(f.server.acceptedConnectionCount <= 5)
    }

    @Test("after a redirect to another host, ranges go straight there, without the token")
    func rangesSkipTheRedirect() async throws {
        let f = try DownloadFixture(size: 1_000_000)
        defer { f.cleanUp() }
        let cdn = try LoopbackHTTPServer()
        defer { cdn.stop() }
        cdn.setRoute("/blob", LoopbackRoute(body: f.body, etag: "\"v1\""))
        f.server.setRoute("/model.gguf", .redirect(to: cdn.url("/blob").absoluteString))
        let result = try await FileDownloader(policy: segmentedPolicy())
            .download(f.request(sha: f.sha, authorization: "Bearer secret"))
        #expect(result.sha256 == f.sha)
        #expect(fileHolds(f.destination, f.body))
        // One request learns where the file is; the 8 ranges go to the CDN directly.
        #expect(f.server.requests(to: "/model.gguf").count == 1)
        let ranges = cdn.requests(to: "/blob").compactMap { closedRange($0.header("Range")) }
        #expect(ranges.count == 8)
        #expect(cdn.requests(to: "/blob").allSatisfy { $0.header("Authorization") == nil })
    }

    @Test("when the address a redirect led to starts refusing, ranges ask the model's URL again and finish")
    func expiredRedirectTarget() async throws {
        let f = try DownloadFixture(size: 1_000_000)
        defer { f.cleanUp() }
        let cdn = try LoopbackHTTPServer()
        defer { cdn.stop() }
        var first = LoopbackRoute(body: f.body, etag: "\"v1\"")
        first.plan = [.serve, .serve, .serve]   // the first request and two ranges, then the link "expires"
        first.fallback = .status(403)
        cdn.setRoute("/signed-1", first)
        cdn.setRoute("/signed-2", LoopbackRoute(body: f.body, etag: "\"v1\""))
        var origin = LoopbackRoute(body: f.body, etag: "\"v1\"")
        origin.plan = [.redirect(to: cdn.url("/signed-1").absoluteString)]
        origin.fallback = .redirect(to: cdn.url("/signed-2").absoluteString)
        f.server.setRoute("/model.gguf", origin)
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(result.sha256 == f.sha)
        #expect(fileHolds(f.destination, f.body))
        #expect(cdn.requests(to: "/signed-1").count >= 4)   // at least one range was refused there
        #expect(!cdn.requests(to: "/signed-2").isEmpty)
    }

    @Test("a download whose partial is deleted under it (the model removed by another process) stops at the next checkpoint",
          arguments: [1, 4])
    func partialDeletedUnderIt(connections: Int) async throws {
        let size = 4_000_000
        let f = try DownloadFixture(size: size) { $0.bandwidthBytesPerSecond = 1_000_000 / connections }
        defer { f.cleanUp() }
        var policy = segmentedPolicy()
        policy.maxConnections = connections
        let request = f.request(sha: f.sha)
        let log = ProgressLog()
        let folder = request.partialURL.deletingLastPathComponent()
        // Deleted from the progress callback, on the transfer's thread: at a known point however busy the machine.
        let task = Task {
            try await FileDownloader(policy: policy).download(request) { progress in
                if progress.bytesDone >= 200_000, log.all.allSatisfy({ $0.bytesDone < 200_000 }) {
                    try? FileManager.default.removeItem(at: folder)
                }
                log.append(progress)
            }
        }
        await #expect { _ = try await task.value } throws: { error in
            (error as? RunAnywhereError)?.code == .storageFailure && "\(error)".contains("deleted")
        }
        // Stopped soon after, not after fetching the rest into a file nobody can reach.
        #expect((log.all.last?.bytesDone ?? 0) < Int64(size / 2))
        #expect(!fileExists(f.destination))
    }

    @Test("the ramp doubles while throughput follows, and stops at the maximum")
    func rampGrowsWhilePaying() {
        var ramp = ConnectionRamp(initial: 2, maximum: 16, interval: 1)
        func step(_ time: Double, _ bytes: Int64) -> Bool { ramp.update(time: time, bytes: bytes) }
        #expect(ramp.connections == 2)
        #expect(!step(0, 0))
        #expect(!step(0.5, 50))   // not a whole interval yet
        #expect(step(1, 100))     // 100/s
        #expect(ramp.connections == 4)
        #expect(!step(1.5, 200))  // the new connections' half interval: the next window opens here
        #expect(!step(2, 300))
        #expect(step(2.5, 400))   // 200/s
        #expect(ramp.connections == 8)
        #expect(!step(3, 600))    // opens the window
        #expect(step(4, 1000))    // 400/s
        #expect(ramp.connections == 16)
        #expect(!step(4.5, 1500))
        #expect(!step(5.5, 2500))
        #expect(!step(9, 9000))
        #expect(ramp.connections == 16)
    }

    @Test("a doubling that does not raise throughput by a fifth goes back to the count before, for good")
    func rampSettlesWhenFlat() {
        var ramp = ConnectionRamp(initial: 4, maximum: 16, interval: 1)
        func step(_ time: Double, _ bytes: Int64) -> Bool { ramp.update(time: time, bytes: bytes) }
        _ = ramp.update(time: 0, bytes: 0)
        #expect(step(1, 100))
        #expect(ramp.connections == 8)
        #expect(!step(1.5, 150))
        #expect(step(2.5, 265))   // 115 per second: +15 %
        #expect(ramp.connections == 4)
        #expect(!step(3, 1000))
        #expect(ramp.connections == 4)
    }

    @Test("the half interval after a doubling is not judged: slow first bytes of new connections do not stop the ramp")
    func rampIgnoresConnectionSetup() {
        var ramp = ConnectionRamp(initial: 1, maximum: 8, interval: 1)
        func step(_ time: Double, _ bytes: Int64) -> Bool { ramp.update(time: time, bytes: bytes) }
        _ = ramp.update(time: 0, bytes: 0)
        #expect(step(1, 100))     // 100/s on one connection
        #expect(ramp.connections == 2)
        // The second connection spends 0.9 s connecting, then carries 100/s like the first (200/s in all). A window
        // from the doubling (1 → 2 s) reads 110/s, +10 %, and would stop at one connection; the one that opens
        // half an interval later (1.5 → 2.5 s) reads 160/s, +60 %.
        #expect(!step(1.5, 150))
        #expect(!step(2, 210))
        #expect(step(2.5, 310))
        #expect(ramp.connections == 4)
    }

    @Test("the ramp keeps within its bounds", arguments: [(0, 1, 1), (1, 1, 1), (8, 4, 4), (3, 0, 1)])
    func rampBounds(initial: Int, maximum: Int, expected: Int) {
        var ramp = ConnectionRamp(initial: initial, maximum: maximum, interval: 0.1)
        #expect(ramp.connections == expected)
        for step in 0..<10 { _ = ramp.update(time: Double(step), bytes: Int64(step) << Int64(step)) }
        #expect(ramp.connections <= max(1, maximum))
    }

    @Test("cancelling keeps every range's durable bytes in the journal, and the resume continues each range")
    func cancelThenResumeEveryRange() async throws {
        // 4 connections × 100 kB/s: ~5 s in all, so the cancel lands mid-file even on a loaded machine.
        let f = try DownloadFixture(size: 2_000_000) { $0.bandwidthBytesPerSecond = 100_000 }
        defer { f.cleanUp() }
        try await downloadThenCancel(f.request(sha: f.sha), after: 500_000)
        #expect(!fileExists(f.destination))
        #expect(FileDownloader.isResumable(f.request()))

        // The journal claims only bytes that are on disk and correct.
        let journal = try #require(DownloadJournal.load(from: f.request().journalURL))
        let segments = try #require(journal.segments)
        let partial = try #require(fileBytes(f.request().partialURL))
        #expect(partial.count == f.body.count)
        for s in segments where s.written > 0 {
            let range = Int(s.start)..<Int(s.start + s.written)
            #expect(partial[range].elementsEqual(f.body[range]), "range \(s.start)+\(s.written) claims bytes that differ")
        }
        let started = segments.filter { $0.written > 0 && $0.remaining > 0 }
        #expect(started.count >= 2)
        #expect(journal.bytesOnDisk >= 300_000)

        var route = try #require(f.server.route("/model.gguf"))
        route.bandwidthBytesPerSecond = nil
        f.server.setRoute("/model.gguf", route)
        f.server.clearRequests()
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(fileHolds(f.destination, f.body))
        #expect(result.sha256 == f.sha)
        #expect(result.resumedFrom == journal.bytesOnDisk)
        // No probe this time, and each started range continues where its durable bytes end.
        let starts = Set(f.rangesRequested.compactMap { closedRange($0)?.start })
        #expect(f.rangesRequested.allSatisfy { closedRange($0) != nil })
        for s in started { #expect(starts.contains(Int(s.start + s.written))) }
        let refetched = f.server.requests(to: "/model.gguf").compactMap { closedRange($0.header("Range")) }
            .reduce(0) { $0 + $1.end - $1.start + 1 }
        #expect(Int64(refetched) == Int64(f.body.count) - journal.bytesOnDisk)
    }

    @Test("a range whose connection drops is retried on its own, from where it stopped")
    func rangeRetries() async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.plan = [.serve, .dropAfter(bytes: 50_000)] }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(fileHolds(f.destination, f.body))
        #expect(result.retries == 0)
        let closed = f.rangesRequested.compactMap { closedRange($0) }
        #expect(closed.count == 9)
        // The retry asks for the dropped range's tail, not for the whole range again.
        #expect(closed.contains { $0.start % (128 * 1024) != 0 })
    }

    @Test("ranges answered 503 are retried by their workers within the attempt")
    func rangesRetry503() async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.plan = [.serve] + Array(repeating: .status(503), count: 6) }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(fileHolds(f.destination, f.body))
        #expect(result.sha256 == f.sha)
        #expect(result.retries == 0)
        #expect(f.rangesRequested.count == 1 + 6 + 8)
    }

    @Test("ranges that keep failing end in downloadFailed, keeping what arrived")
    func rangesGiveUp() async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.plan = [.serve, .serve]; $0.fallback = .status(500) }
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: segmentedPolicy(attempts: 2)).download(f.request(sha: f.sha))
        } throws: { ($0 as? RunAnywhereError)?.code == .downloadFailed }
        #expect(!fileExists(f.destination))
        let journal = try #require(DownloadJournal.load(from: f.request().journalURL))
        // The one range served is kept (all of it, unless the failures stopped it first), and only it.
        #expect(journal.bytesOnDisk > 0 && journal.bytesOnDisk <= 128 * 1024)
        #expect(try #require(journal.segments).filter { $0.written > 0 }.count == 1)
    }

    @Test("a server without range support is fetched over one connection")
    func noRanges() async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.acceptsRanges = false }
        defer { f.cleanUp() }
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(fileHolds(f.destination, f.body))
        #expect(result.sha256 == f.sha)
        #expect(f.rangesRequested == [nil])
    }

    @Test("a corrupted byte in one range fails the SHA-256 check and nothing is kept", arguments: [100, 700_000, 999_999])
    func corruptRange(offset: Int) async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.fallback = .corrupt(offset: offset) }
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        } throws: { ($0 as? RunAnywhereError)?.code == .checksumMismatch }
        #expect(!fileExists(f.destination))
        #expect(!fileExists(f.request().partialURL))
        #expect(!fileExists(f.request().journalURL))
    }

    @Test("a file that changed on the server between runs is fetched again from scratch")
    func changedBetweenRuns() async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.bandwidthBytesPerSecond = 50_000 }   // ~5 s in all
        defer { f.cleanUp() }
        try await downloadThenCancel(f.request(), after: 100_000)
        let journal = try #require(DownloadJournal.load(from: f.request().journalURL))
        #expect(journal.segments != nil)
        try #require(journal.bytesOnDisk < 1_000_000, "the first run must stop before the end")
        let newBody = testBytes(900_000, seed: 5)
        f.server.setRoute("/model.gguf", LoopbackRoute(body: newBody, etag: "\"v2\""))
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request())
        #expect(FileSystem.fileSize(f.destination) == Int64(newBody.count))
        #expect(fileHolds(f.destination, newBody))
        #expect(result.sha256 == (try sha256Hex(newBody)))
        #expect(result.resumedFrom == 0)
    }

    @Test("a one-connection partial of a large file is continued in ranges, keeping its bytes")
    func singlePartialContinuesInRanges() async throws {
        let f = try DownloadFixture(size: 1_000_000) { $0.plan = [.dropAfter(bytes: 300_000)] }
        defer { f.cleanUp() }
        var one = segmentedPolicy(attempts: 1)
        one.maxConnections = 1
        await #expect(throws: RunAnywhereError.self) {
            _ = try await FileDownloader(policy: one).download(f.request())
        }
        let kept = try #require(DownloadJournal.load(from: f.request().journalURL)).bytesWritten
        #expect(kept > 0)
        let result = try await FileDownloader(policy: segmentedPolicy()).download(f.request(sha: f.sha))
        #expect(fileHolds(f.destination, f.body))
        #expect(result.resumedFrom == kept)
        #expect(f.rangesRequested.compactMap { closedRange($0) }.allSatisfy { $0.start >= Int(kept) })
    }

    @Test("segment layout covers the file without gaps, at most 256 ranges")
    func layout() {
        var policy = DownloadPolicy()
        policy.segmentBytes = 10
        let segments = SegmentedDownload.layout(total: 95, prefix: 7, policy: policy)
        #expect(segments.first == DownloadSegment(start: 0, end: 7, written: 7))
        #expect(segments.last?.end == 95)
        #expect(SegmentedDownload.isValid(segments, total: 95))
        #expect(SegmentedDownload.contiguousPrefix(segments) == 7)
        let huge = SegmentedDownload.layout(total: 1 << 40, prefix: 0, policy: DownloadPolicy())
        #expect(huge.count <= 256)
        #expect(SegmentedDownload.isValid(huge, total: 1 << 40))
        #expect(!SegmentedDownload.isValid([DownloadSegment(start: 0, end: 5), DownloadSegment(start: 6, end: 10)], total: 10))
    }
}

/// Starts a segmented download, cancels it once `bytes` are in, and expects it to end as cancelled.
func downloadThenCancel(_ request: FileDownloadRequest, after bytes: Int64) async throws {
    let log = ProgressLog()
    let task = Task { try await FileDownloader(policy: segmentedPolicy()).download(request) { log.append($0) } }
    while (log.all.last?.bytesDone ?? 0) < bytes { try await Task.sleep(nanoseconds: 10_000_000) }
    task.cancel()
    await #expect { _ = try await task.value } throws: { ($0 as? RunAnywhereError)?.code == .cancelled }
}

/// Whether the file at `url` holds exactly `bytes` (without printing megabytes when it does not).
func fileHolds(_ url: URL, _ bytes: [UInt8]) -> Bool {
    fileBytes(url) == bytes
}

/// The most connections `server` had open at once while `body` ran (sampled every 2 ms).
func peakOpenConnections(_ server: LoopbackHTTPServer, during body: () async throws -> Void) async throws -> Int {
    let peak = PeakCounter()
    let watcher = Thread {
        while !Thread.current.isCancelled {
            peak.record(server.openConnectionCount)
            usleep(2000)
        }
    }
    watcher.start()
    defer { watcher.cancel() }
    try await body()
    return peak.value
}

/// The largest value recorded.
final class PeakCounter: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var peak = 0

    func record(_ v: Int) {
        lock.lock(); defer { lock.unlock() }
        peak = max(peak, v)
    }

    var value: Int {
        lock.lock(); defer { lock.unlock() }
        return peak
    }
}
