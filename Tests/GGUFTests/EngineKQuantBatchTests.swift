import CKernels
import Foundation
import RunAnywhereTestSupport
import Testing
@testable import RunAnywhereGGUF

/// The K-quant files of the shared test data (Q4_K_M, Q5_K_M, Q6_K) through the engine's batch kernels: a prompt
/// evaluated in one batch (every matrix product a panel kernel from 2 activation rows on, matmul_avx2_k.c) must give the
/// logits of feeding its tokens one by one (the decode rows kernels), bit for bit on every path: every K type's batch
/// sums in its dot's order (on the AVX-512 paths too, whose VNNI Q4_K and Q6_K panels keep the AVX2 dots' order).
@Suite("Engine K-quant batches", .enabled(if: TestData.isAvailable, TestData.skipReason))
struct EngineKQuantBatchTests {
    static let models = ["tiny-llama-spm-q4_k_m", "tiny-llama-spm-q5_k_m", "tiny-llama-spm-q6_k"]

    @Test("a K-quant prompt in one batch gives the logits of token-by-token decoding (bit for bit on every path)",
          arguments: models, KernelPath.available)
    func batchEqualsSequential(name: String, path: KernelPath) throws {
        let root = try #require(TestData.root)
        let model = try GGUFModel(path: root + "/models/\(name).gguf")
        // 21 tokens: 5 groups of 4 activation rows and a partial one
        let prompt = (0..<21).map { Int32(($0 * 1543 + 29) % model.vocabularySize) }
        let vocab = model.vocabularySize
        try path.run {
            let batched = try GGUFContext(model: model, contextLength: 64, threads: 2)
            let all = try batched.evaluate(prompt, allLogits: true)
            let sequential = try GGUFContext(model: model, contextLength: 64, threads: 2)
            for (i, token) in prompt.enumerated() {
                let one = try sequential.decode(token)
                let row = Array(all[(i * vocab)..<((i + 1) * vocab)])
                let differing = zip(one, row).filter { $0.bitPattern != $1.bitPattern }.count
                #expect(differing == 0, "\(name) \(path): position \(i), \(differing) of \(vocab) logits differ from token by token")
            }
        }
    }

    @Test("Q4_K, Q5_K and Q6_K matrices repacked at load give the logits of the file's layout, bit for bit on every path",
          arguments: models, KernelPath.available)
    func repackedEqualsFileLayout(name: String, path: KernelPath) throws {
        let root = try #require(TestData.root)
        let file = root + "/models/\(name).gguf"
        let repacked = try GGUFModel(path: file, repackWeights: true)
        let plain = try GGUFModel(path: file, repackWeights: false)
        // Repacked where the CPU's own path has the decode kernels (the models load on it, whatever path runs below).
        let expected = ra_x8_kernel(ra_kernel_path()) != 0
        var repackedCount = 0
        for layer in repacked.weights.layers {
            for m in [layer.q, layer.k, layer.v, layer.output, layer.gate, layer.up, layer.down] {
                let type = Int32(bitPattern: m.type.rawValue), x8 = ra_x8_type(type)
                let want = expected && x8 >= 0 ? x8 : type
                #expect(m.kernelType == want, "\(m.name) (\(m.type.name)): kernel type \(m.kernelType), expected \(want)")
                if m.kernelType != type { repackedCount += 1 }
            }
        }
        #expect(expected == (repackedCount > 0), "\(name): \(repackedCount) matrices repacked")
        #expect(plain.weights.layers.allSatisfy { $0.gate.kernelType == Int32(bitPattern: $0.gate.type.rawValue) })
        #expect(repacked.weights.tokenEmbedding.kernelType == Int32(bitPattern: repacked.weights.tokenEmbedding.type.rawValue),
                "the token embedding stays in the file")
        let prompt = (0..<13).map { Int32(($0 * 977 + 3) % repacked.vocabularySize) }
        let steps: [Int32] = [7, 77, 150, 3]
        let a = try path.promptAndDecodeLogits(repacked, prompt: prompt, steps: steps)
        let b = try path.promptAndDecodeLogits(plain, prompt: prompt, steps: steps)
        #expect(a.count == b.count)
        let differing = zip(a, b).filter { $0.bitPattern != $1.bitPattern }.count
        #expect(differing == 0, "\(name) \(path): \(differing) of \(a.count) logits differ between the repacked and the file's layout")
    }
}
