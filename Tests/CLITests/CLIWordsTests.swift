import Foundation
import Glibc
import Testing
import RunAnywhere
import RunAnywhereTestSupport

/// Prompts, output order, errors, --json shapes, ids and re-registration as a demanding user meets them (issue #21).
@Suite("CLI words a user trusts", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct CLIWordsTests {
    /// A CLI with the forest demo model registered as `forest` and downloaded.
    static func withForest(_ body: (CLI, ModelMirror) throws -> Void) throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publishDemoModel(.forest).url
        #expect(try cli.run("models", "register", url.absoluteString, "--id", "forest").status == 0)
        #expect(try cli.run("models", "pull", "forest").status == 0)
        try body(cli, mirror)
    }

    static func promptTokens(_ o: CLI.Output) -> Int? {
        (try? JSONSerialization.jsonObject(with: Data(o.stdout.utf8)) as? [String: Any])?["promptTokens"] as? Int
    }

    @Test("a prompt after --, starting with '-'; '-' reads standard input; --prompt-file FILE")
    func prompts() throws {
        try Self.withForest { cli, _ in
            let base = ["run", "forest", "--max-tokens", "3", "--temperature", "0", "--raw", "--json"]
            let direct = try cli.run(base + ["Once upon a time"])
            #expect(direct.status == 0, "\(direct.stderr)")
            let fromStdin = try cli.run(base + ["-"], stdin: "Once upon a time\n")
            #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
            #expect(Self.promptTokens(fromStdin) == Self.promptTokens(direct), "\(fromStdin.stdout)")
            let file = cli.home.path + "/prompt.txt"
            try "Once upon a time".write(toFile: file, atomically: true, encoding: .utf8)
            let fromFile = try cli.run(base + ["--prompt-file", file])
            #expect(fromFile.status == 0 && Self.promptTokens(fromFile) == Self.promptTokens(direct), "\(fromFile.stderr)")
            let dashed = try cli.run(base + ["--", "-- the fox"])
            #expect(dashed.status == 0, "\(dashed.stderr)")
            let undashed = try cli.run(base + ["-the fox"])
            #expect(undashed.status == 2 && undashed.stderr.contains("unknown option"))
            let help = try cli.run("run", "--help")
            #expect(help.stdout.contains("--prompt-file") && help.stdout.contains(" -- "))
        }
    }

    @Test("--stop A --stop B keeps both")
    func stops() throws {
        try Self.withForest { cli, _ in
            let base = ["run", "forest", "Once upon a time", "--max-tokens", "40", "--temperature", "0", "--raw"]
            let free = try cli.run(base).stdout
            let was = try #require(free.range(of: " was ")), time = try #require(free.range(of: " time"))
            #expect(was.lowerBound < time.lowerBound, "\(free)")
            // The text reaches "was" before "time": stopping at either must stop at "was" (one kept alone would be
            // the last, "time").
            let both = try cli.run(base + ["--stop", "was", "--stop", "time"])
            #expect(both.status == 0 && !both.stdout.contains("was") && !both.stdout.contains("time"), "\(both.stdout)")
        }
    }

    @Test("piped chat output keeps its order: the /ps table right after the reply it follows, each message on its own line")
    func chatOrder() throws {
        try Self.withForest { cli, _ in
            let r = try cli.run(["chat", "forest", "--max-tokens", "6", "--temperature", "0"],
                                stdin: "Once upon a time\n/ps\nThe fox\n/reset\n/exit\n")
            #expect(r.status == 0, "\(r.stderr)")
            let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // reply 1, the table (header, row), Storage:, reply 2, "Conversation cleared."
            #expect(lines.count >= 6, "\(lines)")
            guard lines.count >= 6 else { return }
            #expect(lines[1].hasPrefix("ID "), "\(lines)")
            #expect(lines[2].hasPrefix("forest "), "\(lines)")
            #expect(lines[3].hasPrefix("Storage:"), "\(lines)")
            #expect(lines[5] == "Conversation cleared.", "\(lines)")
        }
    }

    @Test("Ctrl-C during a chat reply stops that reply and the chat goes on; Ctrl-C at the prompt ends it")
    func chatInterrupt() throws {
        try Self.withForest { cli, _ in
            let chat = try CLIProcess(["chat", "forest", "--max-tokens", "2000", "--context-length", "2048", "--temperature", "0"], home: cli.home.path)
            #expect(chat.waitFor(timeout: 60) { chat.stderr.contains("Loaded forest") })
            chat.send("Once upon a time\n")
            #expect(chat.waitFor(timeout: 60) { chat.stdout.count > 3 })
            chat.interrupt()
            #expect(chat.waitFor(timeout: 30) { chat.stderr.contains("(reply stopped)") }, "\(chat.stderr)")
            chat.send("The fox\n")
            // The stopped reply has no speed line; the next one has.
            #expect(chat.waitFor(timeout: 60) { chat.stderr.components(separatedBy: "[forest on native").count == 2 }, "\(chat.stderr)")
            usleep(1_200_000)
            chat.interrupt()
            #expect(chat.wait(timeout: 30) == 130, "\(chat.stderr)")
        }
    }

    @Test("errors speak CLI: HF_TOKEN for a 401, --threads with the range the SDK accepts, which RUNANYWHERE_HOME is unusable, which catalog is bad")
    func cliWords() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let server = try LoopbackHTTPServer(); defer { server.stop() }
        server.setRoute("/gated.gguf", LoopbackRoute(fallback: .status(401)))
        _ = try cli.run("models", "register", server.url("/gated.gguf").absoluteString, "--id", "gated")
        let gated = try cli.run("models", "pull", "gated")
        #expect(gated.status == 4 && gated.stderr.contains("HF_TOKEN") && !gated.stderr.contains("setHfToken"), "\(gated.stderr)")
        let threads = try cli.run("run", "qwen3-0.6b", "hi", "--threads", "\(LoadOptions.threadRange.upperBound + 1)")
        #expect(threads.status == 2 && threads.stderr.contains("--threads") && threads.stderr.contains("1...\(LoadOptions.threadRange.upperBound)"), "\(threads.stderr)")
        let blocker = cli.home.path + "/a-file"
        try "x".write(toFile: blocker, atomically: true, encoding: .utf8)
        let home = try cli.run(["models", "pull", "qwen3-0.6b"], root: blocker + "/root")
        #expect(home.status == 5, "\(home.stderr)")
        #expect(home.stderr.contains("\(blocker) is a file, not a folder") && home.stderr.contains("RUNANYWHERE_HOME"), "\(home.stderr)")
        #expect(!home.stderr.contains("NSCocoaErrorDomain"))
        server.setRoute("/catalog.json", LoopbackRoute(body: Array(#"{"version": 1, "models": [{"id": "x"}]}"#.utf8)))
        let catalogURL = server.url("/catalog.json").absoluteString
        let bad = try cli.run(["models", "refresh", "--remote"], environment: ["RUNANYWHERE_CATALOG_URL": catalogURL])
        #expect(bad.status == 4, "\(bad.stderr)")
        #expect(bad.stderr.contains(catalogURL) && bad.stderr.contains("models[0]") && bad.stderr.contains("'name' is missing"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("DecodingError"))
    }

    @Test("--json shapes are flat: files as a list (no _0), plain paths; documented in the README")
    func jsonShapes() throws {
        try Self.withForest { cli, _ in
            let info = try #require(cli.json(try cli.run("models", "info", "forest", "--json")) as? [String: Any])
            #expect(info["artifact"] == nil && info["packaging"] as? String == "singleFile")
            let files = try #require(info["files"] as? [[String: Any]])
            #expect(files.first?["fileName"] as? String == "demo-forest.gguf")
            let path = try #require(info["localPath"] as? String)
            #expect(path.hasPrefix("/") && FileManager.default.fileExists(atPath: path))
            #expect((info["primaryFilePath"] as? String)?.hasSuffix("/demo-forest.gguf") == true)
            let listed = try #require(cli.json(try cli.run("models", "list", "--json")) as? [[String: Any]])
            let listText = try cli.run("models", "list", "--json").stdout
            #expect(!listText.contains("\"_0\""))
            #expect(listed.contains { $0["id"] as? String == "forest" })
        }
    }

    @Test("ids are case-insensitive: stored lower-case, found in any case; --id UPPER and --id upper are one model")
    func caseInsensitiveIds() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let server = try LoopbackHTTPServer()
        server.stop()
        let reg = try cli.run("models", "register", server.url("/x/Stories260K.gguf").absoluteString)
        #expect(reg.stdout.contains("Registered stories260k."), "\(reg.stdout)")
        let info = try cli.run("models", "info", "Stories260K")
        #expect(info.status == 0 && info.stdout.contains("stories260k"), "\(info.stderr)")
        _ = try cli.run("models", "register", server.url("/a.gguf").absoluteString, "--id", "MyModel")
        _ = try cli.run("models", "register", server.url("/a.gguf").absoluteString, "--id", "mymodel")
        let all = try #require(cli.json(try cli.run("models", "list", "--json")) as? [[String: Any]])
        #expect(all.filter { ($0["id"] as? String)?.lowercased() == "mymodel" }.map { $0["id"] as? String } == ["mymodel"])
    }

    @Test("re-registering a downloaded id with another file is refused without --force; --force removes the old file; refresh removes stray files and ps counts only models' files")
    func reRegister() throws {
        try Self.withForest { cli, mirror in
            let sea = mirror.publishDemoModel(.sea).url.absoluteString
            let refused = try cli.run("models", "register", sea, "--id", "forest")
            #expect(refused.status == 2 && refused.stderr.contains("--force") && !refused.stderr.contains("models.delete"), "\(refused.stderr)")
            let folder = cli.home.path + "/root/models/llamaCpp/forest"
            #expect(FileManager.default.fileExists(atPath: folder + "/demo-forest.gguf"))
            let forced = try cli.run("models", "register", sea, "--id", "forest", "--force")
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/demo-forest.gguf"))
            // A stray file (an old registration's, a copy by hand) counts for nothing and goes at refresh.
            try Data(count: 123_456).write(to: URL(fileURLWithPath: folder + "/stray.gguf"))
            let ps = try #require(cli.json(try cli.run("ps", "--json")) as? [String: Any])
            #expect(ps["storageUsedBytes"] as? Int == 0, "\(ps)")
            let refresh = try cli.run("models", "refresh")
            #expect(refresh.status == 0 && refresh.stdout.contains("Removed stray files: models/llamaCpp/forest/stray.gguf."), "\(refresh.stdout)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/stray.gguf"))
        }
    }

    @Test("--backend takes llamacpp, llama.cpp and llamaCpp: llama.cpp serves the model or says how to install it")
    func backendSpelling() throws {
        try Self.withForest { cli, _ in
            for spelling in ["llamacpp", "llama.cpp", "llamaCpp"] {
                let r = try cli.run("run", "forest", "Once", "--max-tokens", "2", "--backend", spelling)
                #expect(r.status != 2, "\(spelling): \(r.stderr)")
                #expect(r.status == 0 || r.stderr.contains("install-llamacpp"), "\(spelling): \(r.stderr)")
            }
            #expect(try cli.run("run", "forest", "Once", "--backend", "onnx").status == 2)
        }
    }
}
