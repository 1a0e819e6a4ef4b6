import Foundation
import RunAnywhere
import RunAnywhereTestSupport
import Testing

/// A conversation continued on the same model reads only its new tokens: the KV cache of the turns before is kept
/// between calls and its common prefix with the next prompt reused (issue #21).
@Suite("Conversation reuse")
struct ConversationReuseTests {
    @Test("each turn of a conversation continued through llm.generate reuses the whole prompt and reply before it (llama.cpp where installed)",
          arguments: [BackendID.native, .llamaCpp])
    func turnsReuseTheConversation(backend: BackendID) async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let url = env.mirror.publish("chat.gguf", data: DemoModel.chatData(.forest))
        let id = try await env.sdk.registerModel(id: "chat", name: "Chat", url: url.absoluteString, framework: .llamaCpp, modality: .language).id
        let load = LoadOptions(backendPreferences: [BackendPreference(backend: backend, required: true)], contextLength: 1024)
        for try await _ in try await env.sdk.models.download(id: id) {}
        do {
            try await env.sdk.models.load(id: id, options: load)
        } catch let error as RunAnywhereError where error.code == .backendUnavailable && backend == .llamaCpp {
            return  // llama.cpp is not installed here (its own suites say so); the native run above is the check
        }
        var history: [ChatTurn] = []
        var previous: GenerationResult?
        for message in ["Once upon a time", "the fox ran", "into the forest", "and the owl saw"] {
            let r = try await env.sdk.llm.generate(prompt: message, options: LlmOptions(
                model: id, maxTokens: 6, temperature: 0, systemPrompt: "A story.", history: history, loadOptions: load))
            if let previous {
                // Everything the model read and wrote last turn is in the new prompt, and in its cache.
                #expect(r.reusedPromptTokens >= previous.promptTokens + previous.outputTokens - 1,
                        "turn \(history.count / 2 + 1): reused \(r.reusedPromptTokens) of \(r.promptTokens); before: \(previous.promptTokens) + \(previous.outputTokens)")
                #expect(r.reusedPromptTokens < r.promptTokens)
            } else {
                #expect(r.reusedPromptTokens == 0)
            }
            history += [ChatTurn(role: .user, content: message), ChatTurn(role: .assistant, content: r.text)]
            previous = r
        }
        // Another conversation starts over: only the start of the template it shares is reused.
        let other = try await env.sdk.llm.generate(prompt: "A cat", options: LlmOptions(model: id, maxTokens: 4, temperature: 0, systemPrompt: "Another.", loadOptions: load))
        let first = try await env.sdk.llm.generate(prompt: "A cat", options: LlmOptions(model: id, maxTokens: 4, temperature: 0, systemPrompt: "A story.", loadOptions: load))
        #expect(other.reusedPromptTokens < first.promptTokens / 2 && first.reusedPromptTokens < first.promptTokens / 2,
                "\(other.reusedPromptTokens), \(first.reusedPromptTokens) of \(first.promptTokens)")
    }
}
