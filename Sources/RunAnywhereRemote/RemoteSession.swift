import Foundation
import RunAnywhereCore

/// A model "loaded" on a remote endpoint: nothing is held on the device; each call is one streamed request
/// (`/v1/chat/completions`, or `/v1/completions` for `rawPrompt`), whose text arrives as server-sent events.
final class RemoteSession: TextGenerationModel, @unchecked Sendable {
    let client: RemoteClient
    let modelId: String
    let serverModel: String

    init(client: RemoteClient, modelId: String, serverModel: String) {
        self.client = client
        self.modelId = modelId
        self.serverModel = serverModel
    }

    var memoryBytes: Int64 { 0 }

    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        let raw = request.options.rawPrompt
        let path = raw ? "completions" : "chat/completions"
        let body = try JSONSerialization.data(withJSONObject: requestBody(request))
        let start = monotonicSeconds()
        var reader = CompletionStreamReader(modelId: modelId, stops: request.options.stopSequences, place: client.place(path))
        let flag = CancellationFlag()
        var firstPieceAt: Double?
        do {
            try withoutActuallyEscaping(onText) { onText in
                let emit = { (piece: String) in
                    if firstPieceAt == nil { firstPieceAt = monotonicSeconds() }
                    onText(piece)
                }
                try withoutActuallyEscaping(shouldContinue) { shouldContinue in
                    _ = try client.perform(path, body: body, modelId: modelId, cancellation: flag, shouldContinue: shouldContinue) { head, bytes in
                        try reader.receive(bytes, head: head, emit: emit)
                    }
                }
                try reader.finish(emit: emit)
            }
        } catch let error as RunAnywhereError where error.code == .cancelled {
            reader.finishReason = .cancelled
        }
        let end = monotonicSeconds()
        let first = firstPieceAt ?? end
        var notes: [String] = []
        if reader.usage == nil {
            notes.append("the server sent no token counts (stream_options.include_usage unsupported): output tokens are the pieces streamed, prompt tokens unknown (0)")
        }
        return BackendGenerationStats(promptTokens: reader.usage?.prompt ?? 0,
                                      outputTokens: reader.usage?.completion ?? reader.pieces,
                                      promptSeconds: first - start, decodeSeconds: end - first,
                                      finishReason: reader.finishReason ?? .endOfGeneration,
                                      note: notes.isEmpty ? nil : notes.joined(separator: "; "))
    }

    /// The JSON of a streamed request with every option the server can honour.
    func requestBody(_ request: BackendGenerationRequest) -> [String: Any] {
        let o = request.options
        var body: [String: Any] = [
            "model": serverModel, "stream": true, "stream_options": ["include_usage": true],
            "max_tokens": o.maxTokens, "temperature": o.temperature, "top_p": o.topP,
        ]
        if o.rawPrompt {
            body["prompt"] = request.untemplatedPrompt
        } else {
            body["messages"] = request.conversation.map { ["role": $0.role, "content": $0.content] }
        }
        if let seed = o.seed { body["seed"] = Int64(bitPattern: seed & 0x7fff_ffff_ffff_ffff) }
        if !o.stopSequences.isEmpty { body["stop"] = o.stopSequences }
        if client.endpoint.sendsSamplingExtensions {
            // Not in the OpenAI API; llama.cpp's servers and vLLM read them. Sent so the server samples as the device
            // would (llama.cpp's server otherwise applies its own repeat penalty of 1.1).
            body["top_k"] = o.topK
            body["min_p"] = o.minP
            body["repeat_penalty"] = o.repetitionPenalty
            body["repetition_penalty"] = o.repetitionPenalty
        }
        return body
    }
}
