import Foundation
import Synchronization

/// Turns per-file progress into ``DownloadProgress`` events: overall figures over all files, speed over
/// a sliding window, at most about four events a second (plus each file's first report, retries and a final one).
final class ModelProgressAggregator: Sendable {
    private struct State {
        var done: [Int64]
        var totals: [Int64?]
        var seen: [Bool]
        var transferred: Int64 = 0
        var samples: [(time: Double, bytes: Int64)] = []
        var lastEmit = -Double.infinity
        var currentIndex = 0
        var retryAttempt = 0
    }

    private let state: Mutex<State>
    private let emit: @Sendable (DownloadEvent) -> Void
    private let interval: Double
    private let window: Double

    init(sizes: [Int64?], interval: Double = 0.25, window: Double = 3, emit: @escaping @Sendable (DownloadEvent) -> Void) {
        state = Mutex(State(done: sizes.map { _ in 0 }, totals: sizes, seen: sizes.map { _ in false }))
        self.emit = emit
        self.interval = interval
        self.window = window
    }

    /// A file already on disk from an earlier run.
    func markComplete(_ index: Int, size: Int64) {
        state.withLock { s in
            s.done[index] = size
            s.totals[index] = size
            s.seen[index] = true
        }
    }

    func update(_ index: Int, _ p: FileDownloadProgress) {
        let now = monotonicSeconds()
        let event = state.withLock { s -> DownloadProgress? in
            let delta = p.bytesDone - s.done[index]
            let firstOfFile = !s.seen[index]
            if !firstOfFile, delta > 0 { s.transferred += delta }   // a resume's first report is not speed
            s.seen[index] = true
            s.done[index] = p.bytesDone
            if let total = p.bytesTotal { s.totals[index] = total }
            s.currentIndex = index
            let retryChanged = p.retryAttempt != s.retryAttempt
            s.retryAttempt = p.retryAttempt
            s.samples.append((now, s.transferred))
            while let first = s.samples.first, now - first.time > window, s.samples.count > 2 { s.samples.removeFirst() }
            // A file's first report always goes out: "file 2 of 3" is news, whatever the throttle says.
            guard retryChanged || firstOfFile || now - s.lastEmit >= interval else { return nil }
            s.lastEmit = now
            return Self.progress(s)
        }
        if let event { emit(.progress(event)) }
    }

    /// Reports the figures as they stand, whatever the throttle says.
    func flush() {
        let event = state.withLock { s -> DownloadProgress in
            s.lastEmit = monotonicSeconds()
            return Self.progress(s)
        }
        emit(.progress(event))
    }

    private static func progress(_ s: State) -> DownloadProgress {
        var speed: Double?
        if let first = s.samples.first, let last = s.samples.last, last.time - first.time >= 0.5 {
            speed = Double(last.bytes - first.bytes) / (last.time - first.time)
        }
        let overallTotal: Int64? = s.totals.contains { $0 == nil } ? nil : s.totals.reduce(0) { $0 + ($1 ?? 0) }
        return DownloadProgress(bytesDone: s.done[s.currentIndex], bytesTotal: s.totals[s.currentIndex],
                                bytesPerSecond: speed, retryAttempt: s.retryAttempt,
                                currentFileIndex: s.currentIndex, totalFiles: s.done.count,
                                overallBytesDone: s.done.reduce(0, +), overallBytesTotal: overallTotal)
    }
}
