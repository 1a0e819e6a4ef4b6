import Foundation
import RunAnywhereGGUF
import RunAnywhereTestSupport
import Testing
@testable import RunAnywhereLlamaCpp

/// Q2_K and Q3_K, the 2- and 3-bit K-quants of Q2_K and Q3_K_S/M/L downloads: the native engine reads their blocks as
/// llama.cpp does. The same file (every matrix in the type, the token embedding too) through both engines: every
/// prompt position's logits and the greedy continuation. The first position attends to itself only, so its logits
/// are the weights' and the Q8_K activations' alone (within 1e-3 of the largest; measured ~1e-5); later positions mix
/// attention through the activations' rounding, which this random-weight model amplifies to 1-4% for every quantized
/// type alike (Q6_K, long supported, is the calibration row; an F32 twin stays within 5e-4).
@Suite("Q2_K and Q3_K: the native engine against llama.cpp", .enabled(if: LlamaCppInstall.isInstalled, LlamaCppInstall.skipReason))
struct LowBitKQuantTests {
    @Test("a Q2_K or Q3_K model: the native engine's logits at every prompt position and its greedy tokens are llama.cpp's",
          arguments: [GGMLType.q2_K, .q3_K, .q6_K])
    func matchesLlamaCpp(type: GGMLType) throws {
        let dir = try TemporaryDirectory(prefix: "lowbit-llamacpp")
        defer { dir.remove() }
        let spec = TinyModelSpec.superBlockShaped(type, seed: 29)
        let file = dir.path + "/\(type.name).gguf"
        try GGUFWriter.tinyModel(spec).write(to: file)

        let prompt: [Int32] = [1, 200, 7, 42, 263, 130, 5, 17, 99, 64, 3]
        let vocab = spec.vocabSize
        let ours = try GGUFContext(model: GGUFModel(path: file), contextLength: 64, threads: 2)
        let session = try LlamaCppSession(library: try LlamaCppBackend().library().get(), path: file, contextLength: 64, threads: 2)
        #expect(session.vocabularySize == vocab)
        let a = try ours.evaluate(prompt, allLogits: true)
        let b = try session.evaluate(prompt, allLogits: true)
        try #require(a.count == prompt.count * vocab && b.count == a.count)
        func argmax(_ x: ArraySlice<Float>) -> Int { (x.indices.max { x[$0] < x[$1] } ?? x.startIndex) - x.startIndex }
        for i in prompt.indices {
            let x = a[(i * vocab)..<((i + 1) * vocab)], y = b[(i * vocab)..<((i + 1) * vocab)]
            let scale = y.map(abs).max() ?? 1
            let worst = zip(x, y).map { abs($0 - $1) }.max() ?? 0
            #expect(worst <= (i == 0 ? 1e-3 : 5e-2) * scale, "\(type.name) position \(i): max |Δ| \(worst) against max |logit| \(scale)")
            let top = argmax(y), margin = y[y.startIndex + top] - (y.enumerated().filter { $0.offset != top }.map(\.element).max() ?? 0)
            if margin > 2 * worst { #expect(argmax(x) == top, "\(type.name) position \(i): argmax \(argmax(x)) vs llama.cpp \(top)") }
        }
        // Greedy continuation: 8 tokens on each engine from its own choices.
        var next = (ours: Int32(argmax(a[((prompt.count - 1) * vocab)...])), theirs: Int32(argmax(b[((prompt.count - 1) * vocab)...])))
        var tokens: (ours: [Int32], theirs: [Int32]) = ([], [])
        for _ in 0..<8 {
            tokens.ours.append(next.ours)
            tokens.theirs.append(next.theirs)
            next = (Int32(argmax(try ours.decode(next.ours)[...])), Int32(argmax(try session.evaluate([next.theirs])[...])))
        }
        #expect(tokens.ours == tokens.theirs, "\(type.name): greedy \(tokens.ours) vs llama.cpp \(tokens.theirs)")
    }
}
