import Foundation

/// One message of a chat conversation.
public struct ChatMessage: Sendable, Hashable, Codable {
    /// `"system"`, `"user"`, `"assistant"` (or another role the template knows, such as `"tool"`).
    public var role: String
    /// The message text.
    public var content: String

    /// Creates a message.
    public init(role: String, content: String) {
        self.role = role
        self.content = content
    }
}

/// The model's own chat template (`tokenizer.chat_template`), rendered to a prompt string.
///
/// The template's Jinja source is interpreted (a subset of Jinja2 that covers the Qwen2.5,
/// Qwen3, Llama 2/3.x, SmolLM2, Mistral, Gemma and Phi templates), with Hugging Face's
/// settings (`trim_blocks`, `lstrip_blocks`), `bos_token` / `eos_token` from the vocabulary,
/// `add_generation_prompt`, `raise_exception`, `namespace` and `strftime_now`.
/// If the template cannot be interpreted, a built-in rendering of its family is used
/// (ChatML, Llama 3, Llama 2, Gemma); an unrecognised template falls back to plain
/// `role: content` lines and reports the family `"unknown-plain"`.
///
/// ```swift
/// let template = ChatTemplate(file: file)!
/// let prompt = template.render([ChatMessage(role: "user", content: "Hi")], addGenerationPrompt: true)
/// let ids = tokenizer.encode(prompt, addSpecial: !template.rendersBOS(prompt), parseSpecial: true)
/// ```
public struct ChatTemplate: Sendable {
    /// The Jinja source of the template.
    public let source: String
    /// Text of the BOS token (what `bos_token` renders as).
    public let bosToken: String
    /// Text of the EOS token (what `eos_token` renders as).
    public let eosToken: String
    /// The date templates print as "today" (`strftime_now`); nil means the current date.
    public var currentDate: Date?
    /// Whether the source could be parsed by the interpreter.
    public var isInterpretable: Bool { nodes != nil }
    /// The parsed source (nil when the interpreter cannot parse it), parsed once: every render reuses it.
    private let nodes: [Jinja.Node]?
    private let markerFamily: String?

    /// The template's family: `"chatml"`, `"llama3"`, `"llama2"`, `"gemma"`, `"phi3"`,
    /// `"jinja"` (another template the interpreter renders) or `"unknown-plain"`.
    public var family: String {
        if let markerFamily { return markerFamily }
        return isInterpretable ? "jinja" : "unknown-plain"
    }

    /// Reads `tokenizer.chat_template` of a GGUF file; nil when the file has no template.
    public init?(file: GGUFFile) {
        guard let source = file.string("tokenizer.chat_template") else { return nil }
        func tokenText(_ key: String) -> String {
            guard let id = file.int(key), id >= 0,
                  case .array(let tokens)? = file.metadata["tokenizer.ggml.tokens"], id < tokens.count,
                  case .string(let text) = tokens[id] else { return "" }
            return text
        }
        self.init(source: source, bosToken: tokenText("tokenizer.ggml.bos_token_id"),
                  eosToken: tokenText("tokenizer.ggml.eos_token_id"))
    }

    /// A template from its Jinja source and the texts of the BOS and EOS tokens.
    public init(source: String, bosToken: String = "", eosToken: String = "") {
        self.source = source
        self.bosToken = bosToken
        self.eosToken = eosToken
        nodes = try? Jinja.parse(source)
        if source.contains("<|im_start|>") {
            markerFamily = "chatml"
        } else if source.contains("<|start_header_id|>") {
            markerFamily = "llama3"
        } else if source.contains("[INST]") {
            markerFamily = "llama2"
        } else if source.contains("<start_of_turn>") {
            markerFamily = "gemma"
        } else if source.contains("<|user|>") && source.contains("<|end|>") {
            markerFamily = "phi3"
        } else {
            markerFamily = nil
        }
    }

    /// Renders a conversation to the prompt text the model expects.
    /// - Parameters:
    ///   - addGenerationPrompt: end with the header that starts the assistant's reply.
    public func render(_ messages: [ChatMessage], addGenerationPrompt: Bool) -> String {
        render(messages, addGenerationPrompt: addGenerationPrompt, enableThinking: nil)
    }

    /// Renders a conversation; `enableThinking` sets the template variable `enable_thinking`
    /// (Qwen3: `false` adds an empty `<think></think>` block; nil leaves it undefined).
    public func render(_ messages: [ChatMessage], addGenerationPrompt: Bool, enableThinking: Bool?) -> String {
        if let nodes, let text = try? interpret(nodes, messages, addGenerationPrompt, enableThinking) {
            return text
        }
        return builtIn(messages, addGenerationPrompt)
    }

    /// Whether a rendered prompt already starts with the BOS token text, so it should be
    /// tokenized without adding another BOS.
    public func rendersBOS(_ prompt: String) -> Bool {
        !bosToken.isEmpty && prompt.hasPrefix(bosToken)
    }

    /// Renders through the interpreter (it throws what the template raises or cannot evaluate).
    func interpret(_ messages: [ChatMessage], _ addGenerationPrompt: Bool, _ enableThinking: Bool?) throws -> String {
        try interpret(nodes ?? Jinja.parse(source), messages, addGenerationPrompt, enableThinking)
    }

    private func interpret(_ nodes: [Jinja.Node], _ messages: [ChatMessage], _ addGenerationPrompt: Bool,
                           _ enableThinking: Bool?) throws -> String {
        var globals: [String: Jinja.Value] = [
            "messages": .array(messages.map { .object([("role", .string($0.role)), ("content", .string($0.content))]) }),
            "add_generation_prompt": .bool(addGenerationPrompt),
            "bos_token": .string(bosToken),
            "eos_token": .string(eosToken),
        ]
        if let enableThinking { globals["enable_thinking"] = .bool(enableThinking) }
        var interpreter = Jinja.Interpreter(globals: globals, now: currentDate ?? Date())
        _ = try interpreter.run(nodes)
        return interpreter.output
    }

    /// The family's usual format, for templates the interpreter cannot render.
    func builtIn(_ messages: [ChatMessage], _ addGenerationPrompt: Bool) -> String {
        var out = ""
        switch markerFamily {
        case "chatml":
            for m in messages { out += "<|im_start|>\(m.role)\n\(m.content)<|im_end|>\n" }
            if addGenerationPrompt { out += "<|im_start|>assistant\n" }
        case "llama3":
            out = bosToken
            for m in messages {
                out += "<|start_header_id|>\(m.role)<|end_header_id|>\n\n"
                out += m.content.trimmingCharacters(in: .whitespacesAndNewlines) + "<|eot_id|>"
            }
            if addGenerationPrompt { out += "<|start_header_id|>assistant<|end_header_id|>\n\n" }
        case "llama2":
            var system: String? = nil
            var rest = messages[...]
            if let first = rest.first, first.role == "system" { system = first.content; rest = rest.dropFirst() }
            for m in rest {
                if m.role == "assistant" {
                    out += " " + m.content.trimmingCharacters(in: .whitespacesAndNewlines) + " " + eosToken
                } else {
                    var content = m.content
                    if let s = system { content = "<<SYS>>\n\(s)\n<</SYS>>\n\n" + content; system = nil }
                    out += bosToken + "[INST] " + content.trimmingCharacters(in: .whitespacesAndNewlines) + " [/INST]"
                }
            }
        case "gemma":
            out = bosToken
            for m in messages {
                let role = m.role == "assistant" ? "model" : "user"
                out += "<start_of_turn>\(role)\n\(m.content.trimmingCharacters(in: .whitespacesAndNewlines))<end_of_turn>\n"
            }
            if addGenerationPrompt { out += "<start_of_turn>model\n" }
        case "phi3":
            for m in messages { out += "<|\(m.role)|>\n\(m.content)<|end|>\n" }
            if addGenerationPrompt { out += "<|assistant|>\n" }
        default:
            for m in messages { out += "\(m.role): \(m.content)\n" }
            if addGenerationPrompt { out += "assistant: " }
        }
        return out
    }
}
