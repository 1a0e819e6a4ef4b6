import RunAnywhereGGUF
import RunAnywhereTestSupport

extension KernelPath {
    /// On this path, with a fresh context on 2 threads: the logits of every position of `prompt` evaluated in one
    /// batch, then those of one decode step for each token of `steps` (a batch and the decode rows kernels both run).
    func promptAndDecodeLogits(_ model: GGUFModel, prompt: [Int32], steps: [Int32]) throws -> [Float] {
        try run {
            let context = try GGUFContext(model: model, contextLength: 64, threads: 2)
            var logits = try context.evaluate(prompt, allLogits: true)
            for token in steps { logits += try context.decode(token) }
            return logits
        }
    }
}
