import Foundation

/// Options of one generation call. Every field has a default; `model` names what to use.
public struct LlmOptions: Sendable, Hashable, Codable {
    /// The model to use. Loaded on demand, and downloaded first when it is not on disk.
    /// With nil, the most recently used resident language model serves the call.
    public var model: String?
    /// At most this many new tokens.
    public var maxTokens: Int
    /// Sampling temperature (default 0.7); 0 is greedy: always the most likely token, the text llama.cpp's greedy
    /// decoding gives on the same model, with no penalty applied unless `repetitionPenalty` asks for one.
    public var temperature: Double
    /// Nucleus sampling: keep the smallest set of tokens whose probability sums to this.
    public var topP: Double
    /// Keep only the k most likely tokens (0 = no limit).
    public var topK: Int
    /// Drop tokens less likely than this fraction of the most likely one (0 = off).
    public var minP: Double
    /// Divides the logits of tokens among the last 64 of the context (default 1.0 = off, as in llama.cpp;
    /// 1.1 is a common choice against loops when sampling). Applies at every temperature when set.
    public var repetitionPenalty: Double
    /// The same seed with the same inputs gives the same text; nil picks a random seed.
    public var seed: UInt64?
    /// Stop when the text contains any of these (the stop text itself is not returned).
    public var stopSequences: [String]
    /// A system prompt, rendered through the model's chat template.
    public var systemPrompt: String?
    /// Earlier turns of a conversation, oldest first, rendered before the prompt by the chat template.
    public var history: [ChatTurn]
    /// Send the prompt as written, without the model's chat template.
    public var rawPrompt: Bool
    /// How to load the model if the call loads it.
    public var loadOptions: LoadOptions?
    /// When the history does not fit the context window with room for the reply, drop its oldest turns (never the
    /// system prompt, never the prompt) instead of failing, as chat front ends do (default true). The result says
    /// how many were dropped (`GenerationResult.droppedHistoryTurns`). A prompt that does not fit alone still fails.
    public var trimsHistoryToFit: Bool = true

    /// Creates generation options. The defaults: 256 new tokens, temperature 0.7 with top-k 40, top-p 0.95 and
    /// min-p 0.05, no repetition penalty, a random seed.
    public init(model: String? = nil, maxTokens: Int = 256, temperature: Double = 0.7, topP: Double = 0.95, topK: Int = 40,
                minP: Double = 0.05, repetitionPenalty: Double = 1.0, seed: UInt64? = nil, stopSequences: [String] = [],
                systemPrompt: String? = nil, history: [ChatTurn] = [], rawPrompt: Bool = false, loadOptions: LoadOptions? = nil, trimsHistoryToFit: Bool = true) {
        self.model = model
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.minP = minP
        self.repetitionPenalty = repetitionPenalty
        self.seed = seed
        self.stopSequences = stopSequences
        self.systemPrompt = systemPrompt
        self.history = history
        self.rawPrompt = rawPrompt
        self.loadOptions = loadOptions
        self.trimsHistoryToFit = trimsHistoryToFit
    }

    /// Throws `.invalidConfiguration` naming the first value out of range.
    func validate() throws {
        func bad(_ what: String) -> RunAnywhereError { RunAnywhereError(.invalidConfiguration, "LlmOptions.\(what)") }
        guard maxTokens >= 1 else { throw bad("maxTokens must be at least 1 (got \(maxTokens))") }
        guard temperature >= 0, temperature.isFinite else { throw bad("temperature must be ≥ 0 (got \(temperature))") }
        guard topP > 0, topP <= 1 else { throw bad("topP must be in (0, 1] (got \(topP))") }
        guard topK >= 0 else { throw bad("topK must be ≥ 0 (got \(topK))") }
        guard minP >= 0, minP < 1 else { throw bad("minP must be in [0, 1) (got \(minP))") }
        guard repetitionPenalty > 0, repetitionPenalty.isFinite else { throw bad("repetitionPenalty must be > 0 (got \(repetitionPenalty))") }
        guard !stopSequences.contains("") else { throw bad("stopSequences must not contain an empty string") }
    }
}

/// One earlier turn of a conversation.
public struct ChatTurn: Sendable, Hashable, Codable {
    /// Who spoke.
    public enum Role: String, Sendable, Hashable, Codable {
        /// The person.
        case user
        /// The model.
        case assistant
    }

    /// Who spoke.
    public var role: Role
    /// What was said.
    public var content: String

    /// Creates a turn.
    public init(role: Role, content: String) {
        self.role = role
        self.content = content
    }
}
