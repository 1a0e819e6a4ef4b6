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
