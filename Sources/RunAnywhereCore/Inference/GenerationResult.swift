import Foundation

/// Why generation stopped.
public enum FinishReason: String, Sendable, Hashable, Codable {
    /// `maxTokens` were produced.
    case maxTokens
    /// The model produced its end-of-generation token.
    case endOfGeneration
    /// A stop sequence appeared.
    case stopSequence
    /// The calling task was cancelled.
    case cancelled
    /// The context window is full.
    case contextFull
}

/// The outcome of a generation call.
public struct GenerationResult: Sendable, Hashable, Codable {
    /// The generated text (without the prompt, without a stop sequence).
    public var text: String
    /// The model that produced it.
    public var modelId: String
    /// The backend that ran it.
    public var backend: BackendID
    /// Tokens in the prompt (after the chat template).
    public var promptTokens: Int
    /// Tokens generated.
    public var outputTokens: Int
    /// Seconds from the call to the first generated token (includes loading when the call loaded the model).
    public var timeToFirstTokenSeconds: Double
    /// Prompt processing speed, tokens per second.
    public var promptTokensPerSecond: Double
    /// Generation speed after the first token, tokens per second.
    public var tokensPerSecond: Double
    /// Why it stopped.
    public var finishReason: FinishReason
    /// Oldest turns of `LlmOptions.history` left out so that the conversation fits the context window.
    public var droppedHistoryTurns: Int = 0
    /// Tokens at the start of the prompt the model had already read (the conversation so far, kept in its KV cache
    /// since the previous call on the same model) and did not read again: a chat turn costs only its new tokens.
    /// ``promptTokensPerSecond`` counts all of ``promptTokens`` over the time spent on the rest.
    public var reusedPromptTokens: Int = 0
    /// Which backend served the call and why, when it was not simply the first on-device choice (a fallback, a
    /// remote endpoint chosen by routing), and anything about how the figures were obtained; else nil.
    public var backendNote: String?
}

/// What `generateStream` yields: text as it is produced, then the result.
public enum GenerationEvent: Sendable, Hashable {
    /// More text (whole UTF-8 characters only).
    case text(String)
    /// Generation ended.
    case completed(GenerationResult)
}
