import Foundation
import Testing
import RunAnywhere
import RunAnywhereServer
import RunAnywhereTestSupport

/// Disconnects, queueing and shutdown, on a real model slowed down after each piece of text (``PacedBackend``) so
/// that a generation is still running when the test acts.
@Suite("Server lifecycle", .enabled(if: Curl.isAvailable, "needs the curl program (apt-get install curl)"))
struct ServerLifecycleTests {
    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// A request for 1000 tokens: 50 s at the pace of these tests, so it is always still running when they act.
    static var long: [String: Any] { ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 1000, "temperature": 0] }

    @Test("a client that disconnects cancels its generation, streamed or not, and frees the model for the next request",
          arguments: [true, false])
    func disconnectCancels(stream: Bool) async throws {
        try await withServer(pace: 0.05) { f in
            let paced = try #require(f.paced)
            var body = Self.long
            body["stream"] = stream
            let gone = try await Curl.post(f.url("/v1/completions"), json: body, maxTime: 1.5)
            #expect(gone.exitCode == 28, "curl gave up (\(gone.exitCode)) after 1.5 s: the generation was still running")
            #expect(await Self.eventually { f.server.statistics.cancelled == 1 && f.server.inFlight == 0 }, "\(f.server.statistics)")
            let produced = paced.piecesProduced
            #expect(produced < 200, "1000 tokens at 20/s would take 50 s; it stopped after \(produced)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(paced.piecesProduced == produced, "nothing generated after the cancel")
            let next = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once", "max_tokens": 2], maxTime: 20)
            #expect(next.status == 200)
        }
    }

    @Test("requests to a busy model wait in arrival order; one more than --queue-depth gets 429")
    func queueing() async throws {
        try await withServer(ServerConfiguration(port: 0, queueDepth: 2), pace: 0.05) { f in
            let order = OrderLog()
            var clients: [Task<Int, any Error>] = []
            for i in 0..<3 {
                clients.append(Task {
                    let r = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 30, "temperature": 0], maxTime: 60)
                    order.append(i)
                    return r.status
                })
                // The first runs (its first token is out); the others are in the queue before the next one is sent.
                #expect(await Self.eventually { i == 0 ? (f.paced?.piecesProduced ?? 0) > 0 : f.server.waiting == i })
            }
            let health = try await Curl.request("GET", f.url("/health"))
            #expect(health.json?["waiting"] as? Int == 2 && health.json?["in_flight"] as? Int == 3)
            // One runs, two wait: the queue is full.
            let refused = try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "x", "max_tokens": 1])
            #expect(refused.status == 429 && refused.error?["type"] as? String == "rate_limit_error", "\(refused.body)")
            var statuses: [Int] = []
            for c in clients { statuses.append(try await c.value) }
            #expect(statuses == [200, 200, 200])
            #expect(order.values == [0, 1, 2], "served first come, first served")
            #expect(f.server.statistics.refused == 1 && f.server.statistics.completed == 3)
        }
    }

    @Test("a request that waits in the queue longer than the idle timeout is still answered, streamed or not; an idle connection is closed")
    func longWaitOutlivesIdleTimeout() async throws {
        try await withServer(ServerConfiguration(port: 0, idleTimeoutSeconds: 1), pace: 0.05) { f in
            let first = Task {
                try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 50, "temperature": 0], maxTime: 60)
            }
            #expect(await Self.eventually { (f.paced?.piecesProduced ?? 0) > 0 })
            async let plain = Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once", "max_tokens": 3], maxTime: 60)
            async let streamed = Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once", "max_tokens": 3, "stream": true], maxTime: 60)
            let (p, s) = try await (plain, streamed)
            #expect(try await first.value.status == 200)
            #expect(p.status == 200 && p.json?["choices"] != nil, "curl exit \(p.exitCode): \(p.body)")
            #expect(s.status == 200 && s.events.last == "[DONE]", "curl exit \(s.exitCode): \(s.body)")
            // A connection that sends nothing is closed after the idle timeout (it would hold a thread).
            let idle = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", """
                import socket, time
                s = socket.create_connection(("127.0.0.1", \(f.server.port))); s.settimeout(10); t = time.monotonic()
                print(len(s.recv(1)), round(time.monotonic() - t, 1))
                """])
            let words = idle.stdout.split(separator: " ")
            #expect(words.first == "0" && (Double(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99) < 5, "\(idle.stdout) \(idle.stderr)")
        }
    }

    @Test("different models run side by side: a short request to one is not queued behind a long one to another")
    func modelsSideBySide() async throws {
        try await withServer(pace: 0.05) { f in
            #expect(await f.sdk.models.state().loaded.isEmpty)
            let long = Task { try await Curl.post(f.url("/v1/completions"), json: Self.long, maxTime: 2) }
            #expect(await Self.eventually { (f.paced?.piecesProduced ?? 0) > 0 })
            let started = Date()
            let other = try await Curl.post(f.url("/v1/chat/completions"), json: ["model": "demo-chat", "max_tokens": 2,
                                                                                  "messages": [["role": "user", "content": "Once"]]], maxTime: 20)
            #expect(other.status == 200 && Date().timeIntervalSince(started) < 1.8, "answered while the other model generates")
            _ = try await long.value
            // Both loaded on demand, and still resident after their requests.
            #expect(await Set(f.sdk.models.state().loaded.map(\.id)) == ["demo-forest", "demo-chat"])
        }
    }

    @Test("stop lets a request in flight finish its stream, then refuses connections")
    func gracefulStop() async throws {
        try await withServer(pace: 0.05) { f in
            let client = Task {
                try await Curl.post(f.url("/v1/completions"), json: ["model": "demo-forest", "prompt": "Once upon a time", "max_tokens": 20, "temperature": 0, "stream": true], maxTime: 30)
            }
            #expect(await Self.eventually { (f.paced?.piecesProduced ?? 0) > 2 })
            await f.server.stop(grace: .seconds(20))
            let r = try await client.value
            #expect(r.status == 200 && r.events.last == "[DONE]", "\(r.body)")
            #expect(f.server.statistics.completed == 1 && f.server.statistics.cancelled == 0)
            let after = try await Curl.request("GET", f.url("/health"), maxTime: 5)
            #expect(after.status == 0 && after.exitCode == 7, "no longer listening (curl exit \(after.exitCode))")
        }
    }

    @Test("past the grace period, stop cancels what is still generating and returns")
    func stopCancelsAfterGrace() async throws {
        try await withServer(pace: 0.05) { f in
            let client = Task { try await Curl.post(f.url("/v1/completions"), json: Self.long.merging(["stream": true]) { $1 }, maxTime: 60) }
            #expect(await Self.eventually { (f.paced?.piecesProduced ?? 0) > 2 })
            let started = Date()
            await f.server.stop(grace: .milliseconds(300))
            #expect(Date().timeIntervalSince(started) < 8)
            _ = try await client.value
            #expect(f.server.statistics.cancelled == 1 && f.server.inFlight == 0)
        }
    }
}

/// Indices appended from several tasks.
final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int] = []
    func append(_ i: Int) { lock.withLock { items.append(i) } }
    var values: [Int] { lock.withLock { items } }
}
