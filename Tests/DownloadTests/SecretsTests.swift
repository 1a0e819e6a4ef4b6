import Foundation
import Glibc
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// The Hugging Face token goes to its own host only and is written nowhere but the 0600 token file.
@Suite("Secrets")
struct SecretsTests {
    static let token = "hf_T0kenThatMustNotLeak42"

    /// Every file under `root` (except the token file itself) that holds the token.
    static func filesHoldingToken(_ root: URL) -> [String] {
        listTree(root).filter { path in
            guard path != "token", let data = try? Data(contentsOf: root.appendingPathComponent(path)) else { return false }
            return String(decoding: data, as: UTF8.self).contains(token)
        }
    }

    @Test("redirects to another host, a downgrade or a loop never carry the token; it reaches only the trusted origin", arguments: [
        "other-host", "other-port", "chain", "loop",
    ])
    func tokenStaysHome(kind: String) async throws {
        let f = try SDKFixture()
        let other = try LoopbackHTTPServer()
        defer { f.cleanUp(); other.stop() }
        try f.sdk.setHfToken(Self.token)
        let body = testBytes(80_000, seed: 3)
        other.setRoute("/blob", LoopbackRoute(body: body, etag: "\"o\""))
        other.setRoute("/back", .redirect(to: f.server.url("/again").absoluteString))
        f.server.setRoute("/again", LoopbackRoute(body: body, etag: "\"a\""))
        let location: String
        switch kind {
        case "other-host": location = "http://localhost:\(f.server.port)/again"   // same server, another host name
        case "other-port": location = other.url("/blob").absoluteString
        case "chain": location = other.url("/back").absoluteString                // away and back again
        default: location = "/loop"
        }
        f.server.setRoute("/loop", .redirect(to: "http://localhost:\(f.server.port)/loop"))
        try await f.register("gated", body: body) { $0.plan = [.redirect(to: location)]; $0.fallback = .redirect(to: location) }
        do {
            _ = try await collect(try await f.sdk.models.download(id: "gated"))
        } catch let error as RunAnywhereError {
            #expect(kind == "loop", "\(error)")
            #expect(!"\(error)".contains(Self.token) && !error.message.contains(Self.token))
        }
        let trusted = f.server.requests.filter { $0.header("Host")?.hasPrefix("127.0.0.1") == true }
        let away = f.server.requests.filter { $0.header("Host")?.hasPrefix("127.0.0.1") != true } + other.requests
        #expect(!away.isEmpty)
        #expect(away.allSatisfy { $0.header("Authorization") == nil }, "\(away.map { "\($0.path) \($0.headers)" })")
        #expect(trusted.first?.header("Authorization") == "Bearer \(Self.token)")
        #expect(Self.filesHoldingToken(f.sdk.models.storageRoot).isEmpty)
    }

    @Test("a server that echoes the token in its error page does not put it into the error message", arguments: [401, 403, 500, 404])
    func echoedTokenRedacted(status: Int) async throws {
        let f = try SDKFixture { $0.maxAttempts = 2 }
        defer { f.cleanUp() }
        try f.sdk.setHfToken(Self.token)
        let echo = Array("Invalid credentials in Authorization header: Bearer \(Self.token)".utf8)
        try await f.register("echo", body: testBytes(1000)) { $0.fallback = .status(status, body: echo) }
        do {
            _ = try await collect(try await f.sdk.models.download(id: "echo"))
            Issue.record("download succeeded")
        } catch {
            #expect(error is RunAnywhereError)
            #expect(!"\(error)".contains(Self.token) && !((error as? RunAnywhereError)?.message.contains(Self.token) ?? true), "\(error)")
        }
        #expect(f.server.requests.first?.header("Authorization") == "Bearer \(Self.token)")
        #expect(Self.filesHoldingToken(f.sdk.models.storageRoot).isEmpty)
    }

    @Test("a persisted token file is mode 0600, also when it replaces a world-readable one, and clearing removes it")
    func tokenFileMode() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url, environment: ["HOME": dir.path]))
        let file = dir.url.appendingPathComponent("token")
        try Data("old".utf8).write(to: file)
        chmod(file.path, 0o644)
        let saved = umask(0)
        defer { umask(saved) }
        try sdk.setHfToken(Self.token, persist: true)
        var info = stat()
        #expect(stat(file.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try String(contentsOf: file, encoding: .utf8) == Self.token)
        let leftovers = listTree(dir.url).filter { $0 != "token" }
        #expect(leftovers.isEmpty, "temporary files: \(leftovers)")
        try sdk.setHfToken(nil, persist: true)
        #expect(!fileExists(file))
    }

    @Test("the CLI never prints the token: not in pull output, errors, or --json listings",
          .enabled(if: cliPath != nil, "needs the runanywhere executable beside the tests"))
    func cliOutput() async throws {
        let dir = try TemporaryDirectory(prefix: "runanywhere-secrets")
        let server = try LoopbackHTTPServer()
        defer { server.stop(); dir.remove() }
        let home = dir.url.appendingPathComponent("home")
        let body = testBytes(20_000)
        server.setRoute("/ok.bin", LoopbackRoute(body: body, etag: "\"ok\"", linkedSHA256: try sha256Hex(body)))
        server.setRoute("/denied.bin", LoopbackRoute(fallback: .status(403, body: Array("token \(Self.token) rejected".utf8))))
        server.setRoute("/away.bin", .redirect(to: "http://localhost:\(server.port)/ok.bin"))
        let env = ["HF_TOKEN": Self.token]
        var outputs: [String] = []
        for args in [["models", "register", server.url("/ok.bin").absoluteString, "--id", "ok", "--json"],
                     ["models", "register", server.url("/denied.bin").absoluteString, "--id", "denied", "--json"],
                     ["models", "register", server.url("/away.bin").absoluteString, "--id", "away", "--json"],
                     ["models", "register", "http://user:\(Self.token)@127.0.0.1:\(server.port)/x.bin", "--json"],
                     ["models", "pull", "ok"], ["models", "pull", "denied"], ["models", "pull", "away"],
                     ["models", "list", "--json"], ["models", "info", "ok", "--json"], ["ps", "--json"]] {
            let p = try CLIProcess(args, home: home, environment: env)
            _ = await p.wait(timeout: 60)
            let log = p.log
            #expect(!log.contains(Self.token), "runanywhere \(args.prefix(2).joined(separator: " ")) printed the token: \(log)")
            outputs.append(log)
        }
        #expect(outputs.joined().contains("ok is ready"), "\(outputs.joined())")
        #expect(Self.filesHoldingToken(home).isEmpty)
        #expect(server.requests(to: "/away.bin").count == 1)
    }
}
