import Foundation

/// A scripted OpenAI-compatible server on loopback (the project's loopback HTTP server with OpenAI routes): fast
/// enough for the routing, privacy and error tests, which need no real model.
public struct FakeOpenAIServer: Sendable {
    /// The HTTP server underneath (its request log shows what a client sent).
    public let server: LoopbackHTTPServer
    /// The model it lists by default.
    public static let model = "big-model"

    /// Starts a server listing `models` and streaming `pieces` (then a usage block, when given) to every generation.
    public init(models: [String] = [FakeOpenAIServer.model], pieces: [String] = ["Hello", ",", " world"], usage: (Int, Int)? = (7, 3)) throws {
        server = try LoopbackHTTPServer()
        let list = try JSONSerialization.data(withJSONObject: ["object": "list", "data": models.map { ["id": $0, "object": "model"] }])
        server.setRoute("/v1/models", LoopbackRoute(body: [UInt8](list), extraHeaders: [LoopbackHeader("Content-Type", "application/json")]))
        setStream(pieces: pieces, usage: usage)
    }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { server.baseURL }

    /// Sets what `/v1/chat/completions` (and `/v1/completions`) stream back.
    public func setStream(pieces: [String], finish: String = "stop", usage: (Int, Int)? = (7, 3), plan: [LoopbackAction] = []) {
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
    public func setRaw(_ body: String, plan: [LoopbackAction] = []) {
        let route = LoopbackRoute(body: Array(body.utf8), acceptsRanges: false,
                                  extraHeaders: [LoopbackHeader("Content-Type", "text/event-stream")], plan: plan)
        server.setRoute("/v1/chat/completions", route)
        server.setRoute("/v1/completions", route)
    }

    /// Answers every generation request with an HTTP error and a JSON error document.
    public func setError(status: Int, message: String, headers: [LoopbackHeader] = []) {
        let doc = try? JSONSerialization.data(withJSONObject: ["error": ["message": message, "type": "server_error"]])
        let route = LoopbackRoute(fallback: .status(status, headers: headers, body: [UInt8](doc ?? Data())))
        server.setRoute("/v1/chat/completions", route)
        server.setRoute("/v1/completions", route)
    }

    /// One `data:` event of a JSON object.
    public static func event(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return "data: " + String(decoding: data, as: UTF8.self) + "\n\n"
    }

    /// Stops serving.
    public func stop() { server.stop() }
}
