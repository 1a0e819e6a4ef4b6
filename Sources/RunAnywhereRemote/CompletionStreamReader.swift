import Foundation
import RunAnywhereCore

/// Reads the streamed answer of `/v1/chat/completions` or `/v1/completions`: text pieces, the finish reason, the
/// usage block; a JSON (non-streamed) answer is read whole. Anything else is a malformed stream (`.generationFailed`).
struct CompletionStreamReader {
    let modelId: String
    let stops: [String]
    /// Where the answer comes from, for messages.
    let place: String

    var pieces = 0
    var finishReason: FinishReason?
    var usage: (prompt: Int, completion: Int)?
    private var parser = ServerSentEventParser()
    private var sawDone = false
    private var isEventStream: Bool?
    private var json = Data()

    init(modelId: String, stops: [String], place: String) {
        self.modelId = modelId
        self.stops = stops
        self.place = place
    }

    /// Bytes of a 2xx body.
    mutating func receive(_ bytes: UnsafeRawBufferPointer, head: HTTPResponseHead, emit: (String) -> Void) throws {
        if isEventStream == nil {
            isEventStream = !(head.header("content-type") ?? "").lowercased().contains("application/json")
        }
        guard isEventStream == true else {
            json.append(contentsOf: bytes)
            return
        }
        let events: [ServerSentEvent]
        do {
            events = try parser.feed(bytes)
        } catch {
            throw malformed("a line longer than 4 MiB")
        }
        for event in events { try handle(event, emit: emit) }
    }

    /// The end of the body: checks that the answer was complete.
    mutating func finish(emit: (String) -> Void) throws {
        if isEventStream == false {
            guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
                throw malformed("a JSON answer that does not parse: \(String(decoding: json.prefix(200), as: UTF8.self))")
            }
            try handle(object, emit: emit)
            return
        }
        if let last = parser.finish() { try handle(last, emit: emit) }
        guard sawDone || finishReason != nil else {
            throw RunAnywhereError(.generationFailed, "\(place) ended its stream before finishing (no finish_reason, no [DONE]) after \(pieces) pieces.", modelId: modelId)
        }
    }

    private mutating func handle(_ event: ServerSentEvent, emit: (String) -> Void) throws {
        let data = event.data.trimmingCharacters(in: .whitespaces)
        if data == "[DONE]" { sawDone = true; return }
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            throw malformed("an event that is not a JSON object: \(data.prefix(200))")
        }
        try handle(object, emit: emit)
    }

    private mutating func handle(_ object: [String: Any], emit: (String) -> Void) throws {
        if let error = object["error"] {
            let message = (error as? [String: Any])?["message"] as? String ?? "\(error)"
            throw RunAnywhereError(.generationFailed, "\(place) reported an error during generation: \(message.prefix(300))", modelId: modelId)
        }
        if let u = object["usage"] as? [String: Any], let p = u["prompt_tokens"] as? Int, let c = u["completion_tokens"] as? Int {
            usage = (p, c)
        }
        guard let choices = object["choices"] as? [[String: Any]] else {
            if object["usage"] != nil { return }
            throw malformed("an event without choices: \(String(describing: object).prefix(200))")
        }
        for choice in choices where (choice["index"] as? Int ?? 0) == 0 {
            let delta = choice["delta"] as? [String: Any]
            let message = choice["message"] as? [String: Any]
            if let piece = delta?["content"] as? String ?? message?["content"] as? String ?? choice["text"] as? String, !piece.isEmpty {
                pieces += 1
                emit(piece)
            }
            if let reason = choice["finish_reason"] as? String {
                finishReason = Self.finishReason(reason, stopReason: choice["stop_reason"], stops: stops)
            }
        }
    }

    /// The server's finish reason as ours. `stop` is a stop sequence only when the server says which (vLLM's
    /// `stop_reason`); llama.cpp's servers do not, so there it reads as the end of generation.
    static func finishReason(_ reason: String, stopReason: Any?, stops: [String]) -> FinishReason {
        switch reason {
        case "length": return .maxTokens
        case "stop":
            if let s = stopReason as? String, stops.contains(s) { return .stopSequence }
            return .endOfGeneration
        default: return .endOfGeneration
        }
    }

    private func malformed(_ what: String) -> RunAnywhereError {
        RunAnywhereError(.generationFailed, "\(place) sent a malformed stream: \(what).", modelId: modelId)
    }
}
