import Foundation

/// The `curl` program as the tests' HTTP client: a real client, run as a process whose end is awaited without
/// blocking a Swift concurrency thread (the server under test needs those threads to generate).
public enum Curl {
    /// What came back.
    public struct Response: Sendable {
        /// The HTTP status (0 when there was no response).
        public var status: Int
        /// Headers by lower-case name.
        public var headers: [String: String]
        /// The body as text.
        public var body: String
        /// curl's exit code (28: gave up after `maxTime`; 7: could not connect).
        public var exitCode: Int32
        /// The body parsed as a JSON object.
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] }
        /// The error object of an OpenAI-shaped error body.
        public var error: [String: Any]? { json?["error"] as? [String: Any] }
        /// The `data:` payloads of a server-sent event stream, in order.
        public var events: [String] {
            body.components(separatedBy: "\n\n").compactMap { block in
                block.hasPrefix("data: ") ? String(block.dropFirst(6)) : nil
            }
        }
    }

    /// Where the program is, if installed.
    public static let path: String? = ["/usr/bin/curl", "/bin/curl", "/usr/local/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// Whether the program is installed.
    public static var isAvailable: Bool { path != nil }

    /// Sends one request. `body` goes as JSON (`Content-Type: application/json`); `chunked` sends it without a
    /// Content-Length; `maxTime` makes curl give up (and close the connection) after that many seconds.
    public static func request(_ method: String, _ url: String, body: String? = nil, headers: [String] = [],
                               chunked: Bool = false, maxTime: Double? = nil) async throws -> Response {
        guard let path else { throw CocoaError(.fileNoSuchFile) }
        let dir = try TemporaryDirectory(prefix: "curl")
        defer { dir.remove() }
        let headerFile = dir.url.appendingPathComponent("headers").path
        let bodyFile = dir.url.appendingPathComponent("body").path
        var args = ["-sS", "-X", method, "-D", headerFile, "-o", bodyFile, "-w", "%{http_code}", "-N"]
        for h in headers { args += ["-H", h] }
        if let body {
            let requestFile = dir.url.appendingPathComponent("request")
            try Data(body.utf8).write(to: requestFile)
            args += ["-H", "Content-Type: application/json", "--data-binary", "@" + requestFile.path]
            if chunked { args += ["-H", "Transfer-Encoding: chunked"] }
        }
        if let maxTime { args += ["--max-time", String(maxTime)] }
        args.append(url)
        let run = try await ChildProcess.run(path, args)
        let status = Int(run.stdout) ?? 0
        var headerFields: [String: String] = [:]
        for line in ((try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "").components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headerFields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let text = (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? ""
        return Response(status: status, headers: headerFields, body: text, exitCode: run.status)
    }

    /// POSTs a JSON value.
    public static func post(_ url: String, json: [String: Any], headers: [String] = [], maxTime: Double? = nil) async throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: json)
        return try await request("POST", url, body: String(decoding: data, as: UTF8.self), headers: headers, maxTime: maxTime)
    }
}

/// A program run to its end, awaited without holding a Swift concurrency thread (code under test in the same
/// process may need every one of them).
public enum ChildProcess {
    /// What it printed and how it ended.
    public struct Outcome: Sendable {
        /// The exit status (or the signal number, when killed).
        public var status: Int32
        /// Standard output.
        public var stdout: String
        /// Standard error.
        public var stderr: String
    }

    /// Runs `executable` with `arguments` (and `environment`, else this process's) and waits for it to end.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Outcome {
        let dir = try TemporaryDirectory(prefix: "child")
        defer { dir.remove() }
        let out = dir.url.appendingPathComponent("stdout"), err = dir.url.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in done.resume() }
            do { try process.run() } catch { done.resume(throwing: error) }
        }
        try outHandle.close()
        try errHandle.close()
        let read = { (url: URL) in String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self) }
        return Outcome(status: process.terminationStatus, stdout: read(out), stderr: read(err))
    }
}
