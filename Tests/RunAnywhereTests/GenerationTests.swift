import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import RunAnywhereGGUF

@Suite("Generation")
struct GenerationTests {
    @Test("generate downloads a model that is not on disk, loads it, and answers; progress is visible through the models API")
    func generateOnDemand() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        // Slow the mirror down so a watcher can join the same transfer.
        let published = env.mirror.publishDemoModel(.forest, bandwidthBytesPerSecond: 400_000)
        let info = try await env.sdk.registerModel(id: "demo-forest", name: "Forest", url: published.url.absoluteString,
                                                   framework: .llamaCpp, modality: .language, sha256: published.sha256)
        #expect(info.isDownloaded == false)
        let llm = env.sdk.llm
        let call = Task { try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: info.id, maxTokens: 20, seed: 3)) }
        try await Task.sleep(nanoseconds: 100_000_000)
        var fractions: [Double] = []
        var completed = false
        for try await event in try await env.sdk.models.download(id: info.id) {
            if case .progress(let p) = event, let f = p.fraction { fractions.append(f) }
            if case .completed = event { completed = true }
        }
        let result = try await call.value
        #expect(completed)
        #expect(!fractions.isEmpty, "the watcher saw the shared download's progress")
        #expect(env.mirror.server.requests(to: "/demo-forest.gguf").filter { $0.method == "GET" }.count == 1, "one transfer, not two")
        #expect(result.modelId == info.id && result.backend == .native)
        #expect(!result.text.isEmpty && result.outputTokens > 0 && result.outputTokens <= 20)
        #expect(result.promptTokens >= 5 && result.tokensPerSecond >= 0 && result.timeToFirstTokenSeconds > 0)
        #expect(await env.sdk.models.state().isLoaded(info.id))
    }

    @Test("without a model named, the resident language model answers; with none resident, modelNotLoaded")
    func residentModel() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        #expect(await errorCode { try await env.sdk.llm.generate(prompt: "Hello") } == .modelNotLoaded)
        let id = try await env.demo(.sea)
        try await env.sdk.models.load(id: id)
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(maxTokens: 5))
        #expect(r.modelId == id)
    }

    @Test("the same seed gives the same text; greedy is deterministic; stop sequences cut the text")
    func determinismAndStops() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let llm = env.sdk.llm
        let a = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 30, temperature: 1.0, seed: 42))
        let b = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 30, temperature: 1.0, seed: 42))
        #expect(a.text == b.text)
        let g1 = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 12, temperature: 0))
        let g2 = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 12, temperature: 0))
        #expect(g1.text == g2.text && !g1.text.isEmpty)
        // The greedy bigram path of the forest story: "time" is followed by "there" and "the".
        #expect(g1.text.hasPrefix(" the") || g1.text.hasPrefix(" there"), "\(g1.text)")
        // Stop at the last word of the greedy text: the text ends just before its first occurrence.
        let word = try #require(g1.text.split(separator: " ").last.map(String.init))
        let before = try #require(g1.text.range(of: word))
        let stopped = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 200, temperature: 0, stopSequences: [word]))
        #expect(stopped.finishReason == .stopSequence, "\(stopped)")
        #expect(stopped.text == String(g1.text[..<before.lowerBound]), "stop \(word.debugDescription) in \(g1.text.debugDescription)")
        #expect(await errorCode { try await llm.generate(prompt: "x", options: LlmOptions(model: id, maxTokens: 0)) } == .invalidConfiguration)
        #expect(await errorCode { try await llm.generate(prompt: "x", options: LlmOptions(model: id, topP: 0)) } == .invalidConfiguration)
        #expect(await errorCode { try await llm.generate(prompt: "x", options: LlmOptions(model: "nope")) } == .modelNotFound)
    }

    @Test("the model's chat template wraps the prompt (system prompt and history included) unless rawPrompt; without one the prompt goes as written")
    func chatTemplate() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        var writer = DemoModel.gguf(.forest)
        let chatml = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
        writer.set("tokenizer.chat_template", .string(chatml))
        let url = env.mirror.publish("templated.gguf", data: writer.data())
        let templated = try await env.sdk.registerModel(id: "templated", name: "T", url: url.absoluteString, framework: .llamaCpp, modality: .language)
        let plain = try await env.demo(.forest)
        let llm = env.sdk.llm
        func promptTokens(_ id: String, raw: Bool, system: String? = nil, history: [ChatTurn] = []) async throws -> Int {
            try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 1, systemPrompt: system, history: history, rawPrompt: raw)).promptTokens
        }
        let rawCount = try await promptTokens(templated.id, raw: true)
        let wrapped = try await promptTokens(templated.id, raw: false)
        let withSystem = try await promptTokens(templated.id, raw: false, system: "Be brief.")
        let withHistory = try await promptTokens(templated.id, raw: false, history: [ChatTurn(role: .user, content: "Hi"), ChatTurn(role: .assistant, content: "Hello")])
        #expect(wrapped > rawCount + 10, "ChatML markup around the prompt: \(wrapped) vs \(rawCount)")
        #expect(withSystem > wrapped && withHistory > wrapped)
        #expect(try await promptTokens(plain, raw: true) == promptTokens(plain, raw: false))
    }

    @Test("generateStream yields the text in pieces and then the result")
    func streaming() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        var pieces: [String] = []
        var result: GenerationResult?
        for try await event in env.sdk.llm.generateStream(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 25, seed: 9)) {
            switch event {
            case .text(let t): pieces.append(t)
            case .completed(let r): result = r
            }
        }
        let r = try #require(result)
        #expect(pieces.count > 1)
        #expect(pieces.joined() == r.text)
    }

    @Test("concurrent calls on one model run one at a time, each as if alone")
    func serialisedCalls() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let llm = env.sdk.llm
        let options = (1...4).map { LlmOptions(model: id, maxTokens: 30, temperature: 1.0, seed: UInt64($0)) }
        var alone: [String] = []
        for o in options { alone.append(try await llm.generate(prompt: "Once upon a time", options: o).text) }
        let together = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for (i, o) in options.enumerated() {
                group.addTask { (i, try await llm.generate(prompt: "Once upon a time", options: o).text) }
            }
            var out = Array(repeating: "", count: options.count)
            for try await (i, t) in group { out[i] = t }
            return out
        }
        #expect(together == alone)
    }

    @Test("cancelling the consuming task stops generation")
    func cancellation() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let llm = env.sdk.llm
        let task = Task { () -> Int in
            var n = 0
            for try await event in llm.generateStream(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 100_000, temperature: 1.0, seed: 1, loadOptions: LoadOptions(contextLength: 2048))) {
                if case .text = event { n += 1 }
            }
            return n
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        let outcome = await task.result
        switch outcome {
        case .success(let n): #expect(n < 100_000)
        case .failure(let error): #expect((error as? RunAnywhereError)?.code == .cancelled || error is CancellationError, "\(error)")
        }
        // The model is still usable afterwards.
        let r = try await llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 3))
        #expect(r.outputTokens > 0)
    }

    @Test("a history longer than the context drops its oldest turns (not the system prompt) instead of failing; off, it fails")
    func historyOutgrowingTheContext() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let url = env.mirror.publish("chat.gguf", data: DemoModel.chatData(.forest))
        let id = try await env.sdk.registerModel(id: "chat", name: "Chat", url: url.absoluteString, framework: .llamaCpp, modality: .language).id
        let turn = "the fox ran into the forest and the owl saw the fox in the trees"
        let history = (0..<20).flatMap { i in
            [ChatTurn(role: .user, content: "\(turn) \(i)"), ChatTurn(role: .assistant, content: turn)]
        }
        let load = LoadOptions(contextLength: 512)
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(
            model: id, maxTokens: 8, temperature: 0, systemPrompt: "A story.", history: history, loadOptions: load))
        #expect(r.droppedHistoryTurns > 0 && r.droppedHistoryTurns % 2 == 0, "whole user/assistant pairs go: \(r.droppedHistoryTurns)")
        #expect(r.droppedHistoryTurns < history.count, "only as many as needed: \(r.droppedHistoryTurns)")
        #expect(r.promptTokens + 8 <= 512 && r.outputTokens > 0)
        let fits = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(
            model: id, maxTokens: 8, temperature: 0, history: Array(history.prefix(2)), loadOptions: load))
        #expect(fits.droppedHistoryTurns == 0)
        #expect(await errorCode {
            try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(
                model: id, maxTokens: 8, history: history, loadOptions: load, trimsHistoryToFit: false))
        } == .invalidConfiguration)
        // A prompt that does not fit on its own is refused either way.
        let long = String(repeating: "\(turn) ", count: 60)
        #expect(await errorCode {
            try await env.sdk.llm.generate(prompt: long, options: LlmOptions(model: id, maxTokens: 8, loadOptions: load))
        } == .invalidConfiguration)
    }

    @Test("temperature 0 with the default options is plain argmax decoding: no repetition penalty unless asked for")
    func greedyDefaultsHaveNoPenalty() async throws {
        #expect(LlmOptions().repetitionPenalty == 1, "llama.cpp's default: off")
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let path = try #require(await env.sdk.models.get(id: id)?.primaryFilePath)
        // The engine's own greedy decoding of the same prompt, token by token.
        let model = try GGUFModel(path: path.path)
        let context = try GGUFContext(model: model, contextLength: 256, threads: 1)
        var expected = ""
        _ = try context.generate(prompt: model.tokenizer.encode("Once upon a time"), sampling: .greedy, maxTokens: 60, stop: [],
                                 shouldContinue: { true }, onText: { expected += $0 })
        let greedy = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 60, temperature: 0, rawPrompt: true))
        #expect(greedy.text == expected)
        // A penalty asked for is applied at temperature 0 too (so the comparison above can tell).
        let penalised = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 60, temperature: 0, repetitionPenalty: 1.5, rawPrompt: true))
        #expect(penalised.text != expected)
    }

    @Test("stories260K continues “Once upon a time” as llama.cpp does",
          .enabled(if: ProcessInfo.processInfo.environment["RUNANYWHERE_TESTDATA"] != nil, "needs RUNANYWHERE_TESTDATA (the shared reference models)"))
    func storiesThroughTheSDK() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let base = try #require(ProcessInfo.processInfo.environment["RUNANYWHERE_TESTDATA"])
        let data = try Data(contentsOf: URL(fileURLWithPath: base).appendingPathComponent("models/stories260K.gguf"))
        let url = env.mirror.publish("stories260K.gguf", data: data)
        let info = try await env.sdk.registerModel(name: "Stories", url: url.absoluteString, framework: .llamaCpp, modality: .language)
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: info.id, maxTokens: 24, temperature: 0, rawPrompt: true))
        #expect(r.text.hasPrefix(", there was a little girl named Lily. She loved to play outside in the p"), "\(r.text)")
    }
}
