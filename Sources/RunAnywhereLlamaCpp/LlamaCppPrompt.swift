import CLlamaCpp
import Foundation
import RunAnywhereCore
import RunAnywhereGGUF

/// How a request becomes prompt text for a model in llama.cpp.
///
/// The model's own Jinja template is rendered by RunAnywhere's interpreter, the same code the native engine
/// uses, so both backends see the same prompt for the same request (and their outputs can be compared).
/// Templates our interpreter cannot run, and that are not one of the families it knows, go through
/// llama.cpp's `llama_chat_apply_template`, which recognises many more families by their markers; when that
/// fails too the conversation is written as plain `role: content` lines.
struct LlamaCppPrompt: Sendable {
    /// The template from the GGUF, when there is one.
    let template: ChatTemplate?
    /// llama.cpp's template text for `llama_chat_apply_template`.
    let llamaTemplate: String?

    init(template: ChatTemplate?, llamaTemplate: String?) {
        self.template = template
        self.llamaTemplate = llamaTemplate
    }

    /// The template of a loaded model (`tokenizer.chat_template`, as llama.cpp read it), for our interpreter and llama.cpp's.
    init(session: LlamaCppSession) {
        let source = session.chatTemplate
        let special = session.specialTokenTexts
        self.init(template: source.map { ChatTemplate(source: $0, bosToken: special.bos, eosToken: special.eos) }, llamaTemplate: source)
    }

    /// Which renderer applies: "ours (<family>)", "llama.cpp", or "none".
    var renderer: String {
        guard let template else { return "none" }
        if template.family != "unknown-plain" || llamaTemplate == nil { return "ours (\(template.family))" }
        return "llama.cpp"
    }

    /// The prompt text, and whether it went through a template (then special-token text is parsed as such).
    func render(_ request: BackendGenerationRequest, library: LlamaCppLibrary) -> (text: String, templated: Bool) {
        guard !request.options.rawPrompt, let template else { return (request.untemplatedPrompt, false) }
        let conversation = request.conversation
        if renderer == "llama.cpp", let llamaTemplate, let text = Self.apply(llamaTemplate, conversation, library: library) {
            return (text, true)
        }
        return (template.render(conversation.map { ChatMessage(role: $0.role, content: $0.content) }, addGenerationPrompt: true), true)
    }

    /// `llama_chat_apply_template`, or nil when llama.cpp does not know the template.
    static func apply(_ template: String, _ messages: [(role: String, content: String)], library: LlamaCppLibrary) -> String? {
        let strings = messages.flatMap { [strdup($0.role), strdup($0.content)] }
        defer { strings.forEach { free($0) } }
        var chat: [ra_llama_chat_message] = []
        for i in stride(from: 0, to: strings.count, by: 2) {
            chat.append(ra_llama_chat_message(role: strings[i], content: strings[i + 1]))
        }
        var size = 2 * messages.reduce(256) { $0 + $1.role.utf8.count + $1.content.utf8.count }
        for _ in 0..<2 {
            var buffer = [CChar](repeating: 0, count: size)
            let n = Int(library.chatApplyTemplate(template, chat, chat.count, true, &buffer, Int32(buffer.count)))
            if n < 0 { return nil }
            if n <= buffer.count { return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            size = n + 1
        }
        return nil
    }
}
