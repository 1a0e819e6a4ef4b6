import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Fetches the missing ranges of one file over several connections, straight into the preallocated
/// partial (`pwrite` at each range's offset), for a ``DownloadAttempt`` whose server accepts ranges.
///
/// The attempt's thread coordinates while worker threads transfer: it hashes the file in order as the
/// contiguous prefix grows (reading back what the workers wrote), reports progress, and checkpoints —
/// note every range's written bytes, `fdatasync`, then record those counts in the journal — so the journal
/// never claims a byte that is not durable and a resume continues every range. A worker retries its own
/// range after a transient failure (with backoff); anything else stops every worker and is rethrown.
final class SegmentedDownload: Sendable {
    private struct State {
        /// `written` here counts bytes written, durable or not.
        var segments: [DownloadSegment]
        var claimed: [Bool]
        var failure: (any Error)?
        var bytesDone: Int64
        /// `bytesDone` when the coordinator last checkpointed (or tried to): workers wait while far ahead of it.
        var checkpointed: Int64
        /// Worker threads started and not yet past their last claim, and how many may go on claiming ranges
        /// (a worker over the budget stops after its range).
        var workers = 0
        var allowedWorkers = 0
        /// Where ranges are asked for: the address that served the file when a redirect led there (a CDN), so
        /// each range costs one request and not two; the model's own URL again once that address fails.
        var rangeURL: URL
    }

    let attempt: DownloadAttempt
    let fd: Int32
    let total: Int64
    let validator: String
    private let state: Mutex<State>
    /// Raised to stop every worker (the caller cancelled, or one worker failed for good).
    private let stop = CancellationFlag()

    /// `servedFrom`: the URL that answered the file's first request after redirects, if any; ranges go
    /// there directly.
    init(attempt: DownloadAttempt, fd: Int32, total: Int64, validator: String, segments: [DownloadSegment],
         servedFrom: URL? = nil) {
        self.attempt = attempt
        self.fd = fd
        self.total = total
        self.validator = validator
        let done = segments.reduce(0) { $0 + $1.written }
        state = Mutex(State(segments: segments, claimed: segments.map { _ in false }, bytesDone: done, checkpointed: done,
                            rangeURL: servedFrom ?? attempt.request.url))
    }

    /// Ranges of about `policy.segmentBytes` covering `total` bytes, the first `prefix` of them already held.
    static func layout(total: Int64, prefix: Int64, policy: DownloadPolicy) -> [DownloadSegment] {
        // At most 256 ranges, so the journal stays small for any file size.
        let size = max(policy.segmentBytes, (total + 255) / 256, 1)
        var segments: [DownloadSegment] = prefix > 0 ? [DownloadSegment(start: 0, end: prefix, written: prefix)] : []
        var start = prefix
        while start < total {
            let end = min(total, start + size)
            segments.append(DownloadSegment(start: start, end: end))
            start = end
        }
        return segments
    }

    /// Whether journal segments describe a file of `total` bytes: in order, without gap or overlap, within bounds.
    static func isValid(_ segments: [DownloadSegment], total: Int64) -> Bool {
        var next: Int64 = 0
        for s in segments {
            guard s.start == next, s.end > s.start, s.written >= 0, s.written <= s.end - s.start else { return false }
            next = s.end
        }
        return next == total && segments.count <= 4096
    }

    /// Bytes from offset 0 with no gap.
    static func contiguousPrefix(_ segments: [DownloadSegment]) -> Int64 {
        var prefix: Int64 = 0
        for s in segments {
            prefix += s.written
            if s.written < s.end - s.start { break }
        }
        return prefix
    }

    /// Runs the workers until every range is in, feeding `hasher` the contiguous prefix as it grows;
    /// returns the file's SHA-256 (hex).
    func run(journal base: DownloadJournal, hasher: PrefixHasher) throws -> String {
        var journal = base
        let policy = attempt.policy
        let group = DispatchGroup()
        var ramp = ConnectionRamp(initial: policy.initialConnections, maximum: policy.maxConnections,
                                  interval: policy.rampInterval)
        var started = 0
        /// Lets `count` workers claim ranges, starting threads for those missing while ranges are unclaimed.
        func staff(_ count: Int) {
            let missing = state.withLock { s -> Int in
                s.allowedWorkers = count
                let unclaimed = s.segments.indices.filter { !s.claimed[$0] && s.segments[$0].remaining > 0 }.count
                let n = max(0, min(count - s.workers, unclaimed))
                s.workers += n
                return n
            }
            for _ in 0..<missing {
                group.enter()
                let thread = Thread { [self] in
                    work()
                    group.leave()
                }
                thread.name = "RunAnywhere.download.\(started)"
                started += 1
                thread.start()
            }
        }
        staff(ramp.connections)

        var running = true
        while running {
            running = group.wait(timeout: .now() + .milliseconds(5)) == .timedOut
            if attempt.cancellation.isCancelled { stop.cancel() }
            let (segments, done, checkpointed) = state.withLock { ($0.segments, $0.bytesDone, $0.checkpointed) }
            if running, !stop.isCancelled, ramp.update(time: monotonicSeconds(), bytes: done) { staff(ramp.connections) }
            hasher.advance(to: SegmentedDownload.contiguousPrefix(segments))
            attempt.tracker.update(bytesDone: done, bytesTotal: total)
            if done - checkpointed >= policy.checkpointBytes || !running {
                do { try attempt.checkPartialStillThere(fd) } catch { fail(error) }
                checkpoint(&journal, segments)
                state.withLock { $0.checkpointed = done }
            }
        }
        if attempt.cancellation.isCancelled { throw TransferError.cancelled }
        if let failure = state.withLock({ $0.failure }) {
            if failure is RestartDownload { attempt.discard() }
            throw failure
        }
        return try hasher.finish(total: total, cancellation: attempt.cancellation)
    }

    /// Flushes the partial, then records `segments` (taken before the flush) as durable. When either step fails
    /// the journal keeps its older, still true, figures.
    private func checkpoint(_ journal: inout DownloadJournal, _ segments: [DownloadSegment]) {
        guard fdatasync(fd) == 0 else { return }
        var next = journal
        next.segments = segments
        next.bytesWritten = SegmentedDownload.contiguousPrefix(segments)
        next.totalBytes = total
        guard FileManager.default.fileExists(atPath: attempt.request.partialURL.path),
              (try? next.save(to: attempt.request.journalURL)) != nil else { return }
        journal = next
    }

    /// Holds a worker while the bytes written since the last checkpoint pass twice the checkpoint interval (the
    /// coordinator is behind, say on a busy CPU), so a crash never costs much more than that to fetch again.
    private func keepNearCheckpoint() throws {
        let limit = 2 * max(attempt.policy.checkpointBytes, 1)
        while state.withLock({ $0.bytesDone - $0.checkpointed > limit }) {
            if stop.isCancelled { throw TransferError.cancelled }
            usleep(500)
        }
    }

    // MARK: - Workers

    /// One worker: takes the lowest range nobody has, fetches it, retries it on transient failures.
    private func work() {
        let downloader = FileDownloader(policy: attempt.policy)
        // One handle for all the worker's ranges: each asks over the connection the last one left open.
        let connection = try? CurlConnection()
        while !stop.isCancelled, let index = claimNext() {
            var failures = 0
            while !stop.isCancelled {
                let before = state.withLock { $0.segments[index].written }
                do {
                    try fetch(index, over: connection)
                    break
                } catch TransferError.transient(let reason, let retryAfter) {
                    let after = state.withLock { $0.segments[index].written }
                    failures = after > before ? 1 : failures + 1
                    guard failures < attempt.policy.maxAttempts else {
                        fail(TransferError.transient(reason: reason, retryAfter: retryAfter))
                        return
                    }
                    pause(downloader.backoff(failures: failures, retryAfter: retryAfter))
                } catch {
                    fail(error)
                    return
                }
            }
        }
    }

    /// The next range for a worker, or nil when it should stop (nothing left, a failure, or more workers
    /// than the budget); a nil answer counts the worker out.
    private func claimNext() -> Int? {
        state.withLock { s in
            guard s.failure == nil, s.workers <= s.allowedWorkers,
                  let i = s.segments.indices.first(where: { !s.claimed[$0] && s.segments[$0].remaining > 0 }) else {
                s.workers -= 1
                return nil
            }
            s.claimed[i] = true
            return i
        }
    }

    private func fail(_ error: any Error) {
        state.withLock { s in if s.failure == nil { s.failure = error } }
        stop.cancel()
    }

    private func pause(_ seconds: Double) {
        let deadline = monotonicSeconds() + seconds
        while !stop.isCancelled, monotonicSeconds() < deadline { usleep(10_000) }
    }

    /// One ranged request for the rest of range `index`.
    private func fetch(_ index: Int, over connection: CurlConnection?) throws {
        let segment = state.withLock { $0.segments[index] }
        let from = segment.start + segment.written
        let request = attempt.request
        let target = state.withLock { $0.rangeURL }
        // The token goes only to the origin it is for: not to the address a redirect led to.
        let sameOrigin = URLOrigin(target) == URLOrigin(request.url)
        let transfer = HTTPRequest(url: target, headers: request.headers,
                                   authorization: sameOrigin ? request.authorization : nil,
                                   rangeStart: from, rangeEnd: segment.end - 1, ifRange: validator)
        let sink = SegmentSink(download: self, index: index, position: from, end: segment.end)
        do {
            _ = try CurlTransfer.perform(transfer, options: attempt.policy.transfer, sink: sink, cancellation: stop,
                                         connection: connection)
        } catch TransferError.permanent(let error) where target != request.url && error.code != .insufficientStorage {
            // The address the file was served from refuses now (a signed CDN link expired, say): ask the
            // model's URL again, which redirects to a current one, and continue this range from there.
            try sink.flushPending()
            state.withLock { $0.rangeURL = request.url }
            try fetch(index, over: connection)
            return
        } catch {
            try? sink.flushPending()
            throw error
        }
        try sink.flushPending()
        if sink.position < segment.end {
            throw TransferError.transient(reason: "\(request.url.absoluteString) ended range \(from)-\(segment.end - 1) after \(sink.position - from) bytes.", retryAfter: nil)
        }
    }

    /// Receives one ranged response into its place in the partial.
    private final class SegmentSink: TransferSink {
        let download: SegmentedDownload
        let index: Int
        /// Where the next written byte goes.
        var position: Int64
        let end: Int64
        /// Body bytes received but not yet written.
        private let pending: WriteCoalescer

        init(download: SegmentedDownload, index: Int, position: Int64, end: Int64) {
            self.download = download
            self.index = index
            self.position = position
            self.end = end
            pending = WriteCoalescer(capacity: Int(min(256 << 10, download.attempt.policy.checkpointBytes)))
        }

        func receive(head: HTTPResponseHead) throws -> Bool {
            let name = download.attempt.request.destination.lastPathComponent
            guard head.status == 206 else {
                // 200: the file changed (If-Range) or ranges are no longer served; 416: it shrank.
                throw RestartDownload(reason: "the server answered a range request for \(name) with HTTP \(head.status); the file may have changed.")
            }
            guard let range = head.contentRange, range.start == position, range.total == download.total else {
                throw RestartDownload(reason: "the server answered a range of \(name) with an unexpected range (\(head.header("content-range") ?? "none")).")
            }
            if let now = head.resumeValidator, now != download.validator {
                throw RestartDownload(reason: "\(name) changed on the server during the download.")
            }
            return true
        }

        func receive(body: UnsafeRawBufferPointer) throws {
            guard position + Int64(pending.count + body.count) <= end else {
                throw TransferError.permanent(RunAnywhereError(.downloadFailed,
                    "\(download.attempt.request.url.absoluteString) sent more than the range \(position)-\(end - 1) asked for."))
            }
            try pending.add(body, flush: store)
        }

        func flushPending() throws {
            try pending.drain(store)
        }

        /// Writes `chunk` at ``position``; returns where it went.
        private func store(_ chunk: UnsafeRawBufferPointer) throws -> Int64 {
            let at = position
            var done = 0
            do {
                try download.attempt.write(chunk, to: download.fd, at: position, total: download.total, done: &done)
            } catch {
                record(done)   // what landed before the failure (disk full) counts
                throw error
            }
            record(done)
            try download.keepNearCheckpoint()
            return at
        }

        private func record(_ count: Int) {
            position += Int64(count)
            let written = position
            download.state.withLock { s in
                s.segments[index].written = written - s.segments[index].start
                s.bytesDone += Int64(count)
            }
        }
    }
}

/// How many connections a segmented download keeps: it starts with a few and, every `interval` seconds of
/// transfer, doubles them while the doubling raised the throughput by at least a fifth; the first doubling
/// that does not pay sends it back to the count before, and it stays there. After each doubling, half an
/// interval passes before the next window opens: new connections spend it connecting and ramping up (TCP slow
/// start), and counting it would judge them by their handshakes (on a loaded machine, often enough to stop at 2). A server or CDN capping each
/// connection thus gets many connections (throughput grows with each), while a link that a few connections
/// already fill (a phone, a plain server bound by CPU) keeps few, sparing memory, sockets and the server.
struct ConnectionRamp {
    /// Connections to have now.
    private(set) var connections: Int
    let maximum: Int
    let interval: Double
    /// The throughput must grow by this factor when the connections double, to keep them.
    let gain = 1.2
    private var settled: Bool
    private var mark: (time: Double, bytes: Int64)?
    private var before: (connections: Int, rate: Double)?
    /// After a doubling: the window does not open before this time.
    private var settlingUntil: Double?

    init(initial: Int, maximum: Int, interval: Double) {
        self.maximum = max(1, maximum)
        connections = max(1, min(initial, self.maximum))
        self.interval = max(0.001, interval)
        settled = connections >= self.maximum
    }

    /// Takes the bytes received so far at `time` (seconds, monotonic); true when ``connections`` changed.
    mutating func update(time: Double, bytes: Int64) -> Bool {
        guard !settled else { return false }
        if let until = settlingUntil {
            guard time >= until else { return false }
            settlingUntil = nil
            mark = nil
        }
        guard let mark else {
            self.mark = (time, bytes)
            return false
        }
        guard time - mark.time >= interval else { return false }
        let rate = Double(bytes - mark.bytes) / (time - mark.time)
        self.mark = (time, bytes)
        if let before, rate < before.rate * gain {
            connections = before.connections
            settled = true
            return true
        }
        guard connections < maximum else {
            settled = true
            return false
        }
        before = (connections, rate)
        connections = min(maximum, connections * 2)
        settlingUntil = time + interval / 2
        return true
    }
}
