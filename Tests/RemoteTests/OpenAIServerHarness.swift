import Foundation
import RunAnywhere
import RunAnywhereRemote
import RunAnywhereTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An OpenAI-compatible server under test: only a base URL, a model name and (maybe) an API key, so the same tests
/// run against llama.cpp's server here and against any other server (`runanywhere serve`, vLLM) pointed at by
/// `RUNANYWHERE_REMOTE_TEST_URL` + `RUNANYWHERE_REMOTE_TEST_MODEL` (+ `RUNANYWHERE_REMOTE_TEST_API_KEY`).
struct ServerUnderTest: Sendable {
    var baseURL: URL
    var model: String
    var apiKey: String?
    /// The GGUF file it serves, when known (the greedy comparison runs it on the device too).
    var ggufPath: String?
    /// The process, when the test started it (the kill test needs its own).
    var process: LlamaServerProcess?

    func endpoint(models: [RemoteModel], apiKey: String?? = nil, readTimeout: Double = 60) -> RemoteEndpoint {
        RemoteEndpoint(baseURL: baseURL, apiKey: apiKey ?? self.apiKey, models: models, connectTimeoutSeconds: 5,
                       readTimeoutSeconds: readTimeout)
    }
}

/// llama.cpp's server from llama-cpp-python (`python -m llama_cpp.server`), started on a free loopback port.
final class LlamaServerProcess: Sendable {
    let process: Process
    let port: Int
    let log: URL

    /// The python of the llama.cpp install that has the server's dependencies, or why there is none.
    static let python: Result<String, SkipReason> = {
        let env = ProcessInfo.processInfo.environment
        let home = env["RUNANYWHERE_LLAMACPP_HOME"] ?? (NSHomeDirectory() + "/.cache/runanywhere/llamacpp")
        let candidates = [env["RUNANYWHERE_LLAMACPP_PYTHON"], home + "/venv/bin/python",
                          FileManager.default.currentDirectoryPath + "/.runanywhere-deps/llamacpp/venv/bin/python"].compactMap { $0 }
        guard let python = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return .failure(SkipReason("no llama-cpp-python venv (looked at \(candidates.joined(separator: ", "))); run scripts/install-llamacpp.sh and .ci/run's server extra"))
        }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: python)
        check.arguments = ["-c", "import llama_cpp.server.app"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        do { try check.run() } catch { return .failure(SkipReason("\(python) does not run: \(error)")) }
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            return .failure(SkipReason("\(python) lacks llama_cpp.server's dependencies (pip install uvicorn fastapi sse-starlette starlette-context pydantic-settings numpy jinja2 diskcache typing-extensions)"))
        }
        return .success(python)
    }()

    /// Starts the server on `gguf` under the alias `model`, and waits until `/v1/models` answers.
    init(gguf: String, model: String, apiKey: String?, contextLength: Int = 512) async throws {
        guard case .success(let python) = Self.python else { throw SkipReason("no python") }
        port = try freeLoopbackPort()
        log = FileManager.default.temporaryDirectory.appendingPathComponent("llama-server-\(port).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-m", "llama_cpp.server", "--model", gguf, "--model_alias", model, "--host", "127.0.0.1",
                             "--port", "\(port)", "--n_ctx", "\(contextLength)", "--verbose", "False"]
            + (apiKey.map { ["--api_key", $0] } ?? [])
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        LlamaServerProcess.started.withLock { $0.append(process.processIdentifier) }
        // Python imports take seconds (20 s on a busy 2-core machine): wait up to 3 minutes.
        let probe = RemoteBackend(endpoint: RemoteEndpoint(baseURL: baseURL, apiKey: apiKey, connectTimeoutSeconds: 1,
                                                           readTimeoutSeconds: 10, connectRetries: 0))
        let deadline = monotonicSeconds() + 180
        while true {
            if let models = try? await probe.serverModels(), models.contains(model) { break }
            guard process.isRunning, monotonicSeconds() < deadline else {
                stop()
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw SkipReason("llama.cpp's server did not start: \(text.suffix(400))")
            }
            try await Task.sleep(nanoseconds: 250_000_000)
        }
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Kills the server at once (SIGKILL: no goodbye to the clients).
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = waitForExit(seconds: 10)
    }

    /// Stops the server: SIGTERM, then SIGKILL when it has not exited after 3 s (uvicorn waits for its
    /// connections to close on SIGTERM).
    func stop() {
        if process.isRunning {
            process.terminate()
            if !waitForExit(seconds: 3) { kill() }
        }
        try? FileManager.default.removeItem(at: log)
    }

    /// Polls until the process has exited (Foundation's waitUntilExit spins a run loop off the main thread).
    private func waitForExit(seconds: Double) -> Bool {
        let deadline = monotonicSeconds() + seconds
        while process.isRunning, monotonicSeconds() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    /// Servers this test process started; killed when it exits so none outlives the run.
    static let started: Mutex<[Int32]> = {
        atexit {
            for pid in LlamaServerProcess.started.withLock({ $0 }) { Glibc.kill(pid, SIGKILL) }
        }
        return Mutex([])
    }()
}

/// A reason a test cannot run here, thrown to skip.
struct SkipReason: Error, CustomStringConvertible {
    var description: String
    init(_ text: String) { description = text }
}

/// A port nothing listens on (bound, then closed).
func freeLoopbackPort() throws -> Int {
    let (fd, port) = try bindLoopback(listening: false)
    close(fd)
    return port
}

/// A TCP socket bound to 127.0.0.1 on a port the system picks (listening when asked), and that port.
func bindLoopback(listening: Bool) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, len) == 0 && (!listening || listen(fd, 16) == 0) && getsockname(fd, $0, &len) == 0
        }
    }
    guard ok else {
        close(fd)
        throw POSIXError(.EADDRINUSE)
    }
    return (fd, Int(UInt16(bigEndian: addr.sin_port)))
}

/// The server the suite shares: an external one named by the environment, else llama.cpp's server on the shared
/// test model (stories260K, a real 260K-parameter llama) with an API key. Started once, on first use.
enum SharedServer {
    static let apiKey = "test-key-\(UUID().uuidString.prefix(8))"
    static let modelName = "stories260k"

    static func ggufPath() -> String? {
        SharedTestData.root.map { $0 + "/models/stories260K.gguf" }
    }

    private static let task = Task<ServerUnderTest, any Error> {
        let env = ProcessInfo.processInfo.environment
        if let url = env["RUNANYWHERE_REMOTE_TEST_URL"].flatMap(URL.init(string:)), let model = env["RUNANYWHERE_REMOTE_TEST_MODEL"] {
            return ServerUnderTest(baseURL: url, model: model, apiKey: env["RUNANYWHERE_REMOTE_TEST_API_KEY"], ggufPath: env["RUNANYWHERE_REMOTE_TEST_GGUF"])
        }
        guard let gguf = ggufPath() else { throw SkipReason(SharedTestData.missingReason) }
        if case .failure(let why) = LlamaServerProcess.python { throw why }
        let server = try await LlamaServerProcess(gguf: gguf, model: modelName, apiKey: apiKey)
        return ServerUnderTest(baseURL: server.baseURL, model: modelName, apiKey: apiKey, ggufPath: gguf, process: server)
    }

    /// The shared server (started on first use). Tests ask for it only when ``isPossible``, so a server that does
    /// not start here is a failure, with its log.
    static func get() async throws -> ServerUnderTest { try await task.value }

    /// Whether a server can be had here at all (checked without starting it), for `.enabled(if:)`.
    static var isPossible: Bool {
        let env = ProcessInfo.processInfo.environment
        if env["RUNANYWHERE_REMOTE_TEST_URL"] != nil, env["RUNANYWHERE_REMOTE_TEST_MODEL"] != nil { return true }
        guard ggufPath() != nil, case .success = LlamaServerProcess.python else { return false }
        return true
    }

    static var skipReason: Comment {
        if ggufPath() == nil { return Comment(rawValue: SharedTestData.missingReason) }
        if case .failure(let why) = LlamaServerProcess.python { return Comment(rawValue: why.description) }
        return ""
    }
}
