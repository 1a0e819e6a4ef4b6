import Foundation
import RunAnywhereGGUF

/// RunAnywhere's own GGUF engine as a backend: serves `.llamaCpp` (GGUF) language models of the
/// llama, qwen2 and qwen3 architectures on the CPU.
struct NativeBackend: InferenceBackend {
    let id = BackendID.native
    static let architectures: Set<String> = ["llama", "qwen2", "qwen3"]

    func cannotServe(_ model: ModelInfo) -> String? {
        guard model.framework == .llamaCpp else { return "it runs GGUF (llamaCpp) models, not \(model.framework.rawValue)" }
        guard model.format == .gguf else { return "the model file is \(model.format.rawValue), not GGUF" }
        guard model.category == .language || model.category == .vision else {
            return "\(model.category.rawValue) models need more than a text decoder and an image encoder, which is all it has"
        }
        if model.category == .vision, !model.artifact.files.contains(where: { $0.role == .projector }) {
            return "a vision model needs its projector file (role projector) next to the language model"
        }
        if let arch = model.architecture, !Self.architectures.contains(arch) {
            return "architecture '\(arch)' is not supported (supported: \(Self.architectures.sorted().joined(separator: ", ")))"
        }
        return nil
    }

    func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        let path = try primaryFile(model)
        let (_, d) = try GGUFInspector.describe(path, modelId: model.id)
        let context = contextLength ?? min(d.contextLength, GGUFInspector.defaultContextLength)
        let e = GGUFInspector.estimate(d, contextLength: context)
        let v = try visionEstimate(model, embeddingLength: d.embeddingLength)
        return BackendMemoryEstimate(totalBytes: Int64(e.totalBytes + v.weights + v.working), weightsBytes: Int64(e.weightsBytes + v.weights),
                                     workingBytes: Int64(e.kvCacheBytes + e.scratchBytes + v.working), contextLength: context,
                                     maximumContextLength: d.contextLength)
    }

    func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        let path = try primaryFile(request.model)
        do {
            let model = try GGUFModel(path: path.path)
            let vision = try projectorFile(request.model).map { try GGUFVisionModel(path: $0.path) }
            let context = try GGUFContext(model: model, contextLength: request.contextLength, threads: request.threads)
            return NativeModel(model: model, context: context, modelId: request.model.id, vision: vision)
        } catch let error as GGUFError {
            throw error.runAnywhereError(modelId: request.model.id, path: path)
        }
    }

    private func primaryFile(_ model: ModelInfo) throws -> URL {
        guard let path = model.primaryFilePath else {
            throw RunAnywhereError(.modelNotDownloaded, "Model '\(model.id)' is not on disk.", modelId: model.id)
        }
        return path
    }
}

/// A model loaded in the native engine: weights mapped, one KV cache and thread pool.
final class NativeModel: BackendModel, @unchecked Sendable {
    let model: GGUFModel
    let context: GGUFContext
    let modelId: String
    let template: ChatTemplate?
    /// The vision projector of a `.vision` model.
    let vision: GGUFVisionModel?

    init(model: GGUFModel, context: GGUFContext, modelId: String, vision: GGUFVisionModel? = nil) {
        self.model = model
        self.context = context
        self.modelId = modelId
        self.vision = vision
        template = ChatTemplate(file: model.file)
    }

    var memoryBytes: Int64 {
        Int64(context.memoryBytes) + Int64(model.description.tensorBytes) + Int64(vision?.file.fileSize ?? 0)
    }

    /// The prompt as the model expects it: through its chat template unless raw, or when it has none.
    func renderPrompt(_ request: BackendGenerationRequest) -> String {
        guard !request.options.rawPrompt, let template else {
            if let system = request.options.systemPrompt, !request.options.rawPrompt { return system + "\n\n" + request.prompt }
            return request.prompt
        }
        var messages: [ChatMessage] = []
        if let system = request.options.systemPrompt { messages.append(ChatMessage(role: "system", content: system)) }
        for turn in request.options.history { messages.append(ChatMessage(role: turn.role.rawValue, content: turn.content)) }
        messages.append(ChatMessage(role: "user", content: request.prompt))
        return template.render(messages, addGenerationPrompt: true)
    }

    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        let text = renderPrompt(request)
        let templated = template != nil && !request.options.rawPrompt
        // A template that writes the BOS text itself (Llama 2/3) must not get a second one.
        let addSpecial = !(templated && template?.rendersBOS(text) == true)
        let tokens = model.tokenizer.encode(text, addSpecial: addSpecial, parseSpecial: templated)
        guard !tokens.isEmpty else {
            throw RunAnywhereError(.invalidConfiguration, "The prompt is empty after tokenization.", modelId: modelId)
        }
        guard tokens.count < context.contextLength else {
            throw RunAnywhereError(.invalidConfiguration, "The prompt is \(tokens.count) tokens, more than the context window of \(context.contextLength). Load the model with a larger LoadOptions.contextLength or shorten the prompt.", modelId: modelId)
        }
        let o = request.options
        let sampling = SamplingParameters(temperature: Float(o.temperature), topK: o.topK, topP: Float(o.topP), minP: Float(o.minP),
                                          repetitionPenalty: Float(o.repetitionPenalty), seed: o.seed)
        do {
            let stats = try context.generate(prompt: tokens, sampling: sampling, maxTokens: o.maxTokens, stop: o.stopSequences,
                                             shouldContinue: shouldContinue, onText: onText)
            return BackendGenerationStats(promptTokens: stats.promptTokens, outputTokens: stats.generatedTokens,
                                          promptSeconds: stats.promptSeconds, decodeSeconds: stats.decodeSeconds,
                                          finishReason: FinishReason(stats.finishReason))
        } catch let error as GGUFError {
            throw RunAnywhereError(.generationFailed, "Generation with '\(modelId)' failed: \(error.message).", modelId: modelId)
        }
    }
}

extension FinishReason {
    init(_ engine: RunAnywhereGGUF.FinishReason) {
        switch engine {
        case .maxTokens: self = .maxTokens
        case .endOfGeneration: self = .endOfGeneration
        case .stopSequence: self = .stopSequence
        case .cancelled: self = .cancelled
        case .contextFull: self = .contextFull
        }
    }
}
