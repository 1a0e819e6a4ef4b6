import Foundation
import RunAnywhere
import RunAnywhereRemote
import RunAnywhereTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A scripted OpenAI-compatible server on loopback (the project's loopback HTTP server with OpenAI routes): fast
/// enough for the routing, privacy and error tests, which need no real model.
struct FakeOpenAIServer {
    let server: LoopbackHTTPServer
    static let model = "big-model"

    init(models: [String] = [FakeOpenAIServer.model], pieces: [String] = ["Hello", ",", " world"], usage: (Int, Int)? = (7, 3)) throws {
        server = try LoopbackHTTPServer()
        let list = try JSONSerialization.data(withJSONObject: ["object": "list", "data": models.map { ["id": $0, "object": "model"] }])
        server.setRoute("/v1/models", LoopbackRoute(body: [UInt8](list), extraHeaders: [LoopbackHeader("Content-Type", "application/json")]))
        setStream(pieces: pieces, usage: usage)
    }

    var baseURL: URL { server.baseURL }

    /// Sets what `/v1/chat/completions` (and `/v1/completions`) stream back.
    func setStream(pieces: [String], finish: String = "stop", usage: (Int, Int)? = (7, 3), plan: [LoopbackAction] = []) {
        var body = ""
        for p in pieces {
            body += Self.event(["choices": [["index": 0, "delta": ["content": p], "text": p, "finish_reason": NSNull()]]])
        }
        body += Self.event(["choices": [["index": 0, "delta": [:] as [String: Any], "finish_reason": finish]]])
        if let usage { body += Self.event(["choices": [] as [Any], "usage": ["prompt_tokens": usage.0, "completion_tokens": usage.1]]) }
        body += "data: [DONE]\n\n"
        setRaw(body, plan: plan)
    }

    /// Streams `body` as written (for malformed streams).
    func setRaw(_ body: String, plan: [LoopbackAction] = []) {
        let route = LoopbackRoute(body: Array(body.utf8), acceptsRanges: false,
                                  extraHeaders: [LoopbackHeader("Content-Type", "text/event-stream")], plan: plan)
        server.setRoute("/v1/chat/completions", route)
        server.setRoute("/v1/completions", route)
    }

    /// Answers every generation request with an HTTP error and a JSON error document.
    func setError(status: Int, message: String, headers: [LoopbackHeader] = []) {
        let doc = try? JSONSerialization.data(withJSONObject: ["error": ["message": message, "type": "server_error"]])
        let route = LoopbackRoute(fallback: .status(status, headers: headers, body: [UInt8](doc ?? Data())))
        server.setRoute("/v1/chat/completions", route)
        server.setRoute("/v1/completions", route)
    }

    static func event(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return "data: " + String(decoding: data, as: UTF8.self) + "\n\n"
    }

    func stop() { server.stop() }
}

/// An SDK over a temporary root (default backends plus those of its configuration) and a mirror for local models.
struct RemoteEnvironment {
    let dir: TemporaryDirectory
    let mirror: ModelMirror
    let sdk: RunAnywhereSDK

    init(endpoints: [RemoteEndpoint] = [], routing: RemoteRouting = .never, memoryBudget: Int64? = nil,
         environment: [String: String] = [:]) throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-remote")
        mirror = try ModelMirror()
        sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
            storageRoot: dir.url, memoryBudgetBytes: memoryBudget, environment: environment,
            remoteEndpoints: endpoints, remoteRouting: routing))
    }

    /// Registers and downloads the demo model (native engine); returns its id.
    func demo() async throws -> String {
        let info = try await mirror.registerDemoModel(.forest, with: sdk)
        for try await _ in try await sdk.models.download(id: info.id) {}
        return info.id
    }

    /// Publishes a GGUF file from disk, registers it under `id` and downloads it.
    func addLocal(_ path: String, id: String) async throws {
        let url = mirror.publish(id + ".gguf", data: try Data(contentsOf: URL(fileURLWithPath: path)))
        _ = try await sdk.registerModel(id: id, name: id, url: url.absoluteString, framework: .llamaCpp, modality: .language)
        for try await _ in try await sdk.models.download(id: id) {}
    }

    func close() {
        mirror.stop()
        dir.remove()
    }
}

/// A loopback server that accepts connections and never answers (a server too slow to be of use).
final class StallingServer: @unchecked Sendable {
    private let fd: Int32
    let port: Int
    private var held: [Int32] = []
    private let lock = NSLock()

    init() throws {
        (fd, port) = try bindLoopback(listening: true)
        let listener = fd
        Thread.detachNewThread { [weak self] in
            while true {
                let c = accept(listener, nil, nil)
                guard c >= 0 else { return }
                self?.lock.withLock { self?.held.append(c) }
            }
        }
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Connections accepted so far.
    var accepted: Int { lock.withLock { held.count } }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        lock.withLock { for c in held { close(c) }; held.removeAll() }
    }
}
