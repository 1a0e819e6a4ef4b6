import Foundation
import Testing
import RunAnywhereGGUF
import RunAnywhereTestSupport

@Suite("GGUF model description from metadata")
struct GGUFModelDescriptionTests {
    static func describe(_ writer: GGUFWriter) throws -> GGUFModelDescription {
        let (file, dir) = try roundTrip(writer)
        defer { dir.remove() }
        return try GGUFModelDescription(file: file)
    }

    @Test("a tiny qwen3 is described with its own head dimension, NeoX rope and tied output")
    func qwen3() throws {
        var spec = TinyModelSpec()
        spec.architecture = .qwen3
        spec.embeddingLength = 64
        spec.headCount = 4
        spec.headCountKV = 2
        spec.headDim = 32
        spec.feedForwardLength = 96
        spec.blockCount = 3
        spec.contextLength = 1024
        spec.ropeFreqBase = 1_000_000
        spec.rmsNormEpsilon = 1e-6
        spec.tiedOutput = true
        spec.weightType = .f16
        var w = GGUFWriter.tinyModel(spec)
        w.set("tokenizer.chat_template", .string("{{ messages }}"))
        let d = try Self.describe(w)
        #expect(d.architecture == "qwen3")
        #expect(d.name == "tiny-qwen3-test")
        #expect(d.blockCount == 3)
        #expect(d.embeddingLength == 64)
        #expect(d.headCount == 4 && d.headCountKV == 2)
        #expect(d.keyLength == 32 && d.valueLength == 32)
        #expect(d.feedForwardLength == 96)
        #expect(d.contextLength == 1024)
        #expect(d.ropeFreqBase == 1_000_000)
        #expect(d.ropeStyle == .neox)
        #expect(Float(d.rmsNormEpsilon) == 1e-6)
        #expect(d.vocabSize == 300)
        #expect(d.fileType == 1 && d.quantization == "F16")
        #expect(d.chatTemplate == "{{ messages }}")
        #expect(d.hasTiedOutput)
        let perLayer = 64 + 64 * 128 + 2 * 64 * 64 + 128 * 64 + 2 * 32 + 64 + 3 * 64 * 96
        #expect(d.parameterCount == 300 * 64 + 64 + 3 * perLayer)
        #expect(d.tensorTypeCounts == ["F16": 1 + 3 * 7, "F32": 1 + 3 * 4])
        // Codable round trip (the SDK stores descriptions).
        let decoded = try JSONDecoder().decode(GGUFModelDescription.self, from: JSONEncoder().encode(d))
        #expect(decoded == d)
    }

    @Test("a tiny llama gets normal rope, untied output and defaults for absent keys")
    func llamaDefaults() throws {
        var spec = TinyModelSpec()
        spec.weightType = .q8_0
        spec.embeddingLength = 64
        spec.headDim = 16
        spec.feedForwardLength = 64
        var w = GGUFWriter.tinyModel(spec)
        w.entries.removeAll { ["llama.rope.freq_base", "llama.attention.key_length", "llama.attention.value_length",
                               "llama.rope.dimension_count", "llama.attention.head_count_kv",
                               "llama.attention.layer_norm_rms_epsilon", "general.file_type"].contains($0.key) }
        w.tensors.removeAll { $0.name.contains("attn_k.weight") || $0.name.contains("attn_v.weight") }
        let d = try Self.describe(w)
        #expect(d.ropeStyle == .normal)
        #expect(d.ropeFreqBase == 10_000)
        #expect(d.headCountKV == d.headCount)
        #expect(d.keyLength == 64 / 4 && d.valueLength == 16 && d.ropeDimensionCount == 16)
        #expect(d.rmsNormEpsilon == 1e-5)
        #expect(!d.hasTiedOutput)
        #expect(d.fileType == nil)
        #expect(d.quantization == "Q8_0", "the most common matrix type when general.file_type is absent")
        #expect(d.ropeScaling == nil)
        #expect(d.chatTemplate == nil)
    }

    @Test("rope scaling keys are read", arguments: [("yarn", 4.0, 32768), ("linear", 2.0, 0)])
    func ropeScaling(type: String, factor: Double, original: Int) throws {
        var w = GGUFWriter.tinyModel(TinyModelSpec())
        w.set("llama.rope.scaling.type", .string(type))
        w.set("llama.rope.scaling.factor", .float32(Float(factor)))
        if original > 0 { w.set("llama.rope.scaling.original_context_length", .uint32(UInt32(original))) }
        let d = try Self.describe(w)
        #expect(d.ropeScaling == GGUFRopeScaling(type: type, factor: factor, originalContextLength: original > 0 ? original : nil))

        w.set("llama.rope.scaling.type", .string("none"))
        #expect(try Self.describe(w).ropeScaling == nil)
        w.entries.removeAll { $0.key.hasPrefix("llama.rope.scaling") }
        w.set("llama.rope.scale_linear", .float32(8))
        #expect(try Self.describe(w).ropeScaling == GGUFRopeScaling(type: "linear", factor: 8))
    }

    @Test("per-layer head counts, vocab_size and embedding rows are used when the usual keys are absent")
    func fallbacks() throws {
        var w = GGUFWriter.tinyModel(TinyModelSpec())
        w.set("llama.attention.head_count_kv", .array([.int32(1), .int32(2)]))
        w.entries.removeAll { $0.key == "tokenizer.ggml.tokens" }
        w.set("llama.vocab_size", .uint32(321))
        #expect(try Self.describe(w).headCountKV == 2)
        #expect(try Self.describe(w).vocabSize == 321)
        w.entries.removeAll { $0.key == "llama.vocab_size" }
        #expect(try Self.describe(w).vocabSize == 300, "token_embd.weight has 300 rows")
    }

    @Test("missing or inconsistent required keys throw, naming the key",
          arguments: ["general.architecture", "llama.block_count", "llama.embedding_length", "llama.attention.head_count",
                      "llama.context_length"])
    func missingKeys(key: String) throws {
        var w = GGUFWriter.tinyModel(TinyModelSpec())
        w.entries.removeAll { $0.key == key }
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }
        let error = #expect(throws: GGUFError.self) { try GGUFModelDescription(file: file) }
        #expect(error?.kind == .invalidFormat)
        #expect(error?.message.contains(key) == true, "\(String(describing: error))")
    }

    @Test("non-finite or negative rope base, epsilon and scaling factor are rejected, naming the key",
          arguments: [("llama.rope.freq_base", Float.nan), ("llama.rope.freq_base", 0), ("llama.rope.freq_base", -1),
                      ("llama.attention.layer_norm_rms_epsilon", -1e-5), ("llama.attention.layer_norm_rms_epsilon", .infinity),
                      ("llama.rope.scaling.factor", .nan)])
    func badNumbers(key: String, value: Float) throws {
        var w = GGUFWriter.tinyModel(TinyModelSpec())
        w.set(key, .float32(value))
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }
        let error = #expect(throws: GGUFError.self) { try GGUFModelDescription(file: file) }
        #expect(error?.message.contains(key) == true)
    }

    @Test("a head count that does not divide the KV heads is rejected")
    func inconsistentHeads() throws {
        var w = GGUFWriter.tinyModel(TinyModelSpec())
        w.set("llama.attention.head_count_kv", .uint32(3))
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }
        #expect(throws: GGUFError.self) { try GGUFModelDescription(file: file) }
    }

    @Test("file type numbers map to llama.cpp's quantization names")
    func fileTypeNames() {
        let expected: [Int: String] = [0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
                                       11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
                                       17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 30: "IQ4_XS", 32: "BF16", 1024 + 15: "Q4_K_M"]
        for (type, name) in expected { #expect(GGUFModelDescription.fileTypeName(type) == name, "\(type)") }
        #expect(GGUFModelDescription.fileTypeName(4) == nil)
        #expect(GGUFModelDescription.fileTypeName(999) == nil)
    }

    @Test("ggml type block sizes and names match the format", arguments: GGMLType.allCases)
    func ggmlTypes(type: GGMLType) {
        #expect(type.blockSize >= 1 && type.typeSize >= 1)
        #expect(GGMLType(rawValue: type.rawValue) == type)
        #expect(type.rowByteCount(elements: type.blockSize * 3) == type.typeSize * 3)
        #expect(type.rowByteCount(elements: -1) == nil)
        if type.blockSize > 1 { #expect(type.rowByteCount(elements: type.blockSize + 1) == nil) }
        let known: [GGMLType: (Int, Int, String)] = [.f32: (1, 4, "F32"), .f16: (1, 2, "F16"), .bf16: (1, 2, "BF16"),
            .q4_0: (32, 18, "Q4_0"), .q4_1: (32, 20, "Q4_1"), .q5_0: (32, 22, "Q5_0"), .q5_1: (32, 24, "Q5_1"),
            .q8_0: (32, 34, "Q8_0"), .q8_1: (32, 36, "Q8_1"), .q2_K: (256, 84, "Q2_K"), .q3_K: (256, 110, "Q3_K"),
            .q4_K: (256, 144, "Q4_K"), .q5_K: (256, 176, "Q5_K"), .q6_K: (256, 210, "Q6_K"), .q8_K: (256, 292, "Q8_K"),
            .iq2_xxs: (256, 66, "IQ2_XXS"), .iq4_nl: (32, 18, "IQ4_NL"), .iq4_xs: (256, 136, "IQ4_XS"), .mxfp4: (32, 17, "MXFP4")]
        if let (block, size, name) = known[type] {
            #expect(type.blockSize == block && type.typeSize == size && type.name == name)
        }
    }
}
