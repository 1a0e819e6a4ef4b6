import Foundation
import Synchronization

/// Runs model downloads for one ``ModelManager``: one job per model id, shared by every caller
/// that asks for that model while it runs.
final class DownloadCoordinator: Sendable {
    let layout: StorageLayout
    let registry: ModelRegistry
    let tokens: HFTokenStore
    private let state = Mutex<(jobs: [String: DownloadBroadcast], policy: DownloadPolicy)>(([:], DownloadPolicy()))

    init(layout: StorageLayout, registry: ModelRegistry, tokens: HFTokenStore) {
        self.layout = layout
        self.registry = registry
        self.tokens = tokens
    }

    /// Retry, timeout and disk rules for downloads started from now on (tests shorten waits and fake a small disk).
    var policy: DownloadPolicy {
        get { state.withLock { $0.policy } }
        set { state.withLock { $0.policy = newValue } }
    }

    /// A stream of the events of `model`'s download, starting the download unless it is already running.
    func download(_ model: ModelInfo) -> AsyncThrowingStream<DownloadEvent, any Error> {
        state.withLock { s in
            if let job = s.jobs[model.id], let stream = job.subscribe() { return stream }
            let job = DownloadBroadcast()
            s.jobs[model.id] = job
            // Subscribe before the work starts so no event is missed.
            let stream = job.subscribe() ?? AsyncThrowingStream { $0.finish() }
            let work = ModelDownloadWork(model: model, layout: layout, registry: registry, tokens: tokens, policy: s.policy)
            job.start(Task { [weak self] in
                do {
                    let info = try await work.run(emit: job.emit)
                    job.finish(.success(info))
                } catch {
                    job.finish(.failure(error))
                }
                self?.state.withLock { s in
                    if s.jobs[model.id] === job { s.jobs[model.id] = nil }
                }
            })
            return stream
        }
    }

    /// Stops the download of `id`, if one runs, and returns once it has ended: its partial bytes flushed and
    /// recorded in the journal, its lock released.
    func cancel(id: String) async {
        guard let job = state.withLock({ $0.jobs[id] }) else { return }
        await job.cancelAndWait()
    }

    /// Bytes of `model` an interrupted download left on disk that a new download continues from (nil when none).
    func resumableBytes(_ model: ModelInfo) -> Int64? {
        let work = ModelDownloadWork(model: model, layout: layout, registry: registry, tokens: tokens, policy: policy)
        var total: Int64 = 0
        for file in model.artifact.files {
            if let record = work.verifiedRecord(for: file) {
                total += record.size
            } else if FileDownloader.isResumable(work.request(for: file)),
                      let journal = DownloadJournal.load(from: work.request(for: file).journalURL) {
                total += journal.bytesOnDisk
            }
        }
        return total > 0 ? total : nil
    }

    /// Whether usable partial (or verified, not yet installed) bytes of `model` are on disk.
    func isResumable(_ model: ModelInfo) -> Bool {
        let work = ModelDownloadWork(model: model, layout: layout, registry: registry, tokens: tokens, policy: policy)
        return model.artifact.files.contains { file in
            work.verifiedRecord(for: file) != nil || FileDownloader.isResumable(work.request(for: file))
        }
    }
}

/// Fans the events of one download out to every stream subscribed to it; cancels the work when the last
/// subscriber goes away.
final class DownloadBroadcast: Sendable {
    private struct State {
        var subscribers: [Int: AsyncThrowingStream<DownloadEvent, any Error>.Continuation] = [:]
        var nextID = 0
        var started: DownloadEvent?
        var outcome: Result<ModelInfo, any Error>?
        var task: Task<Void, Never>?
        var isAbandoned = false
    }

    private let state = Mutex(State())

    /// A new stream of this download's events (replaying `started`), or nil once it has ended.
    func subscribe() -> AsyncThrowingStream<DownloadEvent, any Error>? {
        let (stream, continuation) = AsyncThrowingStream<DownloadEvent, any Error>.makeStream()
        let id: Int? = state.withLock { s in
            guard s.outcome == nil, !s.isAbandoned else { return nil }
            let id = s.nextID
            s.nextID += 1
            s.subscribers[id] = continuation
            if let started = s.started { continuation.yield(started) }
            return id
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    func start(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { s -> Bool in
            s.task = task
            return s.isAbandoned
        }
        if cancelNow { task.cancel() }
    }

    func emit(_ event: DownloadEvent) {
        let targets = state.withLock { s -> [AsyncThrowingStream<DownloadEvent, any Error>.Continuation] in
            if case .started = event { s.started = event }
            return Array(s.subscribers.values)
        }
        for continuation in targets { continuation.yield(event) }
    }

    func finish(_ outcome: Result<ModelInfo, any Error>) {
        let targets = state.withLock { s -> [AsyncThrowingStream<DownloadEvent, any Error>.Continuation] in
            s.outcome = outcome
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for continuation in targets {
            switch outcome {
            case .success(let info):
                continuation.yield(.completed(info))
                continuation.finish()
            case .failure(let error):
                continuation.finish(throwing: error)
            }
        }
    }

    /// Cancels the work and waits for it to end (every subscriber then gets the cancellation error).
    func cancelAndWait() async {
        guard let task = state.withLock({ $0.task }) else { return }
        task.cancel()
        await task.value
    }

    private func unsubscribe(_ id: Int) {
        let task = state.withLock { s -> Task<Void, Never>? in
            guard s.subscribers.removeValue(forKey: id) != nil, s.subscribers.isEmpty, s.outcome == nil else { return nil }
            s.isAbandoned = true
            return s.task
        }
        task?.cancel()
    }
}
