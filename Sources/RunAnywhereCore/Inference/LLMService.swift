import Foundation
import Synchronization

/// `RunAnywhere.llm`: text generation with language models.
///
/// ```swift
/// let result = try await RunAnywhere.llm.generate(prompt: "Hello", options: LlmOptions(model: "qwen3-0.6b"))
/// print(result.text, result.tokensPerSecond)
/// ```
public final class LLMService: Sendable {
    let models: ModelManager

    init(models: ModelManager) {
        self.models = models
    }

    /// Generates text for a prompt, loading (and first downloading) `options.model` when needed.
    ///
    /// With no model named, the most recently used resident language model serves the call.
    /// The model's chat template is applied unless `options.rawPrompt`. Calls on one model run one at a time.
    /// - Throws: `.modelNotLoaded` when no model is named and none is resident; the errors of
    ///   `models.download(id:)` and `models.load(id:options:)`; `.invalidConfiguration` for bad options;
    ///   `.cancelled` when the calling task is cancelled before anything was produced.
    public func generate(prompt: String, options: LlmOptions = LlmOptions()) async throws -> GenerationResult {
        try await collect(generateStream(prompt: prompt, images: nil, options: options, streamsText: false), modelId: options.model)
    }

    /// The `.completed` result of a stream.
    func collect(_ stream: AsyncThrowingStream<GenerationEvent, any Error>, modelId: String?) async throws -> GenerationResult {
        var final: GenerationResult?
        for try await event in stream {
            if case .completed(let r) = event { final = r }
        }
        guard let final else {
            throw RunAnywhereError(.generationFailed, "Generation ended without a result.", modelId: modelId)
        }
        return final
    }

    /// Like ``generate(prompt:options:)``, streaming text as it is produced and ending with `.completed`.
    /// Cancelling the consuming task (or dropping the stream) stops generation between two tokens.
    public func generateStream(prompt: String, options: LlmOptions = LlmOptions()) -> AsyncThrowingStream<GenerationEvent, any Error> {
        generateStream(prompt: prompt, images: nil, options: options)
    }

    /// The stream of a text prompt (`images` nil) or of a prompt about images (`RunAnywhere.vlm`).
    /// - Parameter streamsText: yield `.text` events; without them (``generate(prompt:options:)``, which only wants the
    ///   result) the consumer is not woken once per token, which on a machine with few cores takes a core from the
    ///   generation threads every token.
    func generateStream(prompt: String, images: [VlmImage]?, options: LlmOptions,
                        streamsText: Bool = true) -> AsyncThrowingStream<GenerationEvent, any Error> {
        .serviceCall("Generation", modelId: options.model) { continuation in
            try await self.run(prompt: prompt, images: images, options: options, streamsText: streamsText, continuation: continuation)
        }
    }

    private func run(prompt: String, images: [VlmImage]?, options: LlmOptions, streamsText: Bool,
                     continuation: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws {
        try options.validate()
        let start = monotonicSeconds()
        let id = try await models.residentModel(options.model, loadOptions: options.loadOptions, need: images == nil
            ? .init(categories: [.language, .vision], fallback: .language, kind: "language model", optionsField: "LlmOptions(model:)")
            : .init(categories: [.vision], fallback: .vision, kind: "vision model", optionsField: "LlmOptions(model:)"))
        try Task.checkCancellation()
        let firstToken = Mutex<Double?>(nil)
        let text = Mutex<String>("")
        let request = BackendGenerationRequest(prompt: prompt, options: options)
        @Sendable func generate(on handle: any BackendModel, _ info: LoadedModel) async throws -> BackendGenerationStats {
            try await BlockingWork.run(name: "runanywhere-generate") { flag in
                let onText = { (piece: String) in
                    firstToken.withLock { if $0 == nil { $0 = monotonicSeconds() } }
                    text.withLock { $0 += piece }
                    if streamsText { continuation.yield(.text(piece)) }
                }
                if let images {
                    guard let vision = handle as? any VisionLanguageModel else {
                        throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' cannot take images: it is not a vision model (or its backend has no vision support).", modelId: id)
                    }
                    return try vision.generate(request, images: images, onText: onText, shouldContinue: { !flag.isCancelled })
                }
                guard let model = handle as? any TextGenerationModel else {
                    throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' does not generate text (loaded by \(info.backend.rawValue)).", modelId: id)
                }
                return try model.generate(request, onText: onText, shouldContinue: { !flag.isCancelled })
            }
        }
        let stats: BackendGenerationStats, info: LoadedModel
        // A model busy with another call may send this one to a remote endpoint (RemoteRouting .busy) instead of waiting
        // (the registry is read only when the routing allows that: it scans the model folders).
        if images == nil, models.residency.routing.reroutes(.busy), let model = await models.get(id: id),
           let detour = try await models.residency.busyDetour(model) {
            (stats, info) = (try await generate(on: detour.handle, detour.info), detour.info)
        } else {
            (stats, info) = try await models.residency.withLease(id) { handle, info in (try await generate(on: handle, info), info) }
        }
        let ttft = (firstToken.withLock { $0 } ?? monotonicSeconds()) - start
        let result = GenerationResult(
            text: text.withLock { $0 }, modelId: id, backend: info.backend,
            promptTokens: stats.promptTokens, outputTokens: stats.outputTokens,
            timeToFirstTokenSeconds: ttft,
            promptTokensPerSecond: stats.promptSeconds > 0 ? Double(stats.promptTokens) / stats.promptSeconds : 0,
            tokensPerSecond: stats.decodeSeconds > 0 ? Double(max(0, stats.outputTokens - 1)) / stats.decodeSeconds : 0,
            finishReason: stats.finishReason, droppedHistoryTurns: stats.droppedHistoryTurns, reusedPromptTokens: stats.reusedPromptTokens,
            backendNote: [info.backendNote, stats.note].compactMap { $0 }.joined(separator: "; ").nilIfEmpty)
        continuation.yield(.completed(result))
    }
}

extension String {
    /// Nil for the empty string.
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
