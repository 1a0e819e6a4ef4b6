import Testing
import RunAnywhereGGUF

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
}
