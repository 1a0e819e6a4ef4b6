import Foundation
import RunAnywhereTestSupport
import Testing
@testable import RunAnywhereLlamaCpp

/// The shared reference suite run through llama.cpp as this SDK drives it: our declarations, batches, tokenizer
/// calls and logits reading must reproduce what llama-cpp-python computed with the same llama.cpp.
@Suite("llama.cpp backend against the reference outputs",
       .enabled(if: LlamaCppInstall.isInstalled, LlamaCppInstall.skipReason), .enabled(if: SharedData.isAvailable, SharedData.skipReason))
struct LlamaCppReferenceTests {
    static func session(_ name: String, contextLength: Int = 256) throws -> LlamaCppSession {
        let library = try LlamaCppBackend().library().get()
        return try LlamaCppSession(library: library, path: try SharedData.model(name), contextLength: contextLength, threads: 2)
    }

    @Test("prompt token ids, prompt logits and greedy continuation match", arguments: ReferenceFile.models)
    func matchesReference(name: String) throws {
        let reference = try SharedData.reference(name)
        let session = try Self.session(name)
        for p in reference.prompts {
            #expect(try session.tokenize(p.prompt, addSpecial: true, parseSpecial: false) == p.promptIDs, "\(name) \"\(p.prompt)\"")
        }
        let problems = try reference.disagreements(name: name, vocabularySize: session.vocabularySize, evaluateAll: { ids in
            session.reset()
            return try session.evaluate(ids, allLogits: true)
        }, decode: { try session.evaluate([$0]) })
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("context and threads are passed as asked, and a prompt past the context is refused")
    func contextLength() throws {
        let session = try Self.session("stories260K", contextLength: 64)
        #expect(session.contextLength == 64 && session.allocatedContextLength >= 64)
        #expect(session.threads == 2)
        #expect(throws: LlamaCppFailure.self) { try session.evaluate([Int32](repeating: 1, count: 65)) }
    }
}
