import Foundation

/// What a backend must know to load a model.
public struct BackendLoadRequest: Sendable {
    /// The model (downloaded: `primaryFilePath` is set).
    public var model: ModelInfo
    /// Context window to allocate, tokens (already resolved against the model's maximum).
    public var contextLength: Int
    /// CPU threads.
    public var threads: Int
}

/// What a backend must know to generate.
public struct BackendGenerationRequest: Sendable {
    /// The user's prompt.
    public var prompt: String
    /// Generation options.
    public var options: LlmOptions
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

    /// Creates statistics.
    public init(promptTokens: Int, outputTokens: Int, promptSeconds: Double, decodeSeconds: Double, finishReason: FinishReason) {
        self.promptTokens = promptTokens
        self.outputTokens = outputTokens
        self.promptSeconds = promptSeconds
        self.decodeSeconds = decodeSeconds
        self.finishReason = finishReason
    }
}

/// An inference engine that can load models of some frameworks.
///
/// The native GGUF engine is registered by default; another engine (llama.cpp, ONNX Runtime) can be
/// added with ``RunAnywhereSDK/registerBackend(_:)`` without touching callers.
public protocol InferenceBackend: Sendable {
    /// The backend's name.
    var id: BackendID { get }
    /// Nil when this backend can serve the model, else the reason it cannot.
    func cannotServe(_ model: ModelInfo) -> String?
    /// Memory needed to load the model with this context, bytes, and the context the model allows at most.
    func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate
    /// Loads the model. Runs on a thread of its own; may block.
    func load(_ request: BackendLoadRequest) throws -> any BackendModel
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
public protocol BackendModel: AnyObject, Sendable {
    /// Memory the backend holds for it, bytes.
    var memoryBytes: Int64 { get }
    /// Generates text for a prompt. Blocking; called serially (never twice at once on one model).
    /// - Parameters:
    ///   - onText: Receives whole UTF-8 text pieces as they are produced.
    ///   - shouldContinue: Polled between tokens; false stops with `.cancelled`.
    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats
}
