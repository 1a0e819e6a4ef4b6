import Foundation

/// What a backend must know to load a model.
public struct BackendLoadRequest: Sendable {
    /// The model (downloaded: `primaryFilePath` is set).
    public var model: ModelInfo
    /// Context window to allocate, tokens (already resolved against the model's maximum).
    public var contextLength: Int
    /// CPU threads.
    public var threads: Int

    /// Creates a load request.
    public init(model: ModelInfo, contextLength: Int, threads: Int) {
        self.model = model
        self.contextLength = contextLength
        self.threads = threads
    }
}

/// What a backend must know to generate.
public struct BackendGenerationRequest: Sendable {
    /// The user's prompt.
    public var prompt: String
    /// Generation options.
    public var options: LlmOptions

    /// Creates a generation request.
    public init(prompt: String, options: LlmOptions) {
        self.prompt = prompt
        self.options = options
    }
}

/// Statistics a backend reports for one generation.
public struct BackendGenerationStats: Sendable, Hashable {
    /// Tokens in the prompt as evaluated.
    public var promptTokens: Int
    /// Tokens generated.
    public var outputTokens: Int
    /// Seconds spent on the prompt.
    public var promptSeconds: Double
    /// Seconds spent generating after the prompt.
    public var decodeSeconds: Double
    /// Why it stopped.
    public var finishReason: FinishReason
    /// Oldest history turns left out to fit the context window (``BackendGenerationRequest/fittingContext(_:tokenize:)``).
    public var droppedHistoryTurns: Int
    /// Tokens at the start of the prompt found in the KV cache from the previous generation and not evaluated again.
    public var reusedPromptTokens: Int
    /// Something the caller should know about how these figures were obtained (a server that reported no token
    /// counts), else nil. Shown in `GenerationResult.backendNote`.
    public var note: String?

    /// Creates statistics.
    public init(promptTokens: Int, outputTokens: Int, promptSeconds: Double, decodeSeconds: Double, finishReason: FinishReason,
                droppedHistoryTurns: Int = 0, reusedPromptTokens: Int = 0, note: String? = nil) {
        self.reusedPromptTokens = reusedPromptTokens
        self.promptTokens = promptTokens
        self.outputTokens = outputTokens
        self.promptSeconds = promptSeconds
        self.decodeSeconds = decodeSeconds
        self.finishReason = finishReason
        self.droppedHistoryTurns = droppedHistoryTurns
        self.note = note
    }
}

/// An inference engine that can load models of some frameworks: the one boundary between the SDK's core
/// (catalog, downloads, residency, services) and the engines that run models.
///
/// The core knows no engine by name. The `RunAnywhere` module registers the default ones (the native GGUF engine;
/// sherpa-onnx and llama.cpp where their libraries are installed); another engine plugs in by implementing this
/// protocol and ``RunAnywhereSDK/registerBackend(_:)``, or by being passed to ``RunAnywhereSDK/init(configuration:backends:)``.
///
/// A load runs: ``cannotServe(_:)`` to choose the backend, ``prepare(_:contextLength:)`` (open the model once,
/// estimate its memory; checked against what is available before anything big is allocated), then
/// ``PreparedLoad/load(_:)`` on a thread of its own. What `load` returns serves calls through the capability
/// protocols it adopts (``TextGenerationModel``, …).
public protocol InferenceBackend: Sendable {
    /// The backend's name.
    var id: BackendID { get }
    /// Nil when this backend can serve the model, else the reason it cannot.
    func cannotServe(_ model: ModelInfo) -> String?
    /// Memory needed to load the model with this context, bytes, and the context the model allows at most.
    func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate
    /// Loads the model. Runs on a thread of its own; may block.
    func load(_ request: BackendLoadRequest) throws -> any BackendModel
    /// Opens the model for a load and estimates its memory, so that the load reuses what was read (the default
    /// calls ``estimate(_:contextLength:)`` and then ``load(_:)``).
    func prepare(_ model: ModelInfo, contextLength: Int?) throws -> any PreparedLoad
    /// What the model's files say about it (architecture, parameters, context, quantization, memory need), for the
    /// registry once a download is verified; nil when the files are not this backend's format (the default).
    /// Throws `.invalidModelFormat` when they are its format but malformed.
    func inspect(_ model: ModelInfo) throws -> ModelInfo?
    /// Gives memory freed by unloaded models back to the system (the default does nothing).
    func releaseFreedMemory()
    /// Whether it runs models on this device from their files (the default, true), or sends requests to a server
    /// (false: it needs no downloaded files and is chosen only when pinned, for models only a server has, or by the
    /// configuration's ``RemoteRouting``).
    var runsOnDevice: Bool { get }
}

/// A load in progress: the model opened by ``InferenceBackend/prepare(_:contextLength:)`` and its memory estimate.
public protocol PreparedLoad: Sendable {
    /// Memory the load will need.
    var estimate: BackendMemoryEstimate { get }
    /// Finishes the load. Runs on a thread of its own; may block.
    func load(_ request: BackendLoadRequest) throws -> any BackendModel
}

extension InferenceBackend {
    public func prepare(_ model: ModelInfo, contextLength: Int?) throws -> any PreparedLoad {
        EstimatedLoad(backend: self, estimate: try estimate(model, contextLength: contextLength))
    }

    public func inspect(_ model: ModelInfo) throws -> ModelInfo? { nil }

    public func releaseFreedMemory() {}

    /// True: a backend runs models on the device unless it says otherwise.
    public var runsOnDevice: Bool { true }
}

/// The default ``PreparedLoad``: an estimate, then the backend's own load.
private struct EstimatedLoad: PreparedLoad {
    let backend: any InferenceBackend
    let estimate: BackendMemoryEstimate
    func load(_ request: BackendLoadRequest) throws -> any BackendModel { try backend.load(request) }
}

/// A backend's memory estimate.
public struct BackendMemoryEstimate: Sendable, Hashable {
    /// Bytes needed in all.
    public var totalBytes: Int64
    /// Bytes of weights (mapped from the file).
    public var weightsBytes: Int64
    /// Bytes of KV cache and scratch.
    public var workingBytes: Int64
    /// The context length the estimate is for.
    public var contextLength: Int
    /// The model's own maximum context, when known.
    public var maximumContextLength: Int?

    /// Creates an estimate.
    public init(totalBytes: Int64, weightsBytes: Int64, workingBytes: Int64, contextLength: Int, maximumContextLength: Int?) {
        self.totalBytes = totalBytes
        self.weightsBytes = weightsBytes
        self.workingBytes = workingBytes
        self.contextLength = contextLength
        self.maximumContextLength = maximumContextLength
    }
}

/// A model loaded by a backend. Freed when the last reference goes away.
///
/// What it can do is said by the capability protocols it adopts: ``TextGenerationModel`` for text.
public protocol BackendModel: AnyObject, Sendable {
    /// Memory the backend holds for it, bytes.
    var memoryBytes: Int64 { get }
}

/// A loaded model that generates text from a prompt.
public protocol TextGenerationModel: BackendModel {
    /// Generates text for a prompt. Blocking; called serially (never twice at once on one model).
    /// - Parameters:
    ///   - onText: Receives whole UTF-8 text pieces as they are produced.
    ///   - shouldContinue: Polled between tokens; false stops with `.cancelled`.
    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats
}
