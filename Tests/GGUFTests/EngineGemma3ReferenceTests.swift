import Foundation
import Testing
@testable import RunAnywhereGGUF
import RunAnywhereTestSupport

/// llama.cpp's outputs for the tiny Gemma 3 models (Fixtures/tiny-gemma3-reference.json, made by
/// bench/real/tiny_gemma3_reference.py from the bytes TinyGemma3 writes).
private struct TinyGemma3Reference {
    struct Position {
        let argmax: Int32
        let margin: Float
        let top: [(id: Int32, logit: Float)]
    }

    struct Prompt {
        let name: String
        let ids: [Int32]
        let positions: [Position]
        let greedy: [Int32]
        let margins: [Float]
    }

    struct Model {
        let name: String
        let fingerprint: String
        let prompts: [Prompt]
    }

    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/tiny-gemma3-reference.json").path

    static func load() throws -> [Model] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let models = try #require(root["models"] as? [[String: Any]])
        func pairs(_ v: Any?) throws -> [(Int32, Float)] {
            try #require(v as? [[Double]]).map { (Int32($0[0]), Float($0[1])) }
        }
        return try models.map { m in
            let prompts = try #require(m["prompts"] as? [[String: Any]]).map { p in
                Prompt(name: try #require(p["name"] as? String),
                       ids: try #require(p["ids"] as? [Int]).map { Int32($0) },
                       positions: try #require(p["positions"] as? [[String: Any]]).map { q in
                           Position(argmax: Int32(try #require(q["argmax"] as? Int)), margin: Float(try #require(q["margin"] as? Double)),
                                    top: try pairs(q["top"]))
                       },
                       greedy: try #require(p["greedy"] as? [Int]).map { Int32($0) },
                       margins: try #require(p["margins"] as? [Double]).map { Float($0) })
            }
            return Model(name: try #require(m["name"] as? String), fingerprint: try #require(m["fnv1a"] as? String), prompts: prompts)
        }
    }
}

@Suite("Gemma 3 against llama.cpp (tiny random-weight models)")
struct EngineGemma3ReferenceTests {
    @Test("every prompt position's top logits, argmax and the greedy continuation match llama.cpp",
          arguments: TinyGemma3.names, KernelPath.available)
    func matchesLlamaCpp(name: String, path: KernelPath) throws {
        try path.run { try matchesLlamaCpp(name: name) }
    }

    private func matchesLlamaCpp(name: String) throws {
        let reference = try #require(try TinyGemma3Reference.load().first { $0.name == name }, "no reference for \(name)")
        let spec = try #require(TinyGemma3.spec(name))
        let dir = try TemporaryDirectory(prefix: "gemma3-reference")
        defer { dir.remove() }
        let path = dir.path + "/\(name).gguf"
        try GGUFWriter.tinyModel(spec).write(to: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try #require(String(TinyGemma3.fingerprint(bytes), radix: 16) == reference.fingerprint,
                     "\(name): the writer's bytes changed; regenerate the reference with bench/real/tiny_gemma3_reference.py")
        let model = try GGUFModel(path: path)
        let vocab = model.vocabularySize
        // F32 weights: only K/V and attention probabilities are rounded to F16 (as in llama.cpp), so logits agree to
        // ~1e-3 of their scale. Q8_0: activations are quantized to Q8_0 and a one-ulp difference can flip a
        // rounding, so 2e-2. Argmax and greedy tokens are held where llama.cpp's margin exceeds twice that.
        let relative: Float = spec.weightType == .f32 ? 2e-3 : 2e-2
        let context = try GGUFContext(model: model, contextLength: 64, threads: 2)
        var worstRelative: Float = 0
        for p in reference.prompts {
            context.reset()
            #expect(p.ids.count > spec.slidingWindow + 2, "\(p.name) must be longer than the window")
            let all = try context.evaluate(p.ids, allLogits: true)
            for (pos, ref) in p.positions.enumerated() {
                let row = all[(pos * vocab)..<((pos + 1) * vocab)]
                let scale = ref.top.map { abs($0.logit) }.max() ?? 1
                let worst = ref.top.map { abs(row[pos * vocab + Int($0.id)] - $0.logit) }.max() ?? 0
                worstRelative = max(worstRelative, worst / scale)
                #expect(worst <= relative * scale, "\(name) \(p.name) position \(pos): top logits differ by \(worst) (scale \(scale))")
                if ref.margin > 2 * relative * scale {
                    #expect(Greedy.token(Array(row)) == ref.argmax,
                            "\(name) \(p.name): argmax at position \(pos)")
                }
            }
            // Greedy continuation, teacher-forced with llama.cpp's tokens so every step is checked.
            let scale = p.positions.last?.top.map { abs($0.logit) }.max() ?? 1
            var logits = Array(all[((p.ids.count - 1) * vocab)...])
            for (step, expected) in p.greedy.enumerated() {
                let id = Greedy.token(logits)
                if p.margins[step] > 2 * relative * scale {
                    #expect(id == expected, "\(name) \(p.name): greedy token \(step) is \(id), llama.cpp chose \(expected) (margin \(p.margins[step]))")
                }
                if step + 1 < p.greedy.count { logits = try context.decode(expected) }
            }
        }
        print("gemma3-reference: \(name): worst top-logit difference \(worstRelative) of the largest (allowed \(relative))")
    }
}
