import Foundation
import RunAnywhere

/// The bodies of one completion's answer in OpenAI's shapes: the whole response, or the chunks of a stream.
struct CompletionResponse: Sendable {
    let job: CompletionJob
    /// `chatcmpl-…` or `cmpl-…`, the same on every chunk of a stream.
    let id: String
    /// Unix seconds when the request was accepted.
    let created: Int64

    init(job: CompletionJob, now: Date = Date()) {
        self.job = job
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24)
        id = (job.kind == .chat ? "chatcmpl-" : "cmpl-") + suffix
        created = Int64(now.timeIntervalSince1970)
    }

    private var object: String { job.kind == .chat ? "chat.completion" : "text_completion" }
    private var chunkObject: String { job.kind == .chat ? "chat.completion.chunk" : "text_completion" }

    /// OpenAI's `finish_reason`: "length" when a limit cut the text, else "stop".
    static func finishReason(_ reason: FinishReason) -> String {
        switch reason {
        case .maxTokens, .contextFull: return "length"
        case .endOfGeneration, .stopSequence, .cancelled: return "stop"
        }
    }

    /// vLLM's `stop_reason` beside `finish_reason`: the stop sequence that ended the text, so that a client can tell
    /// it from the end of generation (our remote backend reads it). Given when the request had one stop sequence;
    /// with several the SDK does not say which matched, and it is null as for any other ending.
    func stopReason(_ r: GenerationResult) -> JSONValue {
        guard r.finishReason == .stopSequence, job.options.stopSequences.count == 1, let stop = job.options.stopSequences.first else { return nil }
        return .string(stop)
    }

    /// The `usage` block.
    static func usage(_ r: GenerationResult) -> JSONValue {
        ["prompt_tokens": .int(Int64(r.promptTokens)), "completion_tokens": .int(Int64(r.outputTokens)),
         "total_tokens": .int(Int64(r.promptTokens + r.outputTokens))]
    }

    private func envelope(_ object: String, model: String, choices: [JSONValue], extra: [String: JSONValue] = [:]) -> JSONValue {
        var fields: [String: JSONValue] = ["id": .string(id), "object": .string(object), "created": .int(created),
                                           "model": .string(model), "choices": .array(choices)]
        fields.merge(extra) { _, new in new }
        return .object(fields)
    }

    /// The non-streaming response.
    func full(_ r: GenerationResult) -> JSONValue {
        let finish = JSONValue.string(Self.finishReason(r.finishReason))
        let choice: JSONValue = job.kind == .chat
            ? ["index": 0, "message": ["role": "assistant", "content": .string(r.text)], "logprobs": nil, "finish_reason": finish,
               "stop_reason": stopReason(r)]
            : ["index": 0, "text": .string(r.text), "logprobs": nil, "finish_reason": finish, "stop_reason": stopReason(r)]
        return envelope(object, model: r.modelId, choices: [choice], extra: ["usage": Self.usage(r)])
    }

    /// The first chunk of a chat stream: the assistant's role, no text yet (nil for text completions).
    func openingChunk() -> JSONValue? {
        guard job.kind == .chat else { return nil }
        return envelope(chunkObject, model: job.model, choices: [["index": 0, "delta": ["role": "assistant", "content": ""], "logprobs": nil, "finish_reason": nil]])
    }

    /// A chunk carrying more text.
    func textChunk(_ text: String) -> JSONValue {
        let choice: JSONValue = job.kind == .chat
            ? ["index": 0, "delta": ["content": .string(text)], "logprobs": nil, "finish_reason": nil]
            : ["index": 0, "text": .string(text), "logprobs": nil, "finish_reason": nil]
        return envelope(chunkObject, model: job.model, choices: [choice])
    }

    /// The chunk that says why the text ended.
    func closingChunk(_ r: GenerationResult) -> JSONValue {
        let finish = JSONValue.string(Self.finishReason(r.finishReason))
        let choice: JSONValue = job.kind == .chat
            ? ["index": 0, "delta": [:], "logprobs": nil, "finish_reason": finish, "stop_reason": stopReason(r)]
            : ["index": 0, "text": "", "logprobs": nil, "finish_reason": finish, "stop_reason": stopReason(r)]
        return envelope(chunkObject, model: r.modelId, choices: [choice])
    }

    /// The last chunk when `stream_options.include_usage`: no choices, the usage block.
    func usageChunk(_ r: GenerationResult) -> JSONValue {
        envelope(chunkObject, model: r.modelId, choices: [], extra: ["usage": Self.usage(r)])
    }

    /// One server-sent event carrying `value`.
    static func event(_ value: JSONValue) -> [UInt8] {
        Array("data: ".utf8) + value.encoded() + Array("\n\n".utf8)
    }

    /// The event that ends a stream.
    static let done = Array("data: [DONE]\n\n".utf8)
}
