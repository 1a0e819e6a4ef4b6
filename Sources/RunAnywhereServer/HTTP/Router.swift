import Foundation
import RunAnywhere
import Synchronization

/// Answers requests: key check, parsing, and the endpoints. Called on a connection thread, where it may block while
/// a completion waits for its turn and runs (never on a Swift concurrency thread).
final class Router: Sendable {
    private let sdk: RunAnywhereSDK
    private let runner: GenerationRunner
    private let apiKey: [UInt8]?
    private let draining = Atomic<Bool>(false)
    private let log: (@Sendable (String) -> Void)?
    /// How often a waiting request looks at its client.
    static let pollInterval: TimeInterval = 0.05

    init(sdk: RunAnywhereSDK, runner: GenerationRunner, apiKey: String?, log: (@Sendable (String) -> Void)?) {
        self.log = log
        self.sdk = sdk
        self.runner = runner
        self.apiKey = apiKey.map { Array($0.utf8) }
    }

    /// From now on, requests get 503 (the server is shutting down).
    func drain() { draining.store(true, ordering: .sequentiallyConsistent) }

    /// The answer to `request`, logged (one line per request: method, path, status, seconds, and for a completion
    /// its model and tokens; a stream's line comes when it ends).
    func respond(_ request: HTTPRequest) -> HTTPResponse {
        let started = ContinuousClock.now
        let line = { @Sendable (status: Int, note: String) in
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            self.log?("\(request.method) \(RequestParser.path(request.path)) \(status) \(String(format: "%.2f", seconds)) s\(note)")
        }
        let response = answer(request, log: line)
        if case .full(let status, _, _) = response, status != 200 || !request.path.contains("completions") { line(status, "") }
        return response
    }

    private func answer(_ request: HTTPRequest, log line: @escaping @Sendable (Int, String) -> Void) -> HTTPResponse {
        let path = RequestParser.path(request.path)
        if draining.load(ordering: .sequentiallyConsistent) {
            return .error(.shuttingDown)
        }
        if path != "/health", path != "/v1/health", !authorized(request.headers["authorization"]) {
            return .error(.unauthorized)
        }
        switch RequestParser.parse(method: request.method, path: request.path, body: request.body) {
        case .failure(let e):
            return .error(e, path: path)
        case .success(.health):
            return .json(200, ["status": "ok", "in_flight": .int(Int64(runner.inFlight)), "waiting": .int(Int64(runner.waiting))])
        case .success(.listModels):
            let models = blocking { [sdk] in await Self.servedModels(sdk) }
            return .json(200, ["object": "list", "data": .array(models.map(Self.describe))])
        case .success(.model(let id)):
            guard let model = blocking({ [sdk] in await Self.servedModels(sdk) }).first(where: { $0.id == id }) else {
                return .error(.unknownModel(id, reason: "Model '\(id)' is not served here (GET /v1/models lists the models that are)."))
            }
            return .json(200, Self.describe(model))
        case .success(.generate(let job)):
            return generate(job, request: request, log: line)
        }
    }

    /// The bearer key check, in time independent of where the keys differ.
    func authorized(_ header: String?) -> Bool {
        guard let apiKey else { return true }
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return false }
        return Self.constantTimeEquals(Array(header.utf8.dropFirst(7)), apiKey)
    }

    /// Whether `a` equals `b`, reading every byte of the longer one whatever they hold.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference: UInt8 = a.count == b.count ? 0 : 1
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }

    private func generate(_ job: CompletionJob, request: HTTPRequest, log line: @escaping @Sendable (Int, String) -> Void) -> HTTPResponse {
        let run = runner.start(job)
        let response = CompletionResponse(job: job)
        // Wait for the whole result, or (streaming) for the first text: until then a failure still has its status.
        while true {
            guard let item = run.events.next(timeout: Self.pollInterval) else {
                if request.clientGone() {
                    run.cancel()
                    return .error(APIError(status: 499, message: "The client closed the connection.", type: "server_error", code: "cancelled"))
                }
                continue
            }
            switch item {
            case .failed(let e):
                return .error(e)
            case .completed(let r) where !job.stream:
                line(200, Self.note(r))
                return .json(200, response.full(r))
            case .text where !job.stream:
                continue
            case .text, .completed:
                let stream = CompletionEventStream(run: run, response: response, first: item, clientGone: request.clientGone) { result in
                    line(200, result.map(Self.note) ?? " \(job.model), stream ended early")
                }
                return .stream(headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")], body: stream)
            }
        }
    }

    /// What a log line says of a completion: model, prompt + generated tokens, why it stopped.
    static func note(_ r: GenerationResult) -> String {
        " \(r.modelId), \(r.promptTokens)+\(r.outputTokens) tokens, \(r.finishReason.rawValue)"
    }

    /// The models this server answers for: language and vision models on disk.
    static func servedModels(_ sdk: RunAnywhereSDK) async -> [ModelInfo] {
        let all = (try? await sdk.models.list(filter: ModelFilter(downloadedOnly: true))) ?? []
        return all.filter { $0.category == .language || $0.category == .vision }
    }

    /// A model as `GET /v1/models` lists it.
    static func describe(_ model: ModelInfo) -> JSONValue {
        var created: Int64 = 0
        if let path = model.primaryFilePath ?? model.localPath,
           let date = (try? FileManager.default.attributesOfItem(atPath: path.path))?[.modificationDate] as? Date {
            created = Int64(date.timeIntervalSince1970)
        }
        var fields: [String: JSONValue] = ["id": .string(model.id), "object": "model", "created": .int(created),
                                           "owned_by": "runanywhere", "name": .string(model.name)]
        if let c = model.contextLength { fields["context_length"] = .int(Int64(c)) }
        if let a = model.architecture { fields["architecture"] = .string(a) }
        if let q = model.quantization { fields["quantization"] = .string(q) }
        return .object(fields)
    }
}

/// Runs `body` to completion from a thread outside Swift concurrency, and returns its value.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    guard let value = result.withLock({ $0 }) else { preconditionFailure("the task stores its value before signalling") }
    return value
}
