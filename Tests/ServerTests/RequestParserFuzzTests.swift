import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereServer
import RunAnywhereTestSupport

/// The request parser against mutated requests: every input gives a request or a typed error, never a crash.
@Suite("Request parser")
struct RequestParserFuzzTests {
    static let seeds: [String] = [
        #"{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"max_tokens":16,"temperature":0.5,"top_p":0.9,"seed":7,"stop":["\n","END"],"stream":true,"stream_options":{"include_usage":true}}"#,
        #"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":null},{"role":"user","content":"c"}]}"#,
        #"{"model":"m","prompt":"Once upon a time","max_tokens":8,"stop":"x","n":1,"logprobs":null,"presence_penalty":0,"frequency_penalty":0.5}"#,
        #"{"model":"m","prompt":["one prompt"],"max_completion_tokens":4,"top_k":10,"min_p":0.1,"repeat_penalty":1.1,"response_format":{"type":"text"}}"#,
    ]
    static let paths = ["/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/v1/models/m", "/v1/chat/completions?x=1", "/", "/v1/x"]
    static let methods = ["POST", "GET", "HEAD", "PUT", "DELETE", "", "post"]
    static let fragments = ["null", "true", "-1", "0", "1e309", "-0.0", "3.5", "99999999999999999999", "\"\"", "\"\\u0000\"", "\"\\ud800\"",
                            "[]", "{}", "[[[[", "}}}}", "\"é\"", "\"\\\"\"", ",", ":", "\"role\"", "\"user\"", "\"stream\"", "1.0e-400"]

    static func mutate(_ input: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0...rng.below(4) {
            let at = rng.below(bytes.count + 1)
            switch rng.below(7) {
            case 0 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] ^= UInt8(1 << rng.below(8))
            case 1: bytes.insert(UInt8(rng.below(256)), at: at)
            case 2 where !bytes.isEmpty: bytes.removeSubrange(min(at, bytes.count - 1)..<min(bytes.count, at + 1 + rng.below(12)))
            case 3: bytes.insert(contentsOf: Array(fragments[rng.below(fragments.count)].utf8), at: at)
            case 4: bytes = Array(bytes.prefix(at))
            case 5 where at < bytes.count:
                let end = min(bytes.count, at + rng.below(24))
                bytes.insert(contentsOf: bytes[at..<end], at: at)
            default:
                // Replace a value after a colon with a fragment of another type.
                if let colon = bytes[min(at, bytes.count)...].firstIndex(of: UInt8(ascii: ":")) {
                    let end = bytes[(colon + 1)...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") } ?? bytes.count
                    bytes.replaceSubrange((colon + 1)..<end, with: Array(fragments[rng.below(fragments.count)].utf8))
                }
            }
        }
        return bytes
    }

    /// What every parse must give: a request whose options the SDK accepts, or an error with a 4xx status and a message.
    static func check(_ result: Result<APIRequest, APIError>, _ label: @autoclosure () -> String) {
        switch result {
        case .success(.generate(let job)):
            #expect(!job.model.isEmpty, "\(label())")
            let o = job.options
            #expect(o.maxTokens >= 1 && o.temperature >= 0 && o.temperature <= 2 && o.topP > 0 && o.topP <= 1, "\(label())")
            #expect(!o.stopSequences.contains("") && o.stopSequences.count <= 4, "\(label())")
        case .success:
            break
        case .failure(let e):
            #expect([400, 404, 405].contains(e.status) && !e.message.isEmpty && !e.type.isEmpty, "\(label()): \(e)")
        }
    }

    @Test("10,000 mutated requests (body, path and method) each give a request or a typed 4xx error")
    func fuzz() {
        var rng = SeededGenerator(seed: 20_261_201)
        var outcomes: [Int: Int] = [:]
        for i in 0..<12_000 {
            let seed = Array(Self.seeds[rng.below(Self.seeds.count)].utf8)
            let body = Self.mutate(seed, &rng)
            var path = Self.paths[rng.below(Self.paths.count)]
            if rng.below(10) == 0 { path = String(decoding: Self.mutate(Array(path.utf8), &rng), as: UTF8.self) }
            let method = rng.below(8) == 0 ? Self.methods[rng.below(Self.methods.count)] : (path.contains("completions") ? "POST" : "GET")
            let result = RequestParser.parse(method: method, path: path, body: body)
            Self.check(result, "case \(i): \(method) \(path) \(String(decoding: body, as: UTF8.self))")
            let key: Int
            switch result {
            case .success: key = 200
            case .failure(let e): key = e.status
            }
            outcomes[key, default: 0] += 1
        }
        // The mutations reach both sides: valid requests and each kind of refusal.
        #expect((outcomes[200] ?? 0) > 500 && (outcomes[400] ?? 0) > 2000 && outcomes[404] != nil && outcomes[405] != nil, "\(outcomes)")
    }

    @Test("hostile bodies: deep nesting, invalid UTF-8, huge numbers, wrong types give 400 naming the field")
    func hostile() throws {
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(try #require(RequestParser.parse(method: "POST", path: "/v1/completions", body: deep).failure).status == 400)
        let invalidUTF8: [UInt8] = Array(#"{"model":"m","prompt":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        #expect(try #require(RequestParser.parse(method: "POST", path: "/v1/completions", body: invalidUTF8).failure).status == 400)
        for (body, param) in [(#"{"model":"m","prompt":"x","max_tokens":1e300}"#, "max_tokens"),
                              (#"{"model":"m","prompt":"x","max_tokens":0}"#, "max_tokens"),
                              (#"{"model":"m","prompt":"x","temperature":-0.1}"#, "temperature"),
                              (#"{"model":"m","prompt":"x","top_p":0}"#, "top_p"),
                              (#"{"model":"m","prompt":"x","stop":["a","b","c","d","e"]}"#, "stop"),
                              (#"{"model":"m","prompt":"x","n":2}"#, "n"),
                              (#"{"model":"m","prompt":"x","stream":"yes"}"#, "stream"),
                              (#"{"model":"m","prompt":7}"#, "prompt"),
                              (#"{"model":"m","prompt":["a","b"]}"#, "prompt"),
                              (#"{"model":"m","messages":[{"role":"tool","content":"x"}]}"#, "messages[0].role"),
                              (#"{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}"#, "messages"),
                              (#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}"#, "messages[0].content[0]"),
                              (#"{"model":"","prompt":"x"}"#, "model")] {
            let e = try #require(RequestParser.parse(method: "POST", path: body.contains("messages") ? "/v1/chat/completions" : "/v1/completions",
                                                     body: Array(body.utf8)).failure, "\(body)")
            #expect(e.status == 400 && e.param == param, "\(body): \(e)")
        }
    }

    @Test("a chat request maps to the SDK's options: system prompt, history, last user message, sampling, stops")
    func mapping() throws {
        let result = RequestParser.parse(method: "POST", path: "/v1/chat/completions", body: Array(Self.seeds[0].utf8))
        guard case .success(.generate(let job)) = result else { Issue.record("\(result)"); return }
        #expect(job.kind == .chat && job.model == "m" && job.prompt == "Hi" && job.stream && job.includeUsage)
        #expect(job.options.systemPrompt == "Be brief." && job.options.history.isEmpty)
        #expect(job.options.maxTokens == 16 && job.options.temperature == 0.5 && job.options.topP == 0.9 && job.options.seed == 7)
        #expect(job.options.stopSequences == ["\n", "END"] && !job.options.rawPrompt)
        guard case .success(.generate(let text)) = RequestParser.parse(method: "POST", path: "/v1/completions", body: Array(Self.seeds[3].utf8)) else {
            Issue.record("seed 3 did not parse"); return
        }
        #expect(text.kind == .text && text.prompt == "one prompt" && text.options.rawPrompt && text.options.maxTokens == 4)
        guard case .success(.generate(let multi)) = RequestParser.parse(method: "POST", path: "/v1/chat/completions", body: Array(Self.seeds[1].utf8)) else {
            Issue.record("seed 1 did not parse"); return
        }
        #expect(multi.prompt == "c" && multi.options.history == [ChatTurn(role: .user, content: "ab"), ChatTurn(role: .assistant, content: "")])
    }
}

extension Result {
    /// The error, when this is a failure.
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}

extension SeededGenerator {
    /// A number in 0..<n (0 when n is 0).
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
}
