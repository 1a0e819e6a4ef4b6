import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereServer
import RunAnywhereTestSupport

/// Malformed traffic over real connections: mutated JSON through curl, and broken HTTP through raw sockets.
@Suite("Server robustness", .enabled(if: Curl.isAvailable, "needs the curl program (apt-get install curl)"))
struct ServerRobustnessTests {
    @Test("300 mutated requests over HTTP each get a completion or an OpenAI-shaped error, and the server goes on")
    func mutatedOverHTTP() async throws {
        try await withServer { f in
            var rng = SeededGenerator(seed: 7_2026)
            var statuses: [Int: Int] = [:]
            for i in 0..<300 {
                let chat = i % 5 == 0
                let seed = chat ? #"{"model":"demo-chat","messages":[{"role":"user","content":"Once"}],"max_tokens":4,"stream":true}"#
                                : #"{"model":"demo-forest","prompt":"Once upon a time","max_tokens":4,"temperature":0,"stop":["."],"stream":false}"#
                let body = String(decoding: RequestParserFuzzTests.mutate(Array(seed.utf8), &rng), as: UTF8.self)
                let r = try await Curl.request("POST", f.url(chat ? "/v1/chat/completions" : "/v1/completions"), body: body, maxTime: 30)
                statuses[r.status, default: 0] += 1
                if r.status == 200 {
                    let ok = r.json?["choices"] != nil || r.events.last == "[DONE]"
                    #expect(ok, "case \(i): \(body) → \(r.body)")
                } else {
                    #expect(r.error?["message"] is String && [400, 404].contains(r.status), "case \(i): \(body) → \(r.status) \(r.body)")
                }
            }
            #expect((statuses[200] ?? 0) > 10 && (statuses[400] ?? 0) > 100, "\(statuses)")
            #expect(try await Curl.request("GET", f.url("/health")).status == 200)
        }
    }

    @Test("broken HTTP (garbage, oversized headers, truncated bodies, early hang-ups) never stops the server")
    func brokenHTTP() async throws {
        try await withServer { f in
            let script = """
                import socket, sys
                port = int(sys.argv[1])
                cases = [b"GARBAGE\\r\\n\\r\\n", b"GET / HTTP/9.9\\r\\n\\r\\n", b"GET /health HTTP/1.1\\r\\nHost: x\\r\\n" + b"X-Big: " + b"a" * 200000 + b"\\r\\n\\r\\n",
                         b"POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 1000\\r\\n\\r\\n{\\"model\\":",
                         b"POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: -5\\r\\n\\r\\n", b"\\x00\\xff" * 1000, b""]
                answered = 0
                for c in cases:
                    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(5)
                    try:
                        s.sendall(c); s.shutdown(socket.SHUT_WR); answered += len(s.recv(64)) > 0
                    except OSError:
                        pass
                    s.close()
                print(answered)
                """
            let run = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script, String(f.server.port)])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try await Curl.request("GET", f.url("/health")).status == 200)
            let r = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once", "max_tokens": 2])
            #expect(r.status == 200)
        }
    }
}
