import Foundation
import Testing
import RunAnywhereGGUF

/// What the test-data README says about each shared model.
struct SharedModel: Sendable, CustomTestStringConvertible {
    let file: String
    let architecture: String
    let layers, embedding, heads, kvHeads, headDim, ffn, vocab, contextLength: Int
    let tied: Bool
    let ropeBase: Double
    let rmsEps: Float
    let ropeStyle: GGUFRopeStyle
    let quantization: String
    let typeCounts: [String: Int]
    let hasChatTemplate: Bool

    var testDescription: String { file }

    static let all: [SharedModel] = [
        SharedModel(file: "stories260K.gguf", architecture: "llama", layers: 5, embedding: 64, heads: 8, kvHeads: 4, headDim: 8,
                    ffn: 172, vocab: 512, contextLength: 2048, tied: false, ropeBase: 10_000, rmsEps: 1e-5, ropeStyle: .normal,
                    quantization: "F32", typeCounts: ["F32": 48], hasChatTemplate: false),
        SharedModel(file: "tiny-qwen3-f16.gguf", architecture: "qwen3", layers: 2, embedding: 64, heads: 4, kvHeads: 2, headDim: 32,
                    ffn: 192, vocab: 151_936, contextLength: 40960, tied: true, ropeBase: 1e6, rmsEps: 1e-6, ropeStyle: .neox,
                    quantization: "F16", typeCounts: ["F16": 15, "F32": 9], hasChatTemplate: true),
        SharedModel(file: "tiny-qwen3-q8_0.gguf", architecture: "qwen3", layers: 2, embedding: 64, heads: 4, kvHeads: 2, headDim: 32,
                    ffn: 192, vocab: 151_936, contextLength: 40960, tied: true, ropeBase: 1e6, rmsEps: 1e-6, ropeStyle: .neox,
                    quantization: "Q8_0", typeCounts: ["Q8_0": 15, "F32": 9], hasChatTemplate: true),
        SharedModel(file: "tiny-llama-spm-q4_k_m.gguf", architecture: "llama", layers: 2, embedding: 256, heads: 8, kvHeads: 4, headDim: 32,
                    ffn: 512, vocab: 32000, contextLength: 4096, tied: false, ropeBase: 1e4, rmsEps: 1e-5, ropeStyle: .normal,
                    quantization: "Q4_K_M", typeCounts: ["Q4_K": 13, "Q6_K": 3, "F32": 5], hasChatTemplate: false),
        SharedModel(file: "tiny-llama-spm-q5_k_m.gguf", architecture: "llama", layers: 2, embedding: 256, heads: 8, kvHeads: 4, headDim: 32,
                    ffn: 512, vocab: 32000, contextLength: 4096, tied: false, ropeBase: 1e4, rmsEps: 1e-5, ropeStyle: .normal,
                    quantization: "Q5_K_M", typeCounts: ["Q5_K": 13, "Q6_K": 3, "F32": 5], hasChatTemplate: false),
        SharedModel(file: "tiny-llama-spm-q4_0.gguf", architecture: "llama", layers: 2, embedding: 256, heads: 8, kvHeads: 4, headDim: 32,
                    ffn: 512, vocab: 32000, contextLength: 4096, tied: false, ropeBase: 1e4, rmsEps: 1e-5, ropeStyle: .normal,
                    quantization: "Q4_0", typeCounts: ["Q4_0": 15, "Q6_K": 1, "F32": 5], hasChatTemplate: false),
        SharedModel(file: "tiny-llama-spm-q6_k.gguf", architecture: "llama", layers: 2, embedding: 256, heads: 8, kvHeads: 4, headDim: 32,
                    ffn: 512, vocab: 32000, contextLength: 4096, tied: false, ropeBase: 1e4, rmsEps: 1e-5, ropeStyle: .normal,
                    quantization: "Q6_K", typeCounts: ["Q6_K": 16, "F32": 5], hasChatTemplate: false),
    ]

    /// The `model` object of the model's llama.cpp reference JSON.
    func reference() throws -> [String: Any] {
        let stem = String(file.dropLast(".gguf".count))
        let url = URL(fileURLWithPath: (TestData.root ?? "") + "/references/\(stem).json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return try #require(json?["model"] as? [String: Any])
    }
}

@Suite("GGUF reader on the shared models")
struct GGUFReaderSharedModelTests {
    @Test("stories260K opens with its metadata, tensor directory and data in place",
          .enabled(if: TestData.isAvailable, TestData.skipReason))
    func stories260K() throws {
        let file = try GGUFFile(path: TestData.model("stories260K.gguf"))
        #expect(file.version == 3)
        #expect(file.fileSize == 1_185_376)
        #expect(file.alignment == 32)
        #expect(file.dataOffset == 14176)
        #expect(file.metadata.count == 19)
        #expect(file.string("general.architecture") == "llama")
        #expect(file.int("llama.block_count") == 5)
        #expect(file.int("llama.embedding_length") == 64)
        #expect(file.int("llama.attention.head_count_kv") == 4)
        #expect(file.double("llama.attention.layer_norm_rms_epsilon").map { Float($0) } == Float(1e-5))
        #expect(file.stringArray("tokenizer.ggml.tokens")?.count == 512)
        #expect(file.floatArray("tokenizer.ggml.scores")?.count == 512)
        #expect(file.intArray("tokenizer.ggml.token_type")?.count == 512)
        #expect(file.string("llama.block_count") == nil, "a uint32 is not a string")
        #expect(file.int("no.such.key") == nil)

        #expect(file.tensors.count == 48)
        #expect(file.tensors.allSatisfy { $0.type == .f32 })
        let embd = try #require(file.tensor(named: "token_embd.weight"))
        #expect(embd.shape == [64, 512])
        #expect(embd.offset == 14176)
        #expect(embd.byteCount == 131_072)
        #expect(embd.elementCount == 64 * 512)
        let down = try #require(file.tensor(named: "blk.0.ffn_down.weight"))
        #expect(down.shape == [172, 64])
        #expect(down.offset == 370_016)
        #expect(file.tensors.first?.name == "token_embd.weight")

        // The data pointer addresses the tensor's bytes in the file itself.
        let norm = try #require(file.tensor(named: "output_norm.weight"))
        let values = UnsafeBufferPointer(start: file.data(of: norm).assumingMemoryBound(to: Float.self), count: 64)
        #expect(values.allSatisfy { $0.isFinite && $0 != 0 })
        let whole = file.fileBytes
        #expect(Array(whole[norm.offset..<norm.offset + 4]) == Array(UnsafeRawBufferPointer(start: file.data(of: norm), count: 4)))
    }

    @Test("every shared model opens and its description matches the README and llama.cpp's reference",
          .enabled(if: TestData.isAvailable, TestData.skipReason), arguments: SharedModel.all)
    func describes(model: SharedModel) throws {
        let file = try GGUFFile(path: TestData.model(model.file))
        let d = try GGUFModelDescription(file: file)
        #expect(d.architecture == model.architecture)
        #expect(d.blockCount == model.layers)
        #expect(d.embeddingLength == model.embedding)
        #expect(d.headCount == model.heads)
        #expect(d.headCountKV == model.kvHeads)
        #expect(d.keyLength == model.headDim)
        #expect(d.valueLength == model.headDim)
        #expect(d.feedForwardLength == model.ffn)
        #expect(d.vocabSize == model.vocab)
        #expect(d.contextLength == model.contextLength)
        #expect(d.hasTiedOutput == model.tied)
        #expect(d.ropeFreqBase == model.ropeBase)
        #expect(Float(d.rmsNormEpsilon) == model.rmsEps)
        #expect(d.ropeStyle == model.ropeStyle)
        #expect(d.ropeDimensionCount == model.headDim)
        #expect(d.ropeScaling == nil)
        #expect(d.quantization == model.quantization)
        #expect(d.tensorTypeCounts == model.typeCounts)
        #expect((d.chatTemplate != nil) == model.hasChatTemplate)
        #expect(d.tensorBytes == file.tensors.reduce(0) { $0 + $1.byteCount })
        #expect(d.tensorBytes <= file.fileSize - file.dataOffset)
        #expect(d.tensorBytes > (file.fileSize - file.dataOffset) * 99 / 100, "tensor data fills the data section but for padding")

        // llama.cpp's own view of the same file.
        let reference = try model.reference()
        #expect(reference["architecture"] as? String == d.architecture)
        #expect(reference["name"] as? String == d.name)
        #expect(reference["n_params"] as? Int == d.parameterCount)
        #expect(reference["n_vocab"] as? Int == d.vocabSize)
        #expect(reference["n_layer"] as? Int == d.blockCount)
        #expect(reference["n_head"] as? Int == d.headCount)
        #expect(reference["n_head_kv"] as? Int == d.headCountKV)
        #expect(reference["tensor_type_counts"] as? [String: Int] == d.tensorTypeCounts)
        let types = try #require(reference["tensor_types"] as? [String: String])
        #expect(types.count == file.tensors.count)
        for t in file.tensors {
            #expect(types[t.name] == t.type.name, "\(t.name)")
        }
    }

    @Test("a shared model's tensors lie in order, aligned and without overlap inside the file",
          .enabled(if: TestData.isAvailable, TestData.skipReason), arguments: SharedModel.all)
    func tensorLayout(model: SharedModel) throws {
        let file = try GGUFFile(path: TestData.model(model.file))
        var end = file.dataOffset
        for t in file.tensors.sorted(by: { $0.offset < $1.offset }) {
            #expect(t.offset >= end)
            #expect(t.offset % file.alignment == 0)
            #expect(t.byteCount == t.rowCount * t.rowByteCount)
            end = t.offset + t.byteCount
        }
        #expect(end <= file.fileSize)
    }

    @Test("the vocab-only GGUFs open: no tensors, their tokenizer arrays complete",
          .enabled(if: TestData.isAvailable, TestData.skipReason),
          arguments: [("ggml-vocab-gpt-2.gguf", "gpt2", 50257, 50000), ("ggml-vocab-llama-bpe.gguf", "llama", 128_256, 280_147),
                      ("ggml-vocab-llama-spm.gguf", "llama", 32000, 0), ("ggml-vocab-qwen2.gguf", "qwen2", 151_936, 151_387)])
    func vocabularies(file name: String, architecture: String, tokens: Int, merges: Int) throws {
        let file = try GGUFFile(path: (TestData.root ?? "") + "/vocab/" + name)
        #expect(file.tensors.isEmpty)
        #expect(file.string("general.architecture") == architecture)
        #expect(file.stringArray("tokenizer.ggml.tokens")?.count == tokens)
        #expect(file.intArray("tokenizer.ggml.token_type")?.count == tokens)
        #expect((file.stringArray("tokenizer.ggml.merges")?.count ?? 0) == merges)
        // The hyper-parameters of the original model are there, the weights are not.
        let d = try GGUFModelDescription(file: file)
        #expect(d.vocabSize == tokens)
        #expect(d.parameterCount == 0 && d.tensorBytes == 0 && d.tensorTypeCounts.isEmpty)
        #expect(!d.hasTiedOutput, "no token embedding either, so nothing is tied")
    }
}
