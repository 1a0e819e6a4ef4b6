import Foundation
import Testing
import RunAnywhere
import RunAnywhereGGUF
import RunAnywhereTestSupport

/// A GGUF with a tensor type the native engine's kernels lack (IQ2_XXS, in downloaded IQ2_XXS/IQ2_M files) is refused
/// when the engine opens it, before anything is allocated, and the routing hands it to the next backend that can
/// serve it (llama.cpp where installed: `LlamaCppBackendTests`); with none, the error names the type and every backend's
/// reason.
@Suite("Tensor types the native engine cannot compute")
struct UncomputableTypeTests {
    @Test("an IQ2_XXS tensor: pinned native fails naming the type; unpinned, llama.cpp serves it or the error gives every backend's reason")
    func iq2XXSRefused() async throws {
        let env = try ImportEnvironment()
        defer { env.dir.remove() }
        var spec = TinyModelSpec()
        spec.embeddingLength = 256
        spec.headCount = 4
        spec.headCountKV = 2
        spec.headDim = 64
        spec.feedForwardLength = 256
        spec.blockCount = 1
        var writer = GGUFWriter.tinyModel(spec)
        let up = try #require(writer.tensors.firstIndex { $0.name == "blk.0.ffn_up.weight" })
        writer.tensors[up].typeID = GGMLType.iq2_xxs.rawValue
        writer.tensors[up].data = GGUFWriter.randomIQ2XXS(blocks: 256, seed: 3)
        let file = env.dir.url.appendingPathComponent("tiny-iq2xxs.gguf")
        try writer.write(to: file.path)
        let id = try await env.sdk.models.importLocal(file: file, id: "tiny-iq2xxs").model.id

        // Pinned to the native engine: its own reason.
        do {
            _ = try await env.sdk.models.load(id: id, options: LoadOptions(backendPreferences: [BackendPreference(backend: .native, required: true)]))
            Issue.record("the native engine loaded a model with an IQ2_XXS tensor")
        } catch let error as RunAnywhereError {
            #expect(error.code == .backendUnavailable, "\(error)")
            #expect(error.message.contains("IQ2_XXS (1 tensor)") && error.message.contains("cannot compute"), "\(error.message)")
        }
        #expect(await env.sdk.models.state().loaded.isEmpty)
        // No preference: the next backend that can serve it (llama.cpp where this process finds it installed), or an
        // error with every backend's reason.
        do {
            let loaded = try await env.sdk.models.load(id: id)
            #expect(loaded.backend == .llamaCpp, "\(loaded.backend)")
            #expect(loaded.backendNote?.contains("IQ2_XXS (1 tensor)") == true, "\(loaded.backendNote ?? "no note")")
            try await env.sdk.models.unloadAll()
        } catch let error as RunAnywhereError {
            #expect(error.code == .backendUnavailable, "\(error)")
            #expect(error.message.contains("No backend can serve 'tiny-iq2xxs'") && error.message.contains("native: ")
                    && error.message.contains("IQ2_XXS (1 tensor)"), "\(error.message)")
            #expect(await env.sdk.models.state().loaded.isEmpty)
        }
        // The types the engine multiplies: those with a block format its kernels read and a dot product.
        #expect(Set(GGMLType.allCases.filter(\.isComputable)) == [.f32, .f16, .bf16, .q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q2_K, .q3_K, .q4_K, .q5_K, .q6_K,
                                                                        .iq4_nl, .iq4_xs])
        // Every tensor type of the description is either computable or listed.
        let d = try GGUFModelDescription(file: GGUFFile(path: file.path))
        #expect(d.uncomputableTensorTypes == ["IQ2_XXS": 1])
    }
}
