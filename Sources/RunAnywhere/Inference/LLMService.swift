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
        try await collect(generateStream(prompt: prompt, options: options), modelId: options.model)
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
    func generateStream(prompt: String, images: [VlmImage]?, options: LlmOptions) -> AsyncThrowingStream<GenerationEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<GenerationEvent, any Error>.makeStream(bufferingPolicy: .unbounded)
        let task = Task {
            do {
                try await self.run(prompt: prompt, images: images, options: options, continuation: continuation)
                continuation.finish()
            } catch is CancellationError {
                continuation.finish(throwing: RunAnywhereError.cancelled("Generation", modelId: options.model))
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func run(prompt: String, images: [VlmImage]?, options: LlmOptions,
                     continuation: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws {
        try options.validate()
        let start = monotonicSeconds()
        let id = try await resolveModel(options, vision: images != nil)
        try Task.checkCancellation()
        guard let lease = await models.residency.beginLease(id) else {
            throw RunAnywhereError(.modelNotLoaded, "Model '\(id)' was unloaded before generation could start.", modelId: id)
        }
        await lease.lock.acquire()
        let handle = lease.handle
        let firstToken = Mutex<Double?>(nil)
        let text = Mutex<String>("")
        let request = BackendGenerationRequest(prompt: prompt, options: options)
        let outcome = await Result(catching: {
            try await BlockingWork.run(name: "runanywhere-generate") { flag in
                let onText = { (piece: String) in
                    firstToken.withLock { if $0 == nil { $0 = monotonicSeconds() } }
                    text.withLock { $0 += piece }
                    continuation.yield(.text(piece))
                }
                guard let images else { return try handle.generate(request, onText: onText, shouldContinue: { !flag.isCancelled }) }
                guard let vision = handle as? any VisionLanguageModel else {
                    throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' cannot take images: it is not a vision model (or its backend has no vision support).", modelId: id)
                }
                return try vision.generate(request, images: images, onText: onText, shouldContinue: { !flag.isCancelled })
            }
        })
        // Hand the model back before reporting, so an unload right after this call frees it at once.
        await lease.lock.release()
        await models.residency.endLease(id, handle: handle)
        let stats = try outcome.get()
        let ttft = (firstToken.withLock { $0 } ?? monotonicSeconds()) - start
        let result = GenerationResult(
            text: text.withLock { $0 }, modelId: id, backend: lease.info.backend,
            promptTokens: stats.promptTokens, outputTokens: stats.outputTokens,
            timeToFirstTokenSeconds: ttft,
            promptTokensPerSecond: stats.promptSeconds > 0 ? Double(stats.promptTokens) / stats.promptSeconds : 0,
            tokensPerSecond: stats.decodeSeconds > 0 ? Double(max(0, stats.outputTokens - 1)) / stats.decodeSeconds : 0,
            finishReason: stats.finishReason)
        continuation.yield(.completed(result))
    }

    /// The model this call uses, loaded: the one named (downloaded and loaded on demand) or the resident one.
    private func resolveModel(_ options: LlmOptions, vision: Bool) async throws -> String {
        guard let id = options.model else {
            if let resident = await models.residency.mostRecent(category: vision ? .vision : .language) { return resident }
            throw RunAnywhereError(.modelNotLoaded, "No \(vision ? "vision" : "language") model is loaded. Name one in LlmOptions(model:) or load one with models.load(id:).")
        }
        var model = try await models.require(id)
        guard model.category == .language || model.category == .vision else {
            throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' is a \(model.category.rawValue) model, not a language model.", modelId: id)
        }
        if !model.isDownloaded {
            model = try await models.downloadToCompletion(id: id)
        }
        let loadOptions = options.loadOptions ?? LoadOptions()
        if await models.residency.isResident(id), options.loadOptions == nil {
            return id
        }
        _ = try await models.residency.load(model, options: loadOptions, evictIfNeeded: true)
        return id
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body, as a value.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

extension ModelManager {
    /// Downloads a model and waits for its verified files; progress is visible to anyone else
    /// downloading the same id (the transfer is shared).
    func downloadToCompletion(id: String) async throws -> ModelInfo {
        for try await event in try await download(id: id) {
            if case .completed(let model) = event { return model }
        }
        throw RunAnywhereError(.downloadFailed, "The download of '\(id)' ended without completing.", modelId: id)
    }
}
