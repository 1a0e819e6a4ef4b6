import Foundation
import RunAnywhereTestSupport
import Testing
@testable import RunAnywhereGGUF

@Suite("Engine against llama.cpp reference outputs", .enabled(if: TestData.isAvailable, TestData.skipReason))
struct EngineReferenceTests {
    static func load(_ name: String) throws -> (GGUFModel, ReferenceFile) {
        let root = try #require(TestData.root)
        let model = try GGUFModel(path: root + "/models/\(name).gguf")
        let reference = try ReferenceFile(path: root + "/references/\(name).json")
        return (model, reference)
    }

    @Test("prompt logits and greedy continuation match llama.cpp (results block)", arguments: ReferenceFile.models, KernelPath.available)
    func matchesReference(name: String, path: KernelPath) throws {
        let (model, reference) = try Self.load(name)
        let context = try GGUFContext(model: model, contextLength: 256, threads: 2)
        let problems = try path.run {
            try reference.disagreements(name: name, vocabularySize: model.vocabularySize, evaluateAll: { ids in
                context.reset()
                return try context.evaluate(ids, allLogits: true)
            }, decode: { try context.decode($0) })
        }
        #expect(problems.isEmpty, "\(path): \(problems.joined(separator: "\n"))")
    }

    @Test("stories260K continues \"Once upon a time\" exactly like llama.cpp, from text to streamed text", arguments: KernelPath.available)
    func storiesGreedyText(path: KernelPath) throws {
        try path.run { try storiesGreedyText() }
    }

    private func storiesGreedyText() throws {
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
