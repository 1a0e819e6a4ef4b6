import Foundation
import Testing
@testable import RunAnywhereGGUF
import RunAnywhereTestSupport

/// Writes a tiny random model and opens it.
private func tinyModel(_ spec: TinyModelSpec, edit: (inout GGUFWriter) -> Void = { _ in }) throws -> (GGUFModel, TemporaryDirectory) {
    let dir = try TemporaryDirectory()
    var writer = GGUFWriter.tinyModel(spec)
    edit(&writer)
    let path = dir.path + "/model.gguf"
    try writer.write(to: path)
    do {
        return (try GGUFModel(path: path), dir)
    } catch {
        dir.remove()
        throw error
    }
}

private func spec(_ arch: TinyModelSpec.Architecture, _ type: GGMLType, tied: Bool = false) -> TinyModelSpec {
    var s = TinyModelSpec()
    s.architecture = arch
    s.weightType = type
    s.tiedOutput = tied
    s.embeddingLength = 64
    s.headCount = 4
    s.headCountKV = 2
    s.headDim = arch == .qwen3 ? 32 : 16     // qwen3: heads × head_dim (128) ≠ hidden (64)
    s.feedForwardLength = 96
    s.weightStd = 0.2
    return s
}

private func maxRelativeDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
    var diff: Float = 0, scale: Float = 0
    for (x, y) in zip(a, b) {
        diff = max(diff, abs(x - y))
        scale = max(scale, abs(y))
    }
    return diff / max(scale, 1e-6)
}

private let prompt: [Int32] = [1, 300 - 5, 7, 260, 42, 99, 280, 3, 17, 200, 150]

@Suite("Engine on tiny generated models")
struct EngineTests {
    static let shapes: [(TinyModelSpec.Architecture, GGMLType, Bool)] = [
        (.llama, .f32, false), (.llama, .f16, true), (.llama, .q8_0, false), (.qwen3, .f32, true), (.qwen3, .q8_0, true),
        // the 32-element block types of real downloads (SmolLM2 is Q4_1, Gemma 3 mostly Q5_0)
        (.llama, .q4_1, false), (.qwen3, .q5_0, true), (.llama, .q4_0, true), (.qwen3, .q5_1, false),
    ]

    /// A prompt of a 32-element block type in one batch (8-row AVX2 panels, 16-row VNNI panels where the CPU has
    /// them: rows of 64 columns or a multiple) against token-by-token decoding (the AVX2 decode rows kernels): every
    /// kernel sums in dot_b32's order, so the logits must be equal bit for bit on every path. 21 tokens: 5 groups of
    /// 4 activation rows and a partial one; 96 rows of the up and gate matrices: 6 panels of 16.
    @Test("a 32-element block type's prompt in one batch gives the logits of token-by-token decoding, bit for bit",
          arguments: [GGMLType.q8_0, .q4_0, .q5_0, .q4_1, .q5_1], KernelPath.available)
    func blockTypeBatchIsBitExact(type: GGMLType, path: KernelPath) throws {
        try path.run {
            var s = spec(.llama, type)
            s.embeddingLength = 128
            s.feedForwardLength = 96
            s.headDim = 32
            let (model, dir) = try tinyModel(s)
            defer { dir.remove() }
            let vocab = model.vocabularySize
            let tokens = (0..<21).map { Int32(($0 * 37 + 11) % 300) }
            let all = try GGUFContext(model: model, contextLength: 64, threads: 2).evaluate(tokens, allLogits: true)
            let sequential = try GGUFContext(model: model, contextLength: 64, threads: 2)
            for (i, token) in tokens.enumerated() {
                let one = try sequential.decode(token)
                let differing = zip(one, all[(i * vocab)..<((i + 1) * vocab)]).filter { $0.bitPattern != $1.bitPattern }.count
                #expect(differing == 0, "\(type) \(path): position \(i), \(differing) of \(vocab) logits differ from token by token")
            }
        }
    }

    @Test("a whole prompt in one batch gives the same logits as feeding it token by token",
          arguments: 0..<EngineTests.shapes.count, KernelPath.available)
    func batchedEqualsSequential(index: Int, path: KernelPath) throws {
        try path.run {
            let (arch, type, tied) = Self.shapes[index]
            let (model, dir) = try tinyModel(spec(arch, type, tied: tied))
            defer { dir.remove() }
            let vocab = model.vocabularySize
            let batched = try GGUFContext(model: model, contextLength: 64, threads: 2)
            let all = try batched.evaluate(prompt, allLogits: true)
            #expect(all.count == prompt.count * vocab)
            #expect(all.allSatisfy { $0.isFinite })
            let sequential = try GGUFContext(model: model, contextLength: 64, threads: 2)
            for (i, token) in prompt.enumerated() {
                let logits = try sequential.decode(token)
                let row = all[(i * vocab)..<((i + 1) * vocab)]
                let d = maxRelativeDifference(logits[...], row)
                #expect(d < 1e-4, "\(arch) \(type): position \(i) differs by \(d) (relative)")
            }
            // Only the last row when allLogits is false; split into small batches gives the same.
            let small = try GGUFContext(model: model, contextLength: 64, threads: 1, batchSize: 3)
            let last = try small.evaluate(prompt)
            #expect(last.count == vocab)
            #expect(maxRelativeDifference(last[...], all[((prompt.count - 1) * vocab)...]) < 1e-4)
            #expect(small.position == prompt.count)
            small.reset()
            let allSmall = try small.evaluate(prompt, allLogits: true)
            #expect(maxRelativeDifference(allSmall[...], all[...]) < 1e-4)
        }
    }

    @Test("one thread and three threads give bit-identical logits", arguments: 0..<EngineTests.shapes.count, KernelPath.available)
    func threadCountDoesNotChangeResults(index: Int, path: KernelPath) throws {
        try path.run {
            let (arch, type, tied) = Self.shapes[index]
            let (model, dir) = try tinyModel(spec(arch, type, tied: tied))
            defer { dir.remove() }
            var results: [[Float]] = []
            // Long enough that attention, quantization and every matrix product are split over the threads.
            let long = (0..<48).map { Int32(($0 * 37 + 11) % 300) }
            for threads in [1, 2, 3] {
                let context = try GGUFContext(model: model, contextLength: 64, threads: threads)
                var logits = try context.evaluate(long, allLogits: true)
                logits += try context.decode(5)
                results.append(logits)
            }
            #expect(results[0] == results[1])
            #expect(results[0] == results[2])
        }
    }

    @Test("the tied output matrix is the token embedding")
    func tiedOutputUsesEmbedding() throws {
        let (model, dir) = try tinyModel(spec(.llama, .f32, tied: true))
        defer { dir.remove() }
        #expect(model.file.tensor(named: "output.weight") == nil)
        let context = try GGUFContext(model: model, contextLength: 16, threads: 1)
        let logits = try context.evaluate([1, 5])
        #expect(logits.count == model.vocabularySize)
        #expect(logits.allSatisfy { $0.isFinite })
    }

    @Test("rope_freqs.weight divides the RoPE frequencies (all ones change nothing)")
    func ropeFrequencyFactors() throws {
        func logits(_ factor: Float?) throws -> [Float] {
            let (model, dir) = try tinyModel(spec(.llama, .f32)) { w in
                if let factor { w.addTensor(name: "rope_freqs.weight", shape: [8], floats: Array(repeating: factor, count: 8)) }
            }
            defer { dir.remove() }
            return try GGUFContext(model: model, contextLength: 32, threads: 1).evaluate(prompt)
        }
        let plain = try logits(nil)
        #expect(try logits(1) == plain)
        #expect(maxRelativeDifference(try logits(4)[...], plain[...]) > 1e-3)
    }

    @Test("reset forgets the cache: the same prompt gives the same logits again")
    func resetClearsCache() throws {
        let (model, dir) = try tinyModel(spec(.qwen3, .q8_0))
        defer { dir.remove() }
        let context = try GGUFContext(model: model, contextLength: 32, threads: 2)
        let first = try context.evaluate(prompt)
        let continued = try context.evaluate(prompt)
        #expect(first != continued)   // same tokens at later positions: different logits
        context.reset()
        #expect(context.position == 0)
        #expect(try context.evaluate(prompt) == first)
    }

    @Test("tokens beyond the context length are refused; generation stops with contextFull")
    func contextFull() throws {
        let (model, dir) = try tinyModel(spec(.llama, .f32))
        defer { dir.remove() }
        let context = try GGUFContext(model: model, contextLength: 8, threads: 1)
        #expect(throws: GGUFError.self) { try context.evaluate(Array(repeating: 5, count: 9)) }
        #expect(context.position == 0)
        _ = try context.evaluate([1, 2, 3, 4, 5, 6, 7, 8])
        #expect(throws: GGUFError.self) { try context.decode(4) }
        context.reset()
        let stats = try context.generate(prompt: [1, 2, 3], sampling: .greedy, maxTokens: 100, stop: [],
                                         shouldContinue: { true }, onText: { _ in })
        #expect(stats.finishReason == .contextFull)
        #expect(stats.generatedTokens == 6)     // positions 3..7 decoded, the 6th token fills no slot
        #expect(context.position == 8)
    }

    @Test("load parameters: the trained context length (capped at 4096) and every core unless given")
    func loadParameters() throws {
        var s = spec(.llama, .f32)
        s.contextLength = 300
        let (model, dir) = try tinyModel(s)
        defer { dir.remove() }
        #expect(model.trainedContextLength == 300)
        let defaults = try GGUFContext(model: model, parameters: GGUFLoadParameters())
        #expect(defaults.contextLength == 300)
        #expect(defaults.threads == GGUFContext.defaultThreadCount)
        let given = try GGUFContext(model: model, parameters: GGUFLoadParameters(contextLength: 64, threads: 1, batchSize: 8))
        #expect(given.contextLength == 64 && given.threads == 1 && given.batchSize == 8)
        #expect(given.memoryBytes >= 2 * 2 * 64 * 2 * 32)     // K and V, F16, 2 layers × 64 positions × kv dim 32
        #expect(throws: GGUFError.self) { try GGUFContext(model: model, contextLength: 0, threads: 1) }
    }

    @Test("a token id outside the vocabulary is an error, not a crash")
    func invalidTokenID() throws {
        let (model, dir) = try tinyModel(spec(.llama, .f32))
        defer { dir.remove() }
        let context = try GGUFContext(model: model, contextLength: 8, threads: 1)
        #expect(throws: GGUFError.self) { try context.evaluate([1, Int32(model.vocabularySize)]) }
        #expect(throws: GGUFError.self) { try context.evaluate([-1]) }
        #expect(throws: GGUFError.self) { try context.evaluate([]) }
    }
}

@Suite("Engine generation")
struct EngineGenerationTests {
    @Test("the same seed gives the same tokens; another seed gives others")
    func seededSamplingIsReproducible() throws {
        let (model, dir) = try tinyModel(spec(.qwen3, .q8_0))
        defer { dir.remove() }
        let context = try GGUFContext(model: model, contextLength: 64, threads: 2)
        func run(_ seed: UInt64) throws -> [Int32] {
            let sampling = SamplingParameters(temperature: 1.5, topK: 0, topP: 1, minP: 0, seed: seed)
            return try context.generate(prompt: prompt, sampling: sampling, maxTokens: 20, stop: [],
                                        shouldContinue: { true }, onText: { _ in }).tokens
        }
        let a = try run(42), b = try run(42), c = try run(43)
        #expect(a.count == 20)
        #expect(a == b)
        #expect(a != c)
    }

    @Test("greedy generation equals repeated argmax of decode", arguments: KernelPath.available)
    func greedyMatchesManualDecode(path: KernelPath) throws {
        try path.run {
            let (model, dir) = try tinyModel(spec(.llama, .q8_0))
            defer { dir.remove() }
            let context = try GGUFContext(model: model, contextLength: 64, threads: 2)
            var logits = try context.evaluate(prompt)
            var manual: [Int32] = []
            for _ in 0..<10 {
                let id = Greedy.token(logits)
                manual.append(id)
                logits = try context.decode(id)
            }
            var text = ""
            let stats = try context.generate(prompt: prompt, sampling: .greedy, maxTokens: 10, stop: [],
                                             shouldContinue: { true }, onText: { text += $0 })
            #expect(stats.tokens == manual)
            #expect(stats.finishReason == .maxTokens)
            #expect(text == model.tokenizer.decode(manual))
            // The prompt was cached from the manual run: only the last prompt token is evaluated again.
            #expect(stats.evaluatedPromptTokens == 1)
        }
    }

    @Test("shouldContinue returning false cancels between tokens")
    func cancellation() throws {
        let (model, dir) = try tinyModel(spec(.llama, .f32))
        defer { dir.remove() }
        let context = try GGUFContext(model: model, contextLength: 64, threads: 1)
        var asked = 0
        let stats = try context.generate(prompt: prompt, sampling: .greedy, maxTokens: 50, stop: [],
                                         shouldContinue: { asked += 1; return asked <= 4 }, onText: { _ in })
        #expect(stats.finishReason == .cancelled)
        #expect(stats.generatedTokens == 3)
        #expect(asked == 1 + 3 + 1)     // before the prompt's only pass, before each of 3 tokens, then false

        // A long prompt is evaluated in passes of batchSize; cancelling after the first pass stops there.
        let small = try GGUFContext(model: model, contextLength: 64, threads: 1, batchSize: 4)
        var passes = 0
        let early = try small.generate(prompt: prompt, sampling: .greedy, maxTokens: 50, stop: [],
                                       shouldContinue: { passes += 1; return passes <= 1 }, onText: { _ in })
        #expect(early.finishReason == .cancelled)
        #expect(early.tokens.isEmpty)
        #expect(early.evaluatedPromptTokens == 4)
        #expect(small.position == 4)
    }

    @Test("an end-of-generation token ends generation and is not emitted")
    func endOfGeneration() throws {
        // Find the first greedy token, then declare it the EOS token of an otherwise identical model.
        let base = spec(.llama, .f32)
        let (model, dir) = try tinyModel(base)
        defer { dir.remove() }
        let first = Greedy.token(try GGUFContext(model: model, contextLength: 32, threads: 1).evaluate(prompt))
        let (eosModel, dir2) = try tinyModel(base) { $0.set("tokenizer.ggml.eos_token_id", .uint32(UInt32(first))) }
        defer { dir2.remove() }
        #expect(eosModel.tokenizer.isEndOfGeneration(first))
        let context = try GGUFContext(model: eosModel, contextLength: 32, threads: 1)
        var text = ""
        let stats = try context.generate(prompt: prompt, sampling: .greedy, maxTokens: 10, stop: [],
                                         shouldContinue: { true }, onText: { text += $0 })
        #expect(stats.finishReason == .endOfGeneration)
        #expect(stats.tokens.isEmpty)
        #expect(text.isEmpty)
    }

    @Test("a stop sequence ends generation; it and the text after it are not emitted")
    func stopSequence() throws {
        let (model, dir) = try tinyModel(spec(.qwen3, .f32))
        defer { dir.remove() }
        let context = try GGUFContext(model: model, contextLength: 64, threads: 1)
        var full = ""
        let reference = try context.generate(prompt: prompt, sampling: .greedy, maxTokens: 12, stop: [],
                                             shouldContinue: { true }, onText: { full += $0 })
        let characters = Array(full)
        try #require(characters.count >= 4)
        // Two characters from the middle of the text: usually spanning a token boundary.
        let stop = String(characters[(characters.count / 2)..<(characters.count / 2 + 2)])
        let expected = String(full[..<(full.range(of: stop)?.lowerBound ?? full.endIndex)])
        var text = ""
        var pieces: [String] = []
        let stats = try context.generate(prompt: prompt, sampling: .greedy, maxTokens: 12, stop: [stop, "never-seen"],
                                         shouldContinue: { true }, onText: { text += $0; pieces.append($0) })
        #expect(stats.finishReason == .stopSequence)
        #expect(text == expected)
        #expect(!pieces.contains { $0.contains(stop) })
        #expect(stats.tokens.count < reference.tokens.count)
        #expect(stats.tokens == Array(reference.tokens.prefix(stats.tokens.count)))
    }
}

@Suite("Stop sequences in streamed text")
struct StopSequenceFilterTests {
    @Test("text that may start a stop sequence is held back until it cannot")
    func holdsBackPrefixes() {
        var f = StopSequenceFilter(stopSequences: ["\nUser:"])
        #expect(f.push("Hello") == ("Hello", false))
        #expect(f.push(" there\nUs") == (" there", false))
        #expect(f.push("ually") == ("\nUsually", false))
        #expect(f.push("\n") == ("", false))
        #expect(f.finish() == "\n")
    }

    @Test("a stop sequence split over pieces is found; text after it is dropped")
    func findsSplitStop() {
        var f = StopSequenceFilter(stopSequences: ["END", "<|im_end|>"])
        #expect(f.push("abc<|im") == ("abc", false))
        #expect(f.push("_end|>tail") == ("", true))
        var g = StopSequenceFilter(stopSequences: ["END", "<|im_end|>"])
        #expect(g.push("xxEN") == ("xx", false))
        #expect(g.push("Dyy") == ("", true))
    }

    @Test("the earliest of several stop sequences wins; no stop sequences pass everything through")
    func earliestWins() {
        var f = StopSequenceFilter(stopSequences: ["world", "lo w"])
        #expect(f.push("hello world") == ("hel", true))
        var g = StopSequenceFilter(stopSequences: [""])
        #expect(g.push("anything") == ("anything", false))
    }

    @Test("multi-byte characters are never split")
    func unicode() {
        var f = StopSequenceFilter(stopSequences: ["é!"])
        #expect(f.push("café") == ("caf", false))
        #expect(f.push("s") == ("és", false))
        #expect(f.push("é!") == ("", true))
    }
}

/// A tiny qwen2 model: the llama layout under the qwen2 name, plus q/k/v biases (`biasScale` × N(0, 1)).
private func qwen2Writer(biasScale: Float, withBiases: Bool = true) -> GGUFWriter {
    var w = GGUFWriter.tinyModel(spec(.llama, .f32))
    for i in w.entries.indices where w.entries[i].key.hasPrefix("llama.") {
        w.entries[i].key = "qwen2." + w.entries[i].key.dropFirst("llama.".count)
    }
    w.set("general.architecture", .string("qwen2"))
    var rng = SeededGenerator(seed: 99)
    if withBiases {
        for layer in 0..<2 {
            for (name, n) in [("attn_q", 64), ("attn_k", 32), ("attn_v", 32)] {
                w.addTensor(name: "blk.\(layer).\(name).bias", shape: [n], floats: (0..<n).map { _ in rng.normal(std: biasScale) })
            }
        }
    }
    return w
}

@Suite("Engine qwen2")
struct EngineQwen2Tests {
    func logits(_ writer: GGUFWriter) throws -> [Float] {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try writer.write(to: dir.path + "/m.gguf")
        let model = try GGUFModel(path: dir.path + "/m.gguf")
        return try GGUFContext(model: model, contextLength: 32, threads: 2).evaluate(prompt)
    }

    @Test("qwen2 adds its q/k/v biases (zero biases change nothing, others do)")
    func biasesAreApplied() throws {
        let zero = try logits(qwen2Writer(biasScale: 0))
        let again = try logits(qwen2Writer(biasScale: 0))
        let biased = try logits(qwen2Writer(biasScale: 0.5))
        #expect(zero == again)
        #expect(maxRelativeDifference(biased[...], zero[...]) > 1e-3)
    }

    @Test("a qwen2 model without its biases is an invalid file, naming the tensor")
    func missingBias() throws {
        do {
            _ = try logits(qwen2Writer(biasScale: 0, withBiases: false))
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .invalidFormat)
            #expect(error.message.contains("attn_q.bias"))
        }
    }
}

@Suite("Engine model validation")
struct EngineValidationTests {
    @Test("an unknown architecture is unsupported and named")
    func unknownArchitecture() throws {
        do {
            _ = try tinyModel(spec(.llama, .f32)) { w in
                w.set("general.architecture", .string("mamba"))
            }
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .unsupported)
            #expect(error.message.contains("mamba"))
        }
    }

    @Test("a missing tensor is an invalid file, naming the tensor")
    func missingTensor() throws {
        do {
            _ = try tinyModel(spec(.llama, .f32)) { w in
                w.tensors.removeAll { $0.name == "blk.1.ffn_up.weight" }
            }
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .invalidFormat)
            #expect(error.message.contains("blk.1.ffn_up.weight"))
        }
    }

    @Test("a tokenizer with more tokens than embedding rows is an invalid file")
    func vocabularyMismatch() throws {
        do {
            _ = try tinyModel(spec(.llama, .f32)) { w in
                guard let i = w.entries.firstIndex(where: { $0.key == "tokenizer.ggml.tokens" }),
                      case .array(var tokens) = w.entries[i].value else { return }
                tokens.append(.string("extra"))
                w.set("tokenizer.ggml.tokens", .array(tokens))
                if let j = w.entries.firstIndex(where: { $0.key == "tokenizer.ggml.scores" }), case .array(var scores) = w.entries[j].value {
                    scores.append(.float32(0))
                    w.set("tokenizer.ggml.scores", .array(scores))
                }
                if let j = w.entries.firstIndex(where: { $0.key == "tokenizer.ggml.token_type" }), case .array(var types) = w.entries[j].value {
                    types.append(.int32(1))
                    w.set("tokenizer.ggml.token_type", .array(types))
                }
            }
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .invalidFormat)
            #expect(error.message.contains("token_embd.weight"))
        }
    }

    @Test("a tensor of the wrong shape is an invalid file")
    func wrongShape() throws {
        do {
            _ = try tinyModel(spec(.llama, .f32)) { w in
                if let i = w.tensors.firstIndex(where: { $0.name == "blk.0.attn_k.weight" }) {
                    w.tensors[i].shape = [w.tensors[i].shape[1], w.tensors[i].shape[0]]
                }
            }
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .invalidFormat)
            #expect(error.message.contains("blk.0.attn_k.weight"))
        }
    }

    @Test("a tensor type the kernels cannot multiply is unsupported and named")
    func unsupportedType() throws {
        var s = spec(.llama, .f32)
        s.embeddingLength = 256
        s.headDim = 64
        do {
            _ = try tinyModel(s) { w in
                if let i = w.tensors.firstIndex(where: { $0.name == "blk.0.ffn_gate.weight" }) {
                    let rows = w.tensors[i].shape[1]
                    w.tensors[i].typeID = GGMLType.iq2_xxs.rawValue
                    w.tensors[i].data = [UInt8](repeating: 0, count: rows * GGMLType.iq2_xxs.typeSize)
                }
            }
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .unsupported)
            #expect(error.message.contains("blk.0.ffn_gate.weight"))
            #expect(error.message.contains("IQ2_XXS"))
        }
    }
}
