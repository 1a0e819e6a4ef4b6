import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereGGUF
import Testing
@testable import RunAnywhereLlamaCpp

/// Which chat template renders a request on the llama.cpp backend: ours when it can, llama.cpp's otherwise.
@Suite("llama.cpp backend chat templates", .enabled(if: LlamaCppInstall.isInstalled, LlamaCppInstall.skipReason))
struct LlamaCppPromptTests {
    static func request(_ prompt: String, system: String? = nil) -> BackendGenerationRequest {
        BackendGenerationRequest(prompt: prompt, options: LlmOptions(systemPrompt: system))
    }

    @Test("a template our interpreter runs is rendered by it, exactly as on the native backend")
    func ours() throws {
        let library = try LlamaCppBackend().library().get()
        let chatml = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
        let prompt = LlamaCppPrompt(template: ChatTemplate(source: chatml), llamaTemplate: chatml)
        #expect(prompt.renderer == "ours (chatml)")
        let (text, templated) = prompt.render(Self.request("Hi", system: "Be brief."), library: library)
        #expect(templated)
        #expect(text == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    }

    @Test("a template ours cannot run nor recognise goes through llama_chat_apply_template")
    func llamaCpps() throws {
        let library = try LlamaCppBackend().library().get()
        // Command R's markers, in a template our Jinja parser rejects (unclosed block).
        let source = "{% for m in messages %}<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{{ m.content"
        let ours = ChatTemplate(source: source)
        #expect(!ours.isInterpretable && ours.family == "unknown-plain")
        let prompt = LlamaCppPrompt(template: ours, llamaTemplate: source)
        #expect(prompt.renderer == "llama.cpp")
        let (text, templated) = prompt.render(Self.request("Hi"), library: library)
        #expect(templated)
        #expect(text.contains("<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|>"), "\(text)")
        #expect(text.hasSuffix("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"), "\(text)")
        // One llama.cpp does not know either: nil, and the request falls back to our plain rendering.
        #expect(LlamaCppPrompt.apply("nothing it knows", [("user", "Hi")], library: library) == nil)
    }

    @Test("rawPrompt and models without a template send the prompt as written")
    func raw() throws {
        let library = try LlamaCppBackend().library().get()
        let none = LlamaCppPrompt(template: nil, llamaTemplate: nil)
        #expect(none.renderer == "none")
        #expect(none.render(Self.request("Once upon a time"), library: library) == ("Once upon a time", false))
        var raw = Self.request("Once upon a time", system: "ignored")
        raw.options.rawPrompt = true
        let chatml = LlamaCppPrompt(template: ChatTemplate(source: "{{ messages[0].content }}"), llamaTemplate: nil)
        #expect(chatml.render(raw, library: library) == ("Once upon a time", false))
    }
}
