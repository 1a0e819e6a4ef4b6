import Foundation
import Testing
import RunAnywhere
import RunAnywhereServer
import RunAnywhereTestSupport

/// Completions through `curl`: the text equals the SDK's own, streamed or not, with OpenAI's fields.
@Suite("Server completions", .enabled(if: Curl.isAvailable, "needs the curl program (apt-get install curl)"))
struct ServerCompletionTests {
    static let conversation: [[String: String]] = [
        ["role": "system", "content": "You tell stories."], ["role": "user", "content": "Once upon a time"],
        ["role": "assistant", "content": "there was a little fox."], ["role": "user", "content": "Every morning the fox"],
    ]

    @Test("temperature 0 gives RunAnywhere.llm.generate's greedy text and its token counts, chat and completions")
    func greedyEqualsSDK() async throws {
        try await withServer { f in
            let r = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 30, "temperature": 0])
            #expect(r.status == 200, "\(r.body)")
            let sdk = try await f.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: "demo-forest", maxTokens: 30, temperature: 0, rawPrompt: true))
            let json = try #require(r.json)
            #expect(json["object"] as? String == "text_completion" && (json["id"] as? String)?.hasPrefix("cmpl-") == true)
            #expect(json["model"] as? String == "demo-forest")
            let choice = try #require((json["choices"] as? [[String: Any]])?.first)
            #expect(choice["text"] as? String == sdk.text && !sdk.text.isEmpty)
            #expect(choice["finish_reason"] as? String == (sdk.finishReason == .maxTokens ? "length" : "stop"))
            let usage = try #require(json["usage"] as? [String: Int])
            #expect(usage == ["prompt_tokens": sdk.promptTokens, "completion_tokens": sdk.outputTokens, "total_tokens": sdk.promptTokens + sdk.outputTokens])

            let chat = try await Curl.post(f.url("/v1/chat/completions"), json: ["model": "demo-chat", "messages": Self.conversation, "max_tokens": 24, "temperature": 0])
            #expect(chat.status == 200, "\(chat.body)")
            let expected = try await f.sdk.llm.generate(prompt: "Every morning the fox", options: LlmOptions(
                model: "demo-chat", maxTokens: 24, temperature: 0, systemPrompt: "You tell stories.",
                history: [ChatTurn(role: .user, content: "Once upon a time"), ChatTurn(role: .assistant, content: "there was a little fox.")]))
            let message = try #require(((chat.json?["choices"] as? [[String: Any]])?.first)?["message"] as? [String: Any])
            #expect(message["role"] as? String == "assistant" && message["content"] as? String == expected.text)
            #expect((chat.json?["usage"] as? [String: Int])?["prompt_tokens"] == expected.promptTokens)
            // Without the history the prompt is shorter: the messages did reach the template.
            let alone = try await f.sdk.llm.generate(prompt: "Every morning the fox", options: LlmOptions(model: "demo-chat", maxTokens: 1, temperature: 0))
            #expect(alone.promptTokens < expected.promptTokens)
        }
    }

    @Test("stream: role chunk, text chunks that add up to the non-streamed text, finish_reason, usage, [DONE]")
    func streaming() async throws {
        try await withServer { f in
            let body: [String: Any] = ["model": "demo-chat", "messages": Self.conversation, "max_tokens": 20, "temperature": 0]
            let whole = try await Curl.post(f.url("/v1/chat/completions"), json: body)
            let wholeText = try #require(((whole.json?["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])?["content"] as? String)
            var streamed = body
            streamed["stream"] = true
            streamed["stream_options"] = ["include_usage": true]
            let r = try await Curl.post(f.url("/v1/chat/completions"), json: streamed)
            #expect(r.status == 200 && r.headers["content-type"] == "text/event-stream")
            let events = r.events
            #expect(events.last == "[DONE]")
            let chunks = events.dropLast().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            #expect(chunks.count == events.count - 1 && chunks.count >= 4, "\(r.body)")
            #expect(Set(chunks.compactMap { $0["id"] as? String }).count == 1)
            #expect(chunks.allSatisfy { $0["object"] as? String == "chat.completion.chunk" })
            let choices = chunks.map { ($0["choices"] as? [[String: Any]])?.first }
            #expect((choices.first??["delta"] as? [String: Any])?["role"] as? String == "assistant")
            let text = choices.compactMap { ($0?["delta"] as? [String: Any])?["content"] as? String }.joined()
            #expect(text == wholeText)
            let finishes = choices.compactMap { $0?["finish_reason"] as? String }
            #expect(finishes == ["length"] || finishes == ["stop"], "one closing chunk: \(finishes)")
            let usage = try #require(chunks.last?["usage"] as? [String: Int])
            #expect((chunks.last?["choices"] as? [Any])?.isEmpty == true)
            #expect(usage == whole.json?["usage"] as? [String: Int])

            // Text completions stream `choices[].text`, and no usage unless asked.
            let plain = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 12, "temperature": 0, "stream": true])
            let plainChunks = plain.events.dropLast().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            let plainText = plainChunks.compactMap { (($0["choices"] as? [[String: Any]])?.first)?["text"] as? String }.joined()
            let sdk = try await f.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: "demo-forest", maxTokens: 12, temperature: 0, rawPrompt: true))
            #expect(plainText == sdk.text && plain.events.last == "[DONE]")
            #expect(plainChunks.allSatisfy { $0["usage"] == nil })
        }
    }

    @Test("stop sequences end the text before them, as a string or an array, streamed or not; max_tokens ends with length")
    func stopAndLength() async throws {
        try await withServer { f in
            let greedy = try await f.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: "demo-forest", maxTokens: 40, temperature: 0, rawPrompt: true)).text
            let words = greedy.split(separator: " ")
            try #require(words.count > 6, "\(greedy)")
            let stop = " " + words[5]
            let cut = try #require(greedy.range(of: stop))
            let expected = String(greedy[..<cut.lowerBound])
            for stopValue in [stop as Any, [stop, "zzz-never"] as Any] {
                let r = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0, "stop": stopValue])
                let choice = (r.json?["choices"] as? [[String: Any]])?.first
                #expect(choice?["text"] as? String == expected && choice?["finish_reason"] as? String == "stop", "\(r.body)")
            }
            let s = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0, "stop": stop, "stream": true])
            let chunks = s.events.dropLast().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }.compactMap { ($0["choices"] as? [[String: Any]])?.first }
            #expect(chunks.compactMap { $0["text"] as? String }.joined() == expected)
            #expect(chunks.compactMap { $0["finish_reason"] as? String } == ["stop"])

            let short = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 3, "temperature": 0])
            #expect(((short.json?["choices"] as? [[String: Any]])?.first)?["finish_reason"] as? String == "length")
            #expect((short.json?["usage"] as? [String: Int])?["completion_tokens"] == 3)
        }
    }

    @Test("the same seed at temperature 1 gives the same text")
    func seeded() async throws {
        try await withServer { f in
            let body: [String: Any] = ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 30, "temperature": 1, "top_p": 0.9, "seed": 1234]
            let a = try await Curl.post(f.url("/v1/completions"), json: body)
            let b = try await Curl.post(f.url("/v1/completions"), json: body)
            let text = { (r: Curl.Response) in ((r.json?["choices"] as? [[String: Any]])?.first)?["text"] as? String }
            #expect(text(a) != nil && text(a) == text(b))
        }
    }

    @Test("stories260K through the server continues “Once upon a time” as llama.cpp does",
          .enabled(if: ServerFixture.testData != nil, "needs RUNANYWHERE_TESTDATA (the shared reference models)"))
    func storiesReference() async throws {
        try await withServer(stories: true) { f in
            let r = try await Curl.post(f.url("/v1/completions"), json: ["model": "stories260k", "prompt": "Once upon a time", "max_tokens": 24, "temperature": 0])
            let text = ((r.json?["choices"] as? [[String: Any]])?.first)?["text"] as? String ?? ""
            #expect(text.hasPrefix(", there was a little girl named Lily. She loved to play outside in the p"), "\(r.body)")
        }
    }
}
