import CKernels
import Foundation
import Testing
@testable import RunAnywhereGGUF
import RunAnywhereTestSupport

/// Writes a model and opens it (the directory is removed when opening fails).
private func open(_ writer: GGUFWriter) throws -> (GGUFModel, TemporaryDirectory) {
    let dir = try TemporaryDirectory(prefix: "gemma3")
    let path = dir.path + "/model.gguf"
    do {
        try writer.write(to: path)
        return (try GGUFModel(path: path), dir)
    } catch {
        dir.remove()
        throw error
    }
}

private func gemma(_ name: String = "tiny-gemma3-f32", edit: (inout TinyModelSpec) -> Void = { _ in }) throws -> TinyModelSpec {
    var spec = try #require(TinyGemma3.spec(name))
    edit(&spec)
    return spec
}

private let prompt: [Int32] = [1, 300, 45, 271, 9, 488, 130, 77, 402, 260, 18, 333, 5, 97]

@Suite("Gemma 3 architecture")
struct EngineGemma3Tests {
    @Test("local and global layers as llama.cpp derives them (default period 6, a period, per-layer flags, no window)")
    func slidingWindowPattern() throws {
        func config(_ edit: (inout GGUFWriter) -> Void, window: Int = 4, layers: Int = 13) throws -> TransformerConfig {
            var w = GGUFWriter.tinyModel(try gemma { $0.blockCount = layers; $0.slidingWindow = window })
            edit(&w)
            let (model, dir) = try open(w)
            defer { dir.remove() }
            return model.config
        }
        let byDefault = try config { _ in }
        #expect(byDefault.slidingWindow == 4)
        #expect(byDefault.isLocalLayer.enumerated().filter { !$0.element }.map(\.offset) == [5, 11])
        let period = try config { $0.set("gemma3.attention.sliding_window_pattern", .uint32(3)) }
        #expect(period.isLocalLayer.enumerated().filter { !$0.element }.map(\.offset) == [2, 5, 8, 11])
        let flags = (0..<13).map { $0 % 2 == 0 }
        let explicit = try config { $0.set("gemma3.attention.sliding_window_pattern", .array(flags.map { .bool($0) })) }
        #expect(explicit.isLocalLayer == flags)
        let none = try config({ _ in }, window: 0)
        #expect(none.slidingWindow == 0 && !none.isLocalLayer.contains(true))
        #expect(byDefault.ropeFreqBaseLocal == 10_000 && byDefault.ropeFreqBase == 1_000_000)
        #expect(byDefault.embeddingScale == Float(64).squareRoot())
        #expect(byDefault.attentionScale == 1 / Float(32).squareRoot())
    }

    @Test("the window only changes positions beyond it: same logits before, different after")
    func windowMasksOldPositions() throws {
        func logits(window: Int) throws -> [Float] {
            let (model, dir) = try open(GGUFWriter.tinyModel(try gemma { $0.slidingWindow = window }))
            defer { dir.remove() }
            return try GGUFContext(model: model, contextLength: 32, threads: 2).evaluate(prompt, allLogits: true)
        }
        let narrow = try logits(window: 5), wide = try logits(window: 1000)
        let vocab = narrow.count / prompt.count
        // Positions 0...4 see at most 5 tokens: the window masks nothing yet.
        #expect(narrow[..<(5 * vocab)] == wide[..<(5 * vocab)])
        let later = zip(narrow[(5 * vocab)...], wide[(5 * vocab)...]).map { abs($0 - $1) }.max() ?? 0
        #expect(later > 1e-2, "a 5-token window made no difference after position 5 (max |diff| \(later))")
    }

    @Test("a whole prompt in one batch gives the logits of token-by-token decoding; threads change nothing",
          arguments: TinyGemma3.names, KernelPath.available)
    func batchedEqualsSequential(name: String, path: KernelPath) throws {
        try path.run { try batchedEqualsSequential(name: name) }
    }

    private func batchedEqualsSequential(name: String) throws {
        let (model, dir) = try open(GGUFWriter.tinyModel(try gemma(name)))
        defer { dir.remove() }
        let vocab = model.vocabularySize
        let all = try GGUFContext(model: model, contextLength: 32, threads: 2).evaluate(prompt, allLogits: true)
        #expect(all.allSatisfy { $0.isFinite })
        let sequential = try GGUFContext(model: model, contextLength: 32, threads: 2)
        for (i, token) in prompt.enumerated() {
            let row = try sequential.decode(token)
            let reference = all[(i * vocab)..<((i + 1) * vocab)]
            let scale = reference.map(abs).max() ?? 1
            let diff = zip(row, reference).map { abs($0 - $1) }.max() ?? 0
            #expect(diff / scale < 1e-4, "\(name): position \(i) differs by \(diff / scale) (relative)")
        }
        let small = try GGUFContext(model: model, contextLength: 32, threads: 3, batchSize: 4).evaluate(prompt, allLogits: true)
        #expect(small == (try GGUFContext(model: model, contextLength: 32, threads: 1, batchSize: 4).evaluate(prompt, allLogits: true)))
    }

    @Test("final logit soft-capping bounds every logit by the cap")
    func softcap() throws {
        let (model, dir) = try open(GGUFWriter.tinyModel(try gemma { $0.finalLogitSoftcap = 0.5 }))
        defer { dir.remove() }
        let logits = try GGUFContext(model: model, contextLength: 32, threads: 1).evaluate(prompt, allLogits: true)
        #expect(logits.allSatisfy { abs($0) <= 0.5 })
        #expect(logits.contains { abs($0) > 0.4 })
    }

    @Test("GELU (tanh) is evaluated like ggml: F16 input and output, clamped beyond ±10")
    func gelu() {
        for x: Float in [-12, -10, -3.3, -1, -0.2, 0, 0.1, 0.7, 1.5, 4, 9.99, 10, 15] {
            let h = Double(ra_ops_f16_to_f32(ra_ops_f32_to_f16(x)))
            let exact = 0.5 * h * (1 + tanh(0.7978845608028654 * h * (1 + 0.044715 * h * h)))
            let expected: Float = x <= -10 ? 0 : x >= 10 ? x : ra_ops_f16_to_f32(ra_ops_f32_to_f16(Float(exact)))
            #expect(ra_gelu_f16(x) == expected, "gelu(\(x))")
        }
        // Every F16 input the table holds: the value ggml's own table has, GELU computed in single precision on the
        // F16 input (1 + tanh cancels for negative inputs, so this is not the exact GELU there) rounded to F16.
        var checked = 0, differing: [Float] = []
        for bits in 0..<UInt16.max {
            let h = ra_ops_f16_to_f32(bits)
            guard h.isFinite, h > -10, h < 10 else { continue }
            let inner: Float = 0.7978845608028654 * h * (1 + 0.044715 * h * h)
            let g: Float = 0.5 * h * (1 + tanhf(inner))
            checked += 1
            if ra_gelu_f16(h) != ra_ops_f16_to_f32(ra_ops_f32_to_f16(g)) { differing.append(h) }
        }
        #expect(checked > 30_000)
        // The C table may fuse a multiply-add where Swift does not: a last-bit difference that crosses an F16 rounding
        // boundary now and then, never more.
        #expect(differing.count <= checked / 1000, "\(differing.count) inputs differ, e.g. \(differing.prefix(5))")
        var gate: [Float] = [-11, 0.5, 2, 12], up: [Float] = [3, 2, -1, 0.5]
        ra_gelu_mul(nil, &gate, &up, 4)
        #expect(gate == [0, ra_gelu_f16(0.5) * 2, -ra_gelu_f16(2), 6])
    }
}
