import Foundation
import Testing
import RunAnywhere
import RunAnywhereServer
import RunAnywhereTestSupport

/// The official `openai` Python package against the server on loopback (scripts/openai-client-check.py).
@Suite("OpenAI Python client", .enabled(if: OpenAIClient.python != nil,
    "needs the openai package: run scripts/install-openai-client.sh (or set RUNANYWHERE_OPENAI_PYTHON to a python that has it)"))
struct OpenAIClientTests {
    @Test("streaming and non-streaming chat, a completion, models.list and typed errors, through openai.OpenAI")
    func officialClient() async throws {
        let python = try #require(OpenAIClient.python)
        try await withServer(ServerConfiguration(port: 0, apiKey: "client-test-key")) { f in
            let script = OpenAIClient.root.appendingPathComponent("scripts/openai-client-check.py").path
            let run = try await ChildProcess.run(python, [script, f.url("/v1"), "demo-chat", "client-test-key"])
            #expect(run.status == 0, "\(run.stderr)")
            let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout)")
            let expected = try await f.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(
                model: "demo-chat", maxTokens: 16, temperature: 0, systemPrompt: "You tell stories."))
            #expect((seen["chat"] as? [String: Any])?["text"] as? String == expected.text)
            #expect((seen["stream"] as? [String: Any])?["text"] as? String == expected.text)
            #expect(seen["unknown_model"] as? Int == 404 && seen["wrong_key"] as? Int == 401)
            #expect(f.server.statistics.completed == 3)
        }
    }
}

/// Where the client test finds the repository and a python with the openai package.
enum OpenAIClient {
    /// This repository (this file is Tests/ServerTests/OpenAIClientTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A python with the openai package: RUNANYWHERE_OPENAI_PYTHON, else the venv scripts/install-openai-client.sh makes.
    static var python: String? {
        let candidates: [String?] = [ProcessInfo.processInfo.environment["RUNANYWHERE_OPENAI_PYTHON"],
                                     root.appendingPathComponent(".runanywhere-deps/openai-venv/bin/python").path]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
