import Foundation
import RunAnywhereCore
import RunAnywhereGGUF

/// RunAnywhere's own GGUF engine as a backend: serves `.llamaCpp` (GGUF) language models of the
/// llama, qwen2, qwen3 and gemma3 architectures on the CPU.
public struct NativeBackend: InferenceBackend {
    /// `.native`.
    public let id = BackendID.native
    /// The architectures the engine runs.
    public static let architectures: Set<String> = ["llama", "qwen2", "qwen3", "gemma3"]

    /// Creates the backend.
    public init() {}

    public func cannotServe(_ model: ModelInfo) -> String? {
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

    public func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        try prepareGGUF(model, contextLength: contextLength).estimate
    }

    public func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        try prepareGGUF(request.model, contextLength: request.contextLength).load(request)
    }

    /// Opens the GGUF once: the header read for the estimate is the one the load maps.
    public func prepare(_ model: ModelInfo, contextLength: Int?) throws -> any PreparedLoad {
        try prepareGGUF(model, contextLength: contextLength)
    }

    public func inspect(_ model: ModelInfo) throws -> ModelInfo? {
        guard model.format == .gguf, let path = model.primaryFilePath else { return nil }
        return try GGUFInspector.enrich(model, primaryFile: path)
    }

    public func releaseFreedMemory() {
        GGUFEngine.releaseFreedMemory()
    }

    private func prepareGGUF(_ model: ModelInfo, contextLength: Int?) throws -> NativePreparedLoad {
        let path = try primaryFile(model)
        let (file, d) = try GGUFInspector.describe(path, modelId: model.id)
        if !d.uncomputableTensorTypes.isEmpty {
            // Before anything is allocated: the routing passes the model to the next backend that can serve it.
            let types = d.uncomputableTensorTypes.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value) tensor\($0.value == 1 ? "" : "s"))" }
            throw RunAnywhereError(.backendUnavailable, "The native engine cannot run this model (\(path.lastPathComponent)): it has \(types.joined(separator: ", ")), which the engine cannot compute with (it computes \(GGMLType.allCases.filter(\.isComputable).map(\.name).joined(separator: ", "))).", modelId: model.id)
        }
        let context = contextLength ?? GGUFInspector.defaultContextLength(d)
        let e = GGUFInspector.estimate(d, contextLength: context)
        let projector = try openProjector(model, embeddingLength: d.embeddingLength, contextLength: context)
        let v = (weights: projector?.weights ?? 0, working: projector?.working ?? 0)
        let estimate = BackendMemoryEstimate(totalBytes: Int64(e.totalBytes + v.weights + v.working),
                                             weightsBytes: Int64(e.weightsBytes + v.weights),
                                             workingBytes: Int64(e.kvCacheBytes + e.scratchBytes + v.working), contextLength: context,
                                             maximumContextLength: d.contextLength)
        return NativePreparedLoad(file: file, path: path, vision: projector?.vision, estimate: estimate)
    }

    private func primaryFile(_ model: ModelInfo) throws -> URL {
        guard let path = model.primaryFilePath else {
            throw RunAnywhereError(.modelNotDownloaded, "Model '\(model.id)' is not on disk.", modelId: model.id)
        }
        return path
    }
}

/// A GGUF file opened for a load (header parsed, tensors mapped, nothing else allocated yet).
struct NativePreparedLoad: PreparedLoad {
    /// The open file.
    let file: GGUFFile
    let path: URL
    /// The projector of a `.vision` model, opened by the estimate (header parsed, tensors mapped).
    let vision: GGUFVisionModel?
    let estimate: BackendMemoryEstimate

    func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        do {
            let model = try GGUFModel(file: file)
            let context = try GGUFContext(model: model, contextLength: request.contextLength, threads: request.threads)
            return NativeModel(model: model, context: context, modelId: request.model.id, vision: vision)
        } catch let error as GGUFError {
            throw error.runAnywhereError(modelId: request.model.id, path: path)
        }
    }
}

/// A model loaded in the native engine: weights mapped, one KV cache and thread pool.
final class NativeModel: TextGenerationModel, @unchecked Sendable {
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
        guard !request.options.rawPrompt, let template else { return request.untemplatedPrompt }
        return template.render(request.conversation.map { ChatMessage(role: $0.role, content: $0.content) }, addGenerationPrompt: true)
    }

    /// The prompt's token ids, through the chat template unless raw.
    func promptTokens(_ request: BackendGenerationRequest) -> [Int32] {
        let text = renderPrompt(request)
        let templated = template != nil && !request.options.rawPrompt
        // A template that writes the BOS text itself (Llama 2/3) must not get a second one.
        let addSpecial = !(templated && template?.rendersBOS(text) == true)
        return model.tokenizer.encode(text, addSpecial: addSpecial, parseSpecial: templated)
    }

    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        let (request, tokens, dropped) = request.fittingContext(context.contextLength) { promptTokens($0) }
        try BackendGenerationRequest.checkPrompt(tokenCount: tokens.count, contextLength: context.contextLength, modelId: modelId)
        let o = request.options
        let sampling = SamplingParameters(temperature: Float(o.temperature), topK: o.topK, topP: Float(o.topP), minP: Float(o.minP),
                                          repetitionPenalty: Float(o.repetitionPenalty), seed: o.seed)
        do {
            let stats = try context.generate(prompt: tokens, sampling: sampling, maxTokens: o.maxTokens, stop: o.stopSequences,
                                             shouldContinue: shouldContinue, onText: onText)
            return BackendGenerationStats(promptTokens: stats.promptTokens, outputTokens: stats.generatedTokens,
                                          promptSeconds: stats.promptSeconds, decodeSeconds: stats.decodeSeconds,
                                          finishReason: RunAnywhereCore.FinishReason(stats.finishReason), droppedHistoryTurns: dropped,
                                          reusedPromptTokens: stats.promptTokens - stats.evaluatedPromptTokens)
        } catch let error as GGUFError {
            throw RunAnywhereError(.generationFailed, "Generation with '\(modelId)' failed: \(error.message).", modelId: modelId)
        }
    }
}

/// The engine is a leaf that knows nothing of the SDK, so it has its own finish reasons; this is the one place where
/// they become the SDK's (exhaustive: a new engine reason does not compile until it is mapped).
extension RunAnywhereCore.FinishReason {
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
