import Foundation
import Testing
import RunAnywhere
import RunAnywhereTestSupport

/// `runanywhere serve` running as a process, its stdout and stderr in files.
struct ServeProcess {
    let process = Process()
    let stdout: URL
    let stderr: URL
    let exited: AsyncStream<Int32>

    /// Starts `runanywhere serve ARGUMENTS` with `environment`, writing its output under `directory`.
    init(_ arguments: [String], environment: [String: String], directory: URL) throws {
        let binary = try #require(CLI.binary)
        stdout = directory.appendingPathComponent("serve.out")
        stderr = directory.appendingPathComponent("serve.err")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.executableURL = binary
        process.arguments = ["serve"] + arguments
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        exited = stream
        process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        try process.run()
    }

    static func text(_ url: URL) -> String { String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self) }

    /// The URL serve prints on stdout once it listens (waits up to 30 s).
    func url() async throws -> String {
        for _ in 0..<600 {
            if let line = Self.text(stdout).split(separator: "\n").first { return String(line) }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "serve printed no URL: \(Self.text(stderr))"])
    }

    /// Sends `signal` and returns the exit status once the process has ended.
    func stop(with signal: Int32) async -> Int32 {
        kill(process.processIdentifier, signal)
        var status: Int32 = -1
        for await s in exited { status = s }
        return status
    }
}

/// `runanywhere serve` as a process: it prints its URL, answers, and exits 0 on SIGTERM or SIGINT.
@Suite("CLI serve", .enabled(if: CLI.binary != nil && Curl.isAvailable, "needs the runanywhere binary (swift build) and the curl program"))
struct ServeCLITests {
    @Test("serve --port 0 answers /health and a completion, then SIGTERM stops it with exit code 0")
    func serveAndTerminate() async throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publishDemoModel(.forest).url
        #expect(try cli.run("models", "register", url.absoluteString, "--id", "forest").status == 0)
        #expect(try cli.run("models", "pull", "forest").status == 0)

        let serve = try ServeProcess(["--port", "0", "--models-dir", cli.home.path + "/root"], environment: [
            "HOME": cli.home.path, "NO_COLOR": "1", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"],
            directory: cli.home.url)
        defer { if serve.process.isRunning { serve.process.terminate() } }
        let server = try await serve.url()
        #expect(server.hasPrefix("http://127.0.0.1:"))
        let health = try await Curl.request("GET", server + "/health")
        #expect(health.status == 200 && health.json?["status"] as? String == "ok")
        let completion = try await Curl.post(server + "/v1/completions", json: ["model": "forest", "prompt": "Once upon a time", "max_tokens": 8, "temperature": 0])
        #expect(completion.status == 200, "\(completion.body)")
        #expect((((completion.json?["choices"] as? [[String: Any]])?.first)?["text"] as? String)?.isEmpty == false)

        let status = await serve.stop(with: SIGTERM)
        #expect(serve.process.terminationReason == .exit && status == 0)
        let log = ServeProcess.text(serve.stderr)
        #expect(log.contains("SIGTERM") && log.contains("1 completed"), "\(log)")
        #expect(log.contains("GET /health 200") && log.contains("POST /v1/completions 200") && log.contains("forest, "), "one line per request: \(log)")
    }

    @Test("a non-loopback address without an API key is served with a warning; SIGINT stops it with exit code 0")
    func warnsWithoutKey() async throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let serve = try ServeProcess(["--host", "0.0.0.0", "--port", "0"], environment: [
            "HOME": cli.home.path, "RUNANYWHERE_HOME": cli.home.path + "/root", "NO_COLOR": "1"], directory: cli.home.url)
        defer { if serve.process.isRunning { serve.process.terminate() } }
        _ = try await serve.url()
        let status = await serve.stop(with: SIGINT)
        let text = ServeProcess.text(serve.stderr)
        #expect(text.contains("warning:") && text.contains("--api-key"), "\(text)")
        #expect(serve.process.terminationReason == .exit && status == 0)
    }
}
