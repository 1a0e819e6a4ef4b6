import Foundation
import RunAnywhere
import Synchronization

/// One completion in progress: its task (queue turn, then `llm.generateStream`) and the channel its events go to.
final class GenerationRun: Sendable {
    let job: CompletionJob
    let events = EventChannel()
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(job: CompletionJob) {
        self.job = job
    }

    /// Stops the generation (between two tokens) or gives up its place in the queue. Safe to call more than once.
    func cancel() {
        task.withLock { $0?.cancel() }
    }

    fileprivate func attach(_ t: Task<Void, Never>) {
        task.withLock { $0 = t }
    }
}

/// Runs completions through the SDK's public API, one at a time per model in arrival order, and counts them.
final class GenerationRunner: Sendable {
    private let sdk: RunAnywhereSDK
    private let queue: RequestQueue
    private let queueDepth: Int
    private let active = Mutex<[ObjectIdentifier: GenerationRun]>([:])
    private let counters = Mutex(ServerStatistics())

    init(sdk: RunAnywhereSDK, queueDepth: Int) {
        self.sdk = sdk
        self.queueDepth = queueDepth
        queue = RequestQueue(depth: queueDepth)
    }

    /// What has been served so far.
    var statistics: ServerStatistics { counters.withLock { $0 } }

    /// Completions accepted and not finished (running or waiting for their turn).
    var inFlight: Int { active.withLock { $0.count } }

    /// Completions waiting for their model's turn.
    var waiting: Int { queue.waitingTotal.load(ordering: .sequentiallyConsistent) }

    /// Starts `job`: its events arrive on the returned run's channel, ending with `.completed` or `.failed`.
    func start(_ job: CompletionJob) -> GenerationRun {
        let run = GenerationRun(job: job)
        let key = ObjectIdentifier(run)
        active.withLock { $0[key] = run }
        counters.withLock { $0.accepted += 1 }
        let task = Task { [sdk, queue, queueDepth] in
            let outcome = await Self.generate(job, sdk: sdk, queue: queue, queueDepth: queueDepth, into: run.events)
            self.active.withLock { _ = $0.removeValue(forKey: key) }
            self.counters.withLock { $0.record(outcome) }
        }
        run.attach(task)
        return run
    }

    /// Cancels every completion in progress.
    func cancelAll() {
        for run in active.withLock({ Array($0.values) }) { run.cancel() }
    }

    private static func generate(_ job: CompletionJob, sdk: RunAnywhereSDK, queue: RequestQueue, queueDepth: Int,
                                 into events: EventChannel) async -> ServerStatistics.Outcome {
        let model = job.model
        if let refusal = await refusal(model, sdk: sdk) {
            events.push(.failed(refusal))
            return .failed
        }
        do {
            try await queue.enter(model)
        } catch is RequestQueue.Full {
            events.push(.failed(.queueFull(model: model, depth: queueDepth)))
            return .refused
        } catch {
            events.push(.failed(APIError.from(RunAnywhereError.cancelled("Generation", modelId: model), model: model)))
            return .cancelled
        }
        var outcome = ServerStatistics.Outcome.cancelled
        do {
            for try await event in sdk.llm.generateStream(prompt: job.prompt, options: job.options) {
                switch event {
                case .text(let t): events.push(.text(t))
                case .completed(let r):
                    events.push(.completed(r))
                    outcome = r.finishReason == .cancelled ? .cancelled : .completed
                }
            }
            // A cancelled consumer ends the stream without a result: say so, or the HTTP thread would wait on.
            events.push(.failed(APIError.from(RunAnywhereError.cancelled("Generation", modelId: model), model: model)))
        } catch {
            let e = APIError.from(error, model: model)
            events.push(.failed(e))
            outcome = e.code == "cancelled" ? .cancelled : .failed
        }
        await queue.leave(model)
        return outcome
    }

    /// Why `model` cannot be served from this machine without a download, or nil when it can.
    private static func refusal(_ model: String, sdk: RunAnywhereSDK) async -> APIError? {
        guard let info = await sdk.models.get(id: model) else {
            return .unknownModel(model, reason: "Model '\(model)' is not known to this server (GET /v1/models lists the models it serves).")
        }
        guard info.category == .language || info.category == .vision else {
            return .invalid("Model '\(model)' is a \(info.category.rawValue) model, not a language model.", param: "model", code: "model_not_supported")
        }
        guard info.isDownloaded else {
            return .unknownModel(model, reason: "Model '\(model)' is not downloaded; the server never downloads. Run `runanywhere models pull \(model)` first.")
        }
        return nil
    }
}

/// What a server has served since it started.
public struct ServerStatistics: Sendable, Hashable, Codable {
    /// Completion requests accepted for generation (whatever became of them).
    public var accepted = 0
    /// Completions that ran to their end.
    public var completed = 0
    /// Completions stopped because their client went away (or the server shut down).
    public var cancelled = 0
    /// Completions refused because their model's queue was full.
    public var refused = 0
    /// Completions that failed (unknown model, loading failed, bad options).
    public var failed = 0

    enum Outcome { case completed, cancelled, refused, failed }

    mutating func record(_ outcome: Outcome) {
        switch outcome {
        case .completed: completed += 1
        case .cancelled: cancelled += 1
        case .refused: refused += 1
        case .failed: failed += 1
        }
    }
}
