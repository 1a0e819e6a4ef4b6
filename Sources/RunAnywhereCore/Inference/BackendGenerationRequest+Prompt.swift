/// The conversation of a request as every backend renders it, so engines given the same request see the same text.
extension BackendGenerationRequest {
    /// System prompt, earlier turns and the prompt, in order, as (role, content) for a chat template.
    public var conversation: [(role: String, content: String)] {
        var messages: [(role: String, content: String)] = []
        if let system = options.systemPrompt { messages.append(("system", system)) }
        for turn in options.history { messages.append((turn.role.rawValue, turn.content)) }
        messages.append(("user", prompt))
        return messages
    }

    /// The text when no chat template applies: the prompt as written (`rawPrompt`), else after the system prompt.
    public var untemplatedPrompt: String {
        if let system = options.systemPrompt, !options.rawPrompt { return system + "\n\n" + prompt }
        return prompt
    }
}

extension BackendGenerationRequest {
    /// Throws `.invalidConfiguration` when a tokenized prompt is empty or does not leave room in the context.
    public static func checkPrompt(tokenCount: Int, contextLength: Int, modelId: String) throws {
        guard tokenCount > 0 else {
            throw RunAnywhereError(.invalidConfiguration, "The prompt is empty after tokenization.", modelId: modelId)
        }
        guard tokenCount < contextLength else {
            throw RunAnywhereError(.invalidConfiguration, "The prompt is \(tokenCount) tokens, more than the context window of \(contextLength). Load the model with a larger LoadOptions.contextLength or shorten the prompt.", modelId: modelId)
        }
    }
}

extension BackendGenerationRequest {
    /// The request with the oldest history turns dropped until its prompt leaves room for the reply in a context of
    /// `contextLength` tokens (room: `maxTokens`, at most a quarter of the context), and how many were dropped. The
    /// system prompt and the prompt always stay; with `trimsHistoryToFit` off, or nothing left to drop, the request
    /// is returned as it is (``checkPrompt(tokenCount:contextLength:modelId:)`` then says whether it fits at all).
    /// - Parameter tokenize: the backend's tokens of a request as it would render and tokenize it; the tokens of the
    ///   returned request are returned with it, so the prompt is not tokenized again.
    public func fittingContext(_ contextLength: Int, tokenize: (BackendGenerationRequest) throws -> [Int32]) rethrows
        -> (request: BackendGenerationRequest, tokens: [Int32], droppedTurns: Int) {
        let room = min(max(1, options.maxTokens), max(1, contextLength / 4))
        var fitted = self
        var tokens = try tokenize(fitted)
        var dropped = 0
        while options.trimsHistoryToFit, tokens.count + room > contextLength, !fitted.options.history.isEmpty {
            // A user turn goes with the reply after it, so the conversation still alternates.
            let n = fitted.options.history.count >= 2 && fitted.options.history[0].role == .user ? 2 : 1
            fitted.options.history.removeFirst(n)
            dropped += n
            tokens = try tokenize(fitted)
        }
        return (fitted, tokens, dropped)
    }
}
