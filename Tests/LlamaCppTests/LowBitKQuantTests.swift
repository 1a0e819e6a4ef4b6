import Foundation
import RunAnywhereGGUF
import RunAnywhereTestSupport
import Testing
@testable import RunAnywhereLlamaCpp

/// Q2_K and Q3_K, the 2- and 3-bit K-quants of Q2_K and Q3_K_S/M/L downloads, and IQ4_NL and IQ4_XS (IQ4_XS files, and
/// the IQ4_NL quantizers put in rows K-quants cannot hold): the native engine reads their blocks as llama.cpp does. The same file (every matrix in the type, the token embedding too) through both engines: every
/// prompt position's logits and a greedy continuation. The first position attends to itself only, so its logits are
/// the weights' and the activations' quantization alone (within 1e-3 of the largest; measured ~1e-5); later positions
/// mix attention through the activations' rounding, which this random-weight model amplifies to 1-7% for every
/// quantized type alike (Q6_K, long supported, is the calibration row; an F32 twin stays within 5e-4), so they are
/// held to 10% and to llama.cpp's argmax wherever its top two are clearly apart.
@Suite("Q2_K, Q3_K, IQ4_NL and IQ4_XS: the native engine against llama.cpp", .enabled(if: LlamaCppInstall.isInstalled, LlamaCppInstall.skipReason))
struct LowBitKQuantTests {
    @Test("a Q2_K, Q3_K, IQ4_NL or IQ4_XS model: the native engine's logits at every prompt position and its greedy tokens are llama.cpp's",
          arguments: [GGMLType.q2_K, .q3_K, .iq4_nl, .iq4_xs, .q6_K])
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
        /// One position's logits, ours (x) against llama.cpp's (y): within `tolerance` of llama.cpp's largest logit, and
        /// the same argmax wherever llama.cpp's top two are further apart than twice the largest difference.
        func check(_ x: ArraySlice<Float>, _ y: ArraySlice<Float>, tolerance: Float, _ what: String) {
            let scale = y.map(abs).max() ?? 1
            let worst = zip(x, y).map { abs($0 - $1) }.max() ?? 0
            #expect(worst <= tolerance * scale, "\(type.name) \(what): max |Δ| \(worst) against max |logit| \(scale)")
            let top = argmax(y), margin = y[y.startIndex + top] - (y.enumerated().filter { $0.offset != top }.map(\.element).max() ?? 0)
            if margin > 2 * worst { #expect(argmax(x) == top, "\(type.name) \(what): argmax \(argmax(x)) vs llama.cpp \(top)") }
        }
        for i in prompt.indices {
            check(a[(i * vocab)..<((i + 1) * vocab)], b[(i * vocab)..<((i + 1) * vocab)], tolerance: i == 0 ? 1e-3 : 1e-1, "position \(i)")
        }
        // Greedy continuation, 8 steps, both engines fed llama.cpp's choice so that they stay on the same text.
        var next = Int32(argmax(b[((prompt.count - 1) * vocab)...]))
        for step in 0..<8 {
            let x = try ours.decode(next), y = try session.evaluate([next])
            check(x[...], y[...], tolerance: 1e-1, "greedy step \(step)")
            next = Int32(argmax(y[...]))
        }
    }
}
