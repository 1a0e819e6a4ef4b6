import Foundation
import Testing
@testable import RunAnywhereGGUF
import RunAnywhereTestSupport

/// One prompt of a llama.cpp reference file (`references/<model>.json`, block `results`).
struct ReferencePrompt {
    let prompt: String
    let promptIDs: [Int32]
    let promptArgmax: [Int32]
    let promptArgmaxMargin: [Float]
    let lastTopK: [(id: Int32, logit: Float)]
    let greedyIDs: [Int32]
    let greedyMargins: [Float]
    let greedyText: String
}

/// A reference file: prompts and the model's tensor types.
struct ReferenceFile {
    let prompts: [ReferencePrompt]
    let tensorTypes: Set<String>

    init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let model = try #require(root["model"] as? [String: Any])
        let counts = try #require(model["tensor_type_counts"] as? [String: Any])
        tensorTypes = Set(counts.keys)
        // The engine quantizes activations like ggml's CPU backend and stores K/V as F16, so it is held to
        // `results` (llama.cpp's own output), not to `exact_f32`.
        let results = try #require(root["results"] as? [[String: Any]])
        prompts = try results.map { r in
            func ints(_ key: String) throws -> [Int32] { try #require(r[key] as? [Int]).map { Int32($0) } }
            func floats(_ key: String) throws -> [Float] { try #require(r[key] as? [Double]).map { Float($0) } }
            let top = try #require(r["last_top_k"] as? [[Double]])
            return ReferencePrompt(
                prompt: try #require(r["prompt"] as? String),
                promptIDs: try ints("prompt_ids"),
                promptArgmax: try ints("prompt_argmax"),
                promptArgmaxMargin: try floats("prompt_argmax_margin"),
                lastTopK: top.map { (Int32($0[0]), Float($0[1])) },
                greedyIDs: try ints("greedy_ids"),
                greedyMargins: try floats("greedy_margins"),
                greedyText: try #require(r["greedy_text"] as? String))
        }
    }

    /// Relative tolerance of the top-20 logits: 1e-3 for F32 models, 2e-2 for F16/Q8_0, 5e-2 with K-quants or Q4_0.
    var relativeTolerance: Float {
        if !tensorTypes.isDisjoint(with: ["Q4_K", "Q5_K", "Q6_K", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K"]) { return 5e-2 }
        if tensorTypes.isSubset(of: ["F32"]) { return 1e-3 }
        return 2e-2
    }
}

/// Reference models whose outputs the engine must reproduce.
let referenceModels = [
    "stories260K", "tiny-qwen3-f16", "tiny-qwen3-q8_0",
    "tiny-llama-spm-q4_0", "tiny-llama-spm-q4_k_m", "tiny-llama-spm-q5_k_m", "tiny-llama-spm-q6_k",
]

@Suite("Engine against llama.cpp reference outputs", .enabled(if: TestData.isAvailable, TestData.skipReason))
struct EngineReferenceTests {
    static func load(_ name: String) throws -> (GGUFModel, ReferenceFile) {
        let root = try #require(TestData.root)
        let model = try GGUFModel(path: root + "/models/\(name).gguf")
        let reference = try ReferenceFile(path: root + "/references/\(name).json")
        return (model, reference)
    }

    @Test("prompt logits and greedy continuation match llama.cpp (results block)", arguments: referenceModels, KernelPath.available)
    func matchesReference(name: String, path: KernelPath) throws {
        try path.run {
            let (model, reference) = try Self.load(name)
            let vocab = model.vocabularySize
            let context = try GGUFContext(model: model, contextLength: 256, threads: 2)
            for p in reference.prompts {
                context.reset()
                let all = try context.evaluate(p.promptIDs, allLogits: true)
                #expect(all.count == p.promptIDs.count * vocab)
                let last = Array(all[((p.promptIDs.count - 1) * vocab)...])

                // Top-20 logits at the last position, relative to the largest reference logit.
                let scale = p.lastTopK.map { abs($0.logit) }.max() ?? 1
                var worst: Float = 0
                for (id, logit) in p.lastTopK { worst = max(worst, abs(last[Int(id)] - logit)) }
                // Argmax and greedy tokens are compared where the reference's top1 - top2 margin exceeds the logit
                // tolerance (the relative tolerance times the largest reference logit): a closer call may go either way,
                // since one-ulp differences (SIMD summation order, ggml's vector expf) can flip an activation's rounding
                // to Q8_0/Q8_K and move these random-weight models' logits by ~0.1. F32/F16 weights involve no
                // activation quantization beyond F16, so there the engine is held to 0.02 logits.
                let tolerance = reference.tensorTypes.isSubset(of: ["F32", "F16"]) ? 0.02 : reference.relativeTolerance * scale
                #expect(worst / scale <= reference.relativeTolerance,
                        "\(name) \"\(p.prompt)\": top-20 logits differ by \(worst) (relative \(worst / scale), allowed \(reference.relativeTolerance))")

                // Argmax at every position where the reference margin is clear.
                for pos in 0..<p.promptIDs.count where p.promptArgmaxMargin[pos] > tolerance {
                    let row = Array(all[(pos * vocab)..<((pos + 1) * vocab)])
                    #expect(Sampler.argmax(row) == p.promptArgmax[pos], "\(name) \"\(p.prompt)\": argmax at position \(pos)")
                }

                // Greedy continuation, decoded one token at a time. The reference tokens are fed back (teacher forcing),
                // so every step is checked: the engine's argmax must equal the reference token wherever the reference
                // margin exceeds the tolerance; up to the first near-tie this is exactly free-running greedy decoding.
                var logits = last
                var greedy: [Int32] = []
                for (step, refID) in p.greedyIDs.enumerated() {
                    let id = Sampler.argmax(logits)
                    greedy.append(id)
                    if p.greedyMargins[step] > tolerance {
                        #expect(id == refID, "\(name) \"\(p.prompt)\": greedy token \(step) is \(id), llama.cpp chose \(refID) (margin \(p.greedyMargins[step]))")
                    }
                    if step + 1 < p.greedyIDs.count { logits = try context.decode(refID) }
                }
                let comparable = p.greedyMargins.filter { $0 > tolerance }.count
                let matching = zip(greedy, p.greedyIDs).filter { $0 == $1 }.count
                print("engine-reference: \(name) \"\(p.prompt)\": top-20 max |diff| \(worst) (relative \(worst / scale)); greedy equal for \(matching) of \(p.greedyIDs.count) tokens (teacher-forced), \(comparable) steps with a clear margin")
            }
        }
    }

    @Test("stories260K continues \"Once upon a time\" exactly like llama.cpp, from text to streamed text", arguments: KernelPath.available)
    func storiesGreedyText(path: KernelPath) throws {
        try path.run {
            let (model, reference) = try Self.load("stories260K")
            let p = try #require(reference.prompts.first { $0.prompt == "Once upon a time" })
            #expect(model.tokenizer.encode(p.prompt) == p.promptIDs)
            let context = try GGUFContext(model: model, contextLength: 128, threads: 1)
            var text = ""
            let stats = try context.generate(prompt: model.tokenizer.encode(p.prompt), sampling: .greedy,
                                             maxTokens: p.greedyIDs.count, stop: [],
                                             shouldContinue: { true }, onText: { text += $0 })
            #expect(stats.tokens == p.greedyIDs)
            #expect(stats.finishReason == .maxTokens)
            #expect(stats.promptTokens == p.promptIDs.count)
            #expect(text == p.greedyText)
        }
    }
}
