import Foundation
import RunAnywhereGGUF

/// The shared test data (`RUNANYWHERE_TESTDATA`: GGUF models and llama.cpp's reference outputs).
public enum SharedTestData {
    /// The root folder, or nil when `RUNANYWHERE_TESTDATA` is unset or has no `models/`.
    public static let root: String? = {
        guard let path = ProcessInfo.processInfo.environment["RUNANYWHERE_TESTDATA"], !path.isEmpty,
              FileManager.default.fileExists(atPath: path + "/models") else { return nil }
        return path
    }()

    /// Why tests that need it are skipped.
    public static let missingReason = "RUNANYWHERE_TESTDATA is not set (export RUNANYWHERE_TESTDATA=/path/to/shared/testdata)"
}

/// One prompt of a llama.cpp reference file (`references/<model>.json`, block `results`).
public struct ReferencePrompt: Sendable {
    /// The prompt text.
    public let prompt: String
    /// Its token ids with BOS as llama.cpp adds it.
    public let promptIDs: [Int32]
    /// The argmax at every prompt position.
    public let promptArgmax: [Int32]
    /// Top-1 minus top-2 logit at every prompt position.
    public let promptArgmaxMargin: [Float]
    /// The 20 best (id, logit) at the last prompt position.
    public let lastTopK: [(id: Int32, logit: Float)]
    /// 24 greedy tokens after the prompt.
    public let greedyIDs: [Int32]
    /// Top-1 minus top-2 logit of each greedy choice.
    public let greedyMargins: [Float]
    /// The greedy tokens' text.
    public let greedyText: String
}

/// A reference file: prompts and the model's tensor types.
public struct ReferenceFile: Sendable {
    /// The prompts of the `results` block.
    public let prompts: [ReferencePrompt]
    /// The ggml types of the model's tensors.
    public let tensorTypes: Set<String>

    /// The reference models of the shared test data (`RUNANYWHERE_TESTDATA/models/<name>.gguf`).
    public static let models = [
        "stories260K", "tiny-qwen3-f16", "tiny-qwen3-q8_0",
        "tiny-llama-spm-q4_0", "tiny-llama-spm-q4_k_m", "tiny-llama-spm-q5_k_m", "tiny-llama-spm-q6_k",
    ]

    /// Reads `references/<name>.json` (format gguf-reference-v1).
    public init(path: String) throws {
        struct Malformed: Error, CustomStringConvertible { let description: String }
        func need<T>(_ value: Any?, _ what: String) throws -> T {
            guard let v = value as? T else { throw Malformed(description: "\(path): \(what) is missing or has the wrong type") }
            return v
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let root: [String: Any] = try need(try JSONSerialization.jsonObject(with: data), "the top level")
        let model: [String: Any] = try need(root["model"], "model")
        let counts: [String: Any] = try need(model["tensor_type_counts"], "model.tensor_type_counts")
        tensorTypes = Set(counts.keys)
        // Engines that quantize activations like ggml's CPU backend and store K/V as F16 are held to `results`
        // (llama.cpp's own output), not to `exact_f32`.
        let results: [[String: Any]] = try need(root["results"], "results")
        prompts = try results.map { r in
            func ints(_ key: String) throws -> [Int32] { (try need(r[key], key) as [Int]).map { Int32($0) } }
            func floats(_ key: String) throws -> [Float] { (try need(r[key], key) as [Double]).map { Float($0) } }
            let top: [[Double]] = try need(r["last_top_k"], "last_top_k")
            return ReferencePrompt(
                prompt: try need(r["prompt"], "prompt"),
                promptIDs: try ints("prompt_ids"),
                promptArgmax: try ints("prompt_argmax"),
                promptArgmaxMargin: try floats("prompt_argmax_margin"),
                lastTopK: top.map { (Int32($0[0]), Float($0[1])) },
                greedyIDs: try ints("greedy_ids"),
                greedyMargins: try floats("greedy_margins"),
                greedyText: try need(r["greedy_text"], "greedy_text"))
        }
    }

    /// Relative tolerance of the top-20 logits: 1e-3 for F32 models, 2e-2 for F16/Q8_0, 5e-2 with K-quants or Q4_0.
    public var relativeTolerance: Float {
        if !tensorTypes.isDisjoint(with: ["Q4_K", "Q5_K", "Q6_K", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K"]) { return 5e-2 }
        if tensorTypes.isSubset(of: ["F32"]) { return 1e-3 }
        return 2e-2
    }

    /// Compares an engine with this reference, prompt by prompt; returns every disagreement (empty: it matches).
    ///
    /// Top-20 logits at the last prompt position within ``relativeTolerance`` of the largest; the argmax at every
    /// prompt position, and the greedy tokens (teacher-forced: the reference token is fed back), wherever the
    /// reference's top1 − top2 margin exceeds the logit tolerance — a closer call may go either way, since
    /// one-ulp differences (SIMD summation order) can flip an activation's rounding to Q8_0/Q8_K and move these
    /// random-weight models' logits by ~0.1. F32/F16 weights involve no activation quantization beyond F16, so
    /// there engines are held to 0.02 logits.
    /// - Parameters:
    ///   - vocabularySize: logits per position.
    ///   - evaluateAll: empties the cache, evaluates the prompt ids and returns the logits of every position.
    ///   - decode: evaluates one more token and returns its logits.
    public func disagreements(name: String, vocabularySize vocab: Int, evaluateAll: ([Int32]) throws -> [Float],
                              decode: (Int32) throws -> [Float]) throws -> [String] {
        var problems: [String] = []
        for p in prompts {
            let all = try evaluateAll(p.promptIDs)
            guard all.count == p.promptIDs.count * vocab else {
                problems.append("\(name) \"\(p.prompt)\": \(all.count) logits for \(p.promptIDs.count) positions of \(vocab)")
                continue
            }
            let last = Array(all[((p.promptIDs.count - 1) * vocab)...])
            let scale = p.lastTopK.map { abs($0.logit) }.max() ?? 1
            var worst: Float = 0
            for (id, logit) in p.lastTopK { worst = max(worst, abs(last[Int(id)] - logit)) }
            let tolerance = tensorTypes.isSubset(of: ["F32", "F16"]) ? 0.02 : relativeTolerance * scale
            if worst / scale > relativeTolerance {
                problems.append("\(name) \"\(p.prompt)\": top-20 logits differ by \(worst) (relative \(worst / scale), allowed \(relativeTolerance))")
            }
            for pos in 0..<p.promptIDs.count where p.promptArgmaxMargin[pos] > tolerance {
                let row = Array(all[(pos * vocab)..<((pos + 1) * vocab)])
                if Greedy.token(row) != p.promptArgmax[pos] { problems.append("\(name) \"\(p.prompt)\": argmax at position \(pos)") }
            }
            var logits = last
            var matching = 0
            for (step, refID) in p.greedyIDs.enumerated() {
                let id = Greedy.token(logits)
                if id == refID { matching += 1 }
                if p.greedyMargins[step] > tolerance, id != refID {
                    problems.append("\(name) \"\(p.prompt)\": greedy token \(step) is \(id), llama.cpp chose \(refID) (margin \(p.greedyMargins[step]))")
                }
                if step + 1 < p.greedyIDs.count { logits = try decode(refID) }
            }
            let comparable = p.greedyMargins.filter { $0 > tolerance }.count
            print("reference: \(name) \"\(p.prompt)\": top-20 max |diff| \(worst) (relative \(worst / scale)); greedy equal for \(matching) of \(p.greedyIDs.count) tokens (teacher-forced), \(comparable) steps with a clear margin")
        }
        return problems
    }
}
