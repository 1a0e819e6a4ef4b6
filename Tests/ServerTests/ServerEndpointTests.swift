import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereServer
import RunAnywhereTestSupport

/// The endpoints through `curl`, against a server started in-process with the demo story model.
@Suite("Server endpoints", .enabled(if: Curl.isAvailable, "needs the curl program (apt-get install curl)"))
struct ServerEndpointTests {
    @Test("/health and /v1/models answer with the registry's downloaded language models in OpenAI's shape")
    func healthAndModels() async throws {
        try await withServer { f in
            let health = try await Curl.request("GET", f.url("/health"))
            #expect(health.status == 200 && health.json?["status"] as? String == "ok")
            let models = try await Curl.request("GET", f.url("/v1/models"))
            #expect(models.status == 200 && models.json?["object"] as? String == "list")
            let data = try #require(models.json?["data"] as? [[String: Any]])
            #expect(Set(data.compactMap { $0["id"] as? String }) == ["demo-forest", "demo-chat"], "only what is on disk, not the whole catalog")
            #expect(data.first?["object"] as? String == "model" && data.first?["owned_by"] as? String == "runanywhere")
            #expect((data.first?["created"] as? Int ?? 0) > 1_600_000_000)
            let one = try await Curl.request("GET", f.url("/v1/models/demo-forest"))
            #expect(one.status == 200 && one.json?["id"] as? String == "demo-forest")
            let catalogOnly = try await Curl.request("GET", f.url("/v1/models/qwen3-0.6b"))
            #expect(catalogOnly.status == 404 && catalogOnly.error?["code"] as? String == "model_not_found")
        }
    }

    @Test("errors have OpenAI's shape and status: 404 path, 405, 400 bad JSON and fields, 404 model, 413")
    func errors() async throws {
        try await withServer(ServerConfiguration(port: 0, maxBodyBytes: 4096)) { f in
            func check(_ r: Curl.Response, _ status: Int, code: String? = nil, param: String? = nil, _ c: SourceLocation = #_sourceLocation) {
                #expect(r.status == status, "\(r.body)", sourceLocation: c)
                let e = r.error
                #expect(e?["message"] is String && e?["type"] is String, "\(r.body)", sourceLocation: c)
                #expect(e?.keys.contains("param") == true && e?.keys.contains("code") == true, sourceLocation: c)
                if let code { #expect(e?["code"] as? String == code, "\(r.body)", sourceLocation: c) }
                if let param { #expect(e?["param"] as? String == param, "\(r.body)", sourceLocation: c) }
            }
            check(try await Curl.request("GET", f.url("/v2/nothing")), 404, code: "unknown_url")
            let wrongMethod = try await Curl.request("GET", f.url("/v1/chat/completions"))
            check(wrongMethod, 405)
            #expect(wrongMethod.headers["allow"] == "POST")
            check(try await Curl.request("POST", f.url("/v1/chat/completions"), body: "{\"model\": "), 400, code: "invalid_json")
            check(try await Curl.request("POST", f.url("/v1/chat/completions"), body: "[1, 2]"), 400, code: "invalid_json")
            check(try await Curl.post(f.url("/v1/chat/completions"), json: ["messages": [["role": "user", "content": "hi"]]]), 400, param: "model")
            check(try await Curl.post(f.url("/v1/chat/completions"), json: ["model": "demo-forest", "messages": [["role": "user", "content": "hi"]],
                                                                            "temperature": "hot"]), 400, param: "temperature")
            check(try await Curl.post(f.url("/v1/chat/completions"), json: ["model": "demo-forest", "messages": []]), 400, param: "messages")
            check(try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "x", "stop": ["a", ""]]), 400, param: "stop")
            check(try await Curl.post(f.url("/v1/completions"), json: ["model": "no-such-model", "prompt": "x"]), 404, code: "model_not_found")
            check(try await Curl.post(f.url("/v1/completions"), json: ["model": "qwen3-0.6b", "prompt": "x"]), 404, code: "model_not_found")
            let big = String(repeating: "a", count: 10_000)
            check(try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": big]), 413, code: "request_too_large")
            let chunked = try await Curl.request("POST", f.url("/v1/completions"), body: "{\"model\":\"demo-forest\",\"prompt\":\"\(big)\"}", chunked: true)
            check(chunked, 413, code: "request_too_large")
            // The server still answers after all of that.
            #expect(try await Curl.request("GET", f.url("/health")).status == 200)
        }
    }

    @Test("a model that cannot be loaded (over the memory budget) is a 503, streamed or not, and the server goes on")
    func loadFailure() async throws {
        try await withServer(memoryBudget: 10_000) { f in
            for stream in [false, true] {
                let r = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once", "stream": stream])
                #expect(r.status == 503 && r.error?["code"] as? String == "model_load_failed" && r.error?["type"] as? String == "server_error", "\(r.body)")
                #expect((r.error?["message"] as? String)?.contains("demo-forest") == true)
            }
            #expect(try await Curl.request("GET", f.url("/health")).status == 200)
            #expect(f.server.statistics.failed == 2)
        }
    }

    @Test("with an API key: no key or a wrong one is 401, the right bearer passes, /health stays open")
    func apiKey() async throws {
        try await withServer(ServerConfiguration(port: 0, apiKey: "s3cret-key")) { f in
            let none = try await Curl.request("GET", f.url("/v1/models"))
            #expect(none.status == 401 && none.error?["code"] as? String == "invalid_api_key")
            #expect(none.headers["www-authenticate"] == "Bearer")
            #expect(try await Curl.request("GET", f.url("/v1/models"), headers: ["Authorization: Bearer s3cret-kez"]).status == 401)
            #expect(try await Curl.request("GET", f.url("/v1/models"), headers: ["Authorization: Bearer s3cret-key-and-more"]).status == 401)
            #expect(try await Curl.request("GET", f.url("/v1/models"), headers: ["Authorization: s3cret-key"]).status == 401)
            let unauthorizedCompletion = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "x"])
            #expect(unauthorizedCompletion.status == 401)
            #expect(try await Curl.request("GET", f.url("/v1/models"), headers: ["Authorization: Bearer s3cret-key"]).status == 200)
            #expect(try await Curl.request("GET", f.url("/health")).status == 200)
        }
    }

    @Test("the constant-time comparison tells equal keys from any difference")
    func constantTime() {
        let eq = { (a: String, b: String) in Router.constantTimeEquals(Array(a.utf8), Array(b.utf8)) }
        #expect(eq("abc", "abc"))
        #expect(!eq("abc", "abd") && !eq("abd", "abc"))
        #expect(!eq("abc", "abcd") && !eq("abcd", "abc"))
        #expect(!eq("", "a") && eq("", ""))
    }
}
