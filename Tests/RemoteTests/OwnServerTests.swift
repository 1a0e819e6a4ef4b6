import Foundation
import RunAnywhere
import RunAnywhereRemote
import RunAnywhereServer
import RunAnywhereTestSupport
import Testing

/// stories260K from the shared test data, when RUNANYWHERE_TESTDATA names it.
private let sharedStories260K: String? = {
    guard let dir = ProcessInfo.processInfo.environment["RUNANYWHERE_TESTDATA"] else { return nil }
    let path = dir + "/models/stories260K.gguf"
    return FileManager.default.fileExists(atPath: path) ? path : nil
}()

/// The remote backend against our own `runanywhere serve` (``OpenAIServer``, in this process on a free loopback port):
/// one SDK serves a model, another reaches it only through its configuration.
@Suite("Remote backend against runanywhere serve", .serialized,
       .enabled(if: sharedStories260K != nil, "set RUNANYWHERE_TESTDATA to the shared test data (stories260K)"))
struct OwnServerTests {

    @Test("same greedy text as on the device, streamed; wrong key, unknown model; the server stopping mid-stream is a typed error")
    func againstServe() async throws {
        let gguf = try #require(sharedStories260K)
        let device = try RemoteEnvironment()
        defer { device.close() }
        try await device.addLocal(gguf, id: "stories")
        let server = try OpenAIServer(sdk: device.sdk, configuration: ServerConfiguration(port: 0, apiKey: "serve-key"))
        var stopped = false
        defer { if !stopped { Task { await server.stop(grace: .zero) } } }

        let endpoint = { (key: String?, model: String) in
            RemoteEndpoint(baseURL: server.url, apiKey: key, models: [RemoteModel(id: "far", serverModel: model)],
                           connectTimeoutSeconds: 5, readTimeoutSeconds: 30)
        }
        let remote = try RemoteEnvironment(endpoints: [endpoint("serve-key", "stories")])
        defer { remote.close() }
        for (prompt, max, stop) in [("Once upon a time", 40, [String]()), ("The little dog", 25, []), ("Once upon a time", 40, [" Lily"])] {
            let here = try await device.sdk.llm.generate(prompt: prompt, options: LlmOptions(model: "stories", maxTokens: max, temperature: 0,
                                                                                              stopSequences: stop, rawPrompt: true))
            var pieces: [String] = []
            var result: GenerationResult?
            for try await event in remote.sdk.llm.generateStream(prompt: prompt, options: LlmOptions(model: "far", maxTokens: max, temperature: 0,
                                                                                                    stopSequences: stop, rawPrompt: true)) {
                switch event {
                case .text(let t): pieces.append(t)
                case .completed(let r): result = r
                }
            }
            let there = try #require(result)
            #expect(there.backend == .remote(RemoteEndpoint.defaultName) && here.backend == .native)
            #expect(there.text == here.text && pieces.joined() == there.text, "\(prompt): device \(here.text.debugDescription), serve \(there.text.debugDescription)")
            // Our server sends the usage block: the counts are the device's.
            #expect(there.outputTokens == here.outputTokens && there.promptTokens == here.promptTokens)
            #expect(there.finishReason == here.finishReason, "\(prompt): \(there.finishReason) vs \(here.finishReason)")
        }

        let wrongKey = try RemoteEnvironment(endpoints: [endpoint("nope", "stories")])
        defer { wrongKey.close() }
        #expect(await errorCode { try await wrongKey.sdk.llm.generate(prompt: "x", options: LlmOptions(model: "far", maxTokens: 2)) } == .authenticationRequired)
        let unknown = try RemoteEnvironment(endpoints: [endpoint("serve-key", "no-such-model")])
        defer { unknown.close() }
        #expect(await errorCode { try await unknown.sdk.llm.generate(prompt: "x", options: LlmOptions(model: "far", maxTokens: 2)) } == .modelNotFound)

        // The server goes away while a long answer streams: a typed error, no hang.
        let clock = ContinuousClock(), start = clock.now
        let long = Task {
            try await remote.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: "far", maxTokens: 5000, temperature: 0.8, rawPrompt: true))
        }
        try await Task.sleep(for: .milliseconds(300))
        stopped = true
        await server.stop(grace: .zero)
        switch await long.result {
        case .success(let r):
            // A short answer may have finished before the stop; then it must be complete and honest about why it ended.
            #expect([FinishReason.endOfGeneration, .maxTokens, .contextFull].contains(r.finishReason))
        case .failure(let error):
            #expect([RunAnywhereError.Code.networkUnavailable, .generationFailed, .cancelled].contains((error as? RunAnywhereError)?.code),
                    "\(error)")
        }
        #expect(clock.now - start < .seconds(30))
    }
}
