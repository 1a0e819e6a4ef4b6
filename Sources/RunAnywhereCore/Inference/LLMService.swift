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
        var final: GenerationResult?
        for try await event in generateStream(prompt: prompt, options: options) {
            if case .completed(let r) = event { final = r }
        }
        guard let final else {
            throw RunAnywhereError(.generationFailed, "Generation ended without a result.", modelId: options.model)
        }
        return final
    }

    /// Like ``generate(prompt:options:)``, streaming text as it is produced and ending with `.completed`.
    /// Cancelling the consuming task (or dropping the stream) stops generation between two tokens.
    public func generateStream(prompt: String, options: LlmOptions = LlmOptions()) -> AsyncThrowingStream<GenerationEvent, any Error> {
        .serviceCall("Generation", modelId: options.model) { continuation in
            try await self.run(prompt: prompt, options: options, continuation: continuation)
        }
    }

    private func run(prompt: String, options: LlmOptions, continuation: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws {
        try options.validate()
        let start = monotonicSeconds()
        let id = try await models.residentModel(options.model, loadOptions: options.loadOptions, need: .init(
            categories: [.language, .vision], fallback: .language, kind: "language model", optionsField: "LlmOptions(model:)"))
        try Task.checkCancellation()
        let firstToken = Mutex<Double?>(nil)
        let text = Mutex<String>("")
        let request = BackendGenerationRequest(prompt: prompt, options: options)
        let (stats, info) = try await models.residency.withLease(id) { handle, info in
            guard let model = handle as? any TextGenerationModel else {
                throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' does not generate text (loaded by \(info.backend.rawValue)).", modelId: id)
            }
            let stats = try await BlockingWork.run(name: "runanywhere-generate") { flag in
                try model.generate(request, onText: { piece in
                    firstToken.withLock { if $0 == nil { $0 = monotonicSeconds() } }
                    text.withLock { $0 += piece }
                    continuation.yield(.text(piece))
                }, shouldContinue: { !flag.isCancelled })
            }
            return (stats, info)
        }
        let ttft = (firstToken.withLock { $0 } ?? monotonicSeconds()) - start
        let result = GenerationResult(
            text: text.withLock { $0 }, modelId: id, backend: info.backend,
            promptTokens: stats.promptTokens, outputTokens: stats.outputTokens,
            timeToFirstTokenSeconds: ttft,
            promptTokensPerSecond: stats.promptSeconds > 0 ? Double(stats.promptTokens) / stats.promptSeconds : 0,
            tokensPerSecond: stats.decodeSeconds > 0 ? Double(max(0, stats.outputTokens - 1)) / stats.decodeSeconds : 0,
            finishReason: stats.finishReason)
        continuation.yield(.completed(result))
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body, as a value.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
