import Foundation
import RunAnywhere
import RunAnywhereLlamaCpp
import RunAnywhereTestSupport
import Testing

/// The llama.cpp backend through the public API, where llama.cpp is installed.
@Suite("llama.cpp backend through the SDK",
       .enabled(if: LlamaCppInstall.isInstalled, LlamaCppInstall.skipReason), .enabled(if: SharedData.isAvailable, SharedData.skipReason))
struct LlamaCppBackendTests {
    static let pinned = LoadOptions(backendPreferences: [BackendPreference(backend: .llamaCpp, required: true)])
    static let storiesText = ", there was a little girl named Lily. She loved to play outside in the p"

    static func stories(_ env: LlamaCppEnvironment) async throws -> String {
        try await env.add(try Data(contentsOf: URL(fileURLWithPath: try SharedData.model("stories260K"))), name: "stories")
    }

    @Test("the page's pinning example loads on llama.cpp, and greedy text matches llama.cpp's reference")
    func pinningExample() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let id = try await Self.stories(env)
        // The models page: "what you want when you are measuring one engine specifically".
        let options = LoadOptions(backendPreferences: [BackendPreference(backend: .llamaCpp, required: true)])
        let loaded = try await env.sdk.models.load(id: id, options: options)
        #expect(loaded.backend == .llamaCpp && loaded.backendNote == nil)
        #expect(loaded.estimatedMemoryBytes > 0 && loaded.memoryBytes > 0)
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 24, temperature: 0, rawPrompt: true, loadOptions: options))
        #expect(r.backend == .llamaCpp && r.finishReason == .maxTokens && r.outputTokens == 24)
        #expect(r.text.hasPrefix(Self.storiesText), "\(r.text)")
        #expect(r.promptTokens == 5 && r.promptTokensPerSecond > 0 && r.tokensPerSecond > 0)
    }

    @Test("both backends give the same text for the same options: greedy, and seeded sampling")
    func sameSemantics() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let id = try await Self.stories(env)
        let native = LoadOptions(backendPreferences: [BackendPreference(backend: .native, required: true)])
        for base in [LlmOptions(model: id, maxTokens: 24, temperature: 0, rawPrompt: true),
                     LlmOptions(model: id, maxTokens: 24, temperature: 0.8, seed: 7, rawPrompt: true)] {
            var a = base, b = base
            a.loadOptions = Self.pinned
            b.loadOptions = native
            let viaLlama = try await env.sdk.llm.generate(prompt: "Once upon a time", options: a)
            let again = try await env.sdk.llm.generate(prompt: "Once upon a time", options: a)
            let viaNative = try await env.sdk.llm.generate(prompt: "Once upon a time", options: b)
            #expect(viaLlama.backend == .llamaCpp && viaNative.backend == .native)
            #expect(viaLlama.text == again.text, "the same seed gave different text")
            #expect(viaLlama.text == viaNative.text, "llama.cpp: \(viaLlama.text)\nnative: \(viaNative.text)")
        }
    }

    @Test("stop sequences, maxTokens and a prompt longer than the context behave as on the native backend")
    func limits() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let id = try await Self.stories(env)
        let stop = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 24, temperature: 0, stopSequences: ["Lily"], rawPrompt: true, loadOptions: Self.pinned))
        #expect(stop.text == ", there was a little girl named " && stop.finishReason == .stopSequence)
        let short = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 3, temperature: 0, rawPrompt: true, loadOptions: Self.pinned))
        #expect(short.outputTokens == 3 && short.finishReason == .maxTokens)
        var small = Self.pinned
        small.contextLength = 32
        let long = String(repeating: "Once upon a time ", count: 20)
        await #expect(throws: RunAnywhereError.self) {
            _ = try await env.sdk.llm.generate(prompt: long, options: LlmOptions(model: id, maxTokens: 3, rawPrompt: true, loadOptions: small))
        }
    }

    @Test("cancelling the consuming task stops llama.cpp between tokens; the model stays usable")
    func cancellation() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let id = try await Self.stories(env)
        let llm = env.sdk.llm
        let options = LlmOptions(model: id, maxTokens: 100_000, temperature: 1.0, seed: 1, loadOptions: LoadOptions(backendPreferences: Self.pinned.backendPreferences, contextLength: 512))
        _ = try await env.sdk.models.load(id: id, options: options.loadOptions ?? Self.pinned)
        let task = Task { () -> Int in
            var n = 0
            for try await event in llm.generateStream(prompt: "Once upon a time", options: options) {
                if case .text = event { n += 1 }
            }
            return n
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        switch await task.result {
        case .success(let n): #expect(n < 512)
        case .failure(let error): #expect((error as? RunAnywhereError)?.code == .cancelled || error is CancellationError, "\(error)")
        }
        let r = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 3, loadOptions: options.loadOptions))
        #expect(r.outputTokens == 3 && r.backend == .llamaCpp)
    }

    @Test("with no preference, an architecture the native engine refuses runs on llama.cpp, and the note says why")
    func automaticFallback() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let data = try renamingArchitecture(of: try SharedData.model("stories260K"), to: "mistral3")
        let id = try await env.add(data, name: "stories-mistral3")
        let loaded = try await env.sdk.models.load(id: id)
        #expect(loaded.backend == .llamaCpp)
        let note = try #require(loaded.backendNote)
        #expect(note.contains("native") && note.contains("mistral3") && note.contains("llamaCpp serves it"), "\(note)")
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 24, temperature: 0, rawPrompt: true))
        #expect(r.backend == .llamaCpp && r.text.hasPrefix(Self.storiesText), "\(r.text)")
        // Pinning the native engine on it fails with its reason.
        await #expect(throws: RunAnywhereError.self) {
            try await env.sdk.models.load(id: id, options: LoadOptions(backendPreferences: [BackendPreference(backend: .native, required: true)]))
        }
    }

    @Test("with no preference, a tensor type the native engine cannot compute (IQ2_XXS) runs on llama.cpp, and the note says why")
    func uncomputableTypeFallsBack() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let data = try replacingTensorWithIQ2XXS(of: try SharedData.model("tiny-llama-spm-q4_k_m"), named: "blk.0.ffn_up.weight")
        let id = try await env.add(data, name: "tiny-iq2xxs")
        let loaded = try await env.sdk.models.load(id: id)
        #expect(loaded.backend == .llamaCpp)
        let note = try #require(loaded.backendNote)
        #expect(note.contains("native") && note.contains("IQ2_XXS (1 tensor)") && note.contains("llamaCpp serves it"), "\(note)")
        #expect(!note.contains(".;"), "\(note)")
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 4, temperature: 0, rawPrompt: true))
        #expect(r.backend == .llamaCpp && r.outputTokens == 4)
        // Pinned, the native engine refuses it with its reason, at once.
        do {
            _ = try await env.sdk.models.load(id: id, options: LoadOptions(backendPreferences: [BackendPreference(backend: .native, required: true)]))
            Issue.record("the native engine loaded an IQ2_XXS tensor")
        } catch let error as RunAnywhereError {
            #expect(error.code == .backendUnavailable && error.message.contains("IQ2_XXS"), "\(error)")
        }
    }

    @Test("an architecture llama.cpp does not know either: .backendUnavailable with llama.cpp's own reason")
    func unknownArchitecture() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let data = try renamingArchitecture(of: try SharedData.model("stories260K"), to: "frobnicator")
        let id = try await env.add(data, name: "stories-frobnicator")
        for options in [Self.pinned, LoadOptions()] {
            do {
                _ = try await env.sdk.models.load(id: id, options: options)
                Issue.record("an unknown architecture loaded")
            } catch let error as RunAnywhereError {
                #expect(error.code == .backendUnavailable, "\(error)")
                #expect(error.message.contains("unknown model architecture: 'frobnicator'"), "\(error.message)")
            }
        }
    }
}
