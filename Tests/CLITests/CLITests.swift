import Foundation
import Testing
import RunAnywhere
import RunAnywhereTestSupport

/// Runs the built `runanywhere` binary as a user would, against a temporary storage root.
struct CLI {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let home: TemporaryDirectory
    /// Variables added to (or replacing) the environment the binary runs with.
    var extraEnvironment: [String: String] = [:]

    init() throws { home = try TemporaryDirectory(prefix: "runanywhere-cli") }

    /// The binary beside the test bundle (`swift build` puts both in one folder).
    static var binary: URL? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let url = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("runanywhere")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    func run(_ arguments: String..., root: String? = nil) throws -> Output {
        try run(arguments, root: root)
    }

    func run(_ arguments: [String], root: String? = nil, executable: URL? = nil, environment extra: [String: String] = [:],
             stdin: String? = nil) throws -> Output {
        guard let binary = Self.binary else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        var environment = ["RUNANYWHERE_HOME": root ?? home.path + "/root", "HOME": home.path, "NO_COLOR": "1",
                           "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        // Where llama.cpp is, when the tests were told (else the binary finds the project-local install, if any).
        environment["RUNANYWHERE_LLAMACPP_LIB"] = ProcessInfo.processInfo.environment["RUNANYWHERE_LLAMACPP_LIB"]
        environment.merge(extraEnvironment) { $1 }
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try? input.fileHandleForWriting.close()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    func json(_ output: Output) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(output.stdout.utf8))
    }
}

@Suite("CLI", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct CLITests {
    @Test("--version, --help everywhere, and usage errors exit 2")
    func help() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let v = try cli.run("--version")
        #expect(v.status == 0 && v.stdout.contains(RunAnywhere.version))
        let h = try cli.run("--help")
        #expect(h.status == 0 && h.stdout.contains("Exit codes"))
        for command in [["models", "list"], ["models", "info"], ["models", "pull"], ["models", "register"], ["models", "rm"], ["models", "refresh"], ["run"], ["chat"], ["serve"], ["ps"], ["bench"], ["demo"]] {
            let r = try cli.run(command[0], command.count > 1 ? command[1] : "--help", "--help")
            #expect(r.status == 0 && r.stdout.contains("Usage:"), "\(command): \(r.stderr)")
        }
        let unknown = try cli.run("frobnicate")
        #expect(unknown.status == 2 && unknown.stderr.hasPrefix("error:"))
        let badOption = try cli.run("models", "list", "--bogus")
        #expect(badOption.status == 2 && badOption.stderr.contains("--bogus"))
    }

    @Test("models list and info print the catalog, and --json parses")
    func listAndInfo() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let list = try cli.run("models", "list")
        #expect(list.status == 0 && list.stdout.contains("qwen3-0.6b") && list.stdout.contains("whisper-tiny-en"))
        let json = try #require(cli.json(try cli.run("models", "list", "--json", "--category", "language")) as? [[String: Any]])
        #expect(json.contains { $0["id"] as? String == "llama-3.2-1b" })
        #expect(json.allSatisfy { $0["category"] as? String == "language" })
        let info = try cli.run("models", "info", "qwen3-0.6b")
        #expect(info.status == 0 && info.stdout.contains("Qwen3-0.6B-Q8_0.gguf"))
        let infoJSON = try #require(cli.json(try cli.run("models", "info", "qwen3-0.6b", "--json")) as? [String: Any])
        #expect(infoJSON["id"] as? String == "qwen3-0.6b")
    }

    @Test("errors are one line on stderr with the next step, and the documented exit code")
    func errors() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let missing = try cli.run("models", "info", "no-such-model")
        #expect(missing.status == 3)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("runanywhere models list"))
        let badURL = try cli.run("models", "register", "ftp://example.com/m.gguf")
        #expect(badURL.status == 2 && badURL.stderr.contains("only http and https"))
        let badId = try cli.run("models", "rm", "../etc")
        #expect(badId.status == 2 && badId.stderr.contains("Invalid model id"))
        let notLoaded = try cli.run("run", "qwen3-0.6b", "hi", "--temperature", "-1")
        #expect(notLoaded.status == 2)
    }

    @Test("register, pull, info, run, ps, rm against a loopback mirror")
    func lifecycle() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publishDemoModel(.forest).url
        let reg = try cli.run("models", "register", url.absoluteString, "--id", "forest", "--name", "Forest", "--json")
        #expect(reg.status == 0, "\(reg.stderr)")
        #expect((cli.json(reg) as? [String: Any])?["id"] as? String == "forest")
        let pull = try cli.run("models", "pull", "forest")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stderr.contains("forest is ready"))
        let info = try #require(cli.json(try cli.run("models", "info", "forest", "--json")) as? [String: Any])
        #expect(info["isDownloaded"] as? Bool == true && info["architecture"] as? String == "llama")
        let run = try cli.run("run", "forest", "Once upon a time", "--max-tokens", "12", "--temperature", "0")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).count > 3)
        #expect(run.stderr.contains("tok/s"))
        let runJSON = try #require(cli.json(try cli.run("run", "forest", "Once upon a time", "--max-tokens", "5", "--json")) as? [String: Any])
        #expect(runJSON["modelId"] as? String == "forest" && (runJSON["outputTokens"] as? Int ?? 0) > 0)
        let ps = try #require(cli.json(try cli.run("ps", "--json")) as? [String: Any])
        #expect((ps["loaded"] as? [Any])?.isEmpty == true, "a fresh process has nothing resident")
        #expect((ps["storageUsedBytes"] as? Int ?? 0) > 0)
        let rm = try cli.run("models", "rm", "forest")
        #expect(rm.status == 0)
        let after = try #require(cli.json(try cli.run("models", "list", "--downloaded", "--json")) as? [Any])
        #expect(after.isEmpty)
    }

    @Test("bench prints a row per backend: figures, or why a backend cannot serve the model")
    func bench() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publishDemoModel(.forest).url
        #expect(try cli.run("models", "register", url.absoluteString, "--id", "forest").status == 0)
        let notYet = try cli.run("bench", "forest")
        #expect(notYet.status != 0 && notYet.stderr.contains("models pull forest"), "\(notYet.stderr)")
        #expect(try cli.run("models", "pull", "forest").status == 0)
        let table = try cli.run("bench", "forest", "--reps", "1", "--prompt-tokens", "16", "--gen-tokens", "4")
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("BACKEND") && table.stdout.contains("native ") && table.stdout.contains("tok/s"), "\(table.stdout)")
        #expect(table.stdout.contains("llamaCpp "), "a row or the reason llama.cpp is unavailable: \(table.stdout)")
        let rows = try #require(cli.json(try cli.run("bench", "forest", "--backend", "native", "--reps", "1", "--gen-tokens", "2", "--json")) as? [[String: Any]])
        #expect(rows.count == 1 && rows[0]["backend"] as? String == "native" && (rows[0]["decodeTokensPerSecond"] as? Double ?? 0) > 0)
        let bad = try cli.run("bench", "forest", "--backend", "onnx")
        #expect(bad.status == 2)
    }

    /// Runs `runanywhere chat ARGUMENTS` with `script` on its standard input: exit status, stdout, stderr.
    static func chat(_ cli: CLI, _ binary: URL, _ arguments: [String], script: String) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["chat"] + arguments
        process.environment = ["RUNANYWHERE_HOME": cli.home.path + "/root", "HOME": cli.home.path, "NO_COLOR": "1"]
        let input = Pipe(), out = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data(script.utf8))
        try input.fileHandleForWriting.close()
        let o = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, o, e)
    }

    @Test("chat keeps the model loaded across messages and answers /ps and /exit")
    func chat() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publishDemoModel(.sea).url
        _ = try cli.run("models", "register", url.absoluteString, "--id", "sea")
        guard let binary = CLI.binary else { return }
        let (status, o, _) = try Self.chat(cli, binary, ["sea", "--max-tokens", "8", "--temperature", "0"],
                                           script: "Once upon a time\n/ps\nThe girl\n/exit\n")
        #expect(status == 0)
        #expect(o.contains("sea") && o.contains("native"), "the /ps table lists the resident model: \(o)")
    }

    @Test("a 30-turn chat on a 128-token context answers every message: old turns are dropped (said once), a message too long alone is refused and the chat goes on")
    func chatOutgrowsItsContext() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publish("sea-chat.gguf", data: DemoModel.chatData(.sea))
        _ = try cli.run("models", "register", url.absoluteString, "--id", "sea")
        guard let binary = CLI.binary else { return }
        var script = (1...15).map { "the sea was calm and the boat sailed on \($0)\n" }.joined()
        script += String(repeating: "the sea was calm and the boat sailed on ", count: 30) + "\n"
        script += (16...30).map { "the sea was calm and the boat sailed on \($0)\n" }.joined() + "/exit\n"
        let (status, _, e) = try Self.chat(cli, binary, ["sea", "--max-tokens", "12", "--temperature", "0", "--context-length", "128"],
                                           script: script)
        #expect(status == 0, "\(e)")
        // One speed line per answered message: all 30 short ones, none for the one that cannot fit.
        #expect(e.components(separatedBy: "[sea on native").count - 1 == 30, "\(e)")
        #expect(e.components(separatedBy: "earlier turns were dropped").count - 1 == 1, "\(e)")
        #expect(e.contains("more than the context window"), "\(e)")
    }

    @Test("a disk too small for the model fails with exit code 5 and says how much is needed",
          .enabled(if: SmallFilesystem.isAvailable, "needs root to mount a small tmpfs"))
    func fullDisk() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let disk = try SmallFilesystem(bytes: 256 * 1024); defer { disk.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publishDemoModel(.forest).url
        _ = try cli.run("models", "register", url.absoluteString, "--id", "forest", root: disk.path + "/root")
        let pull = try cli.run("models", "pull", "forest", root: disk.path + "/root")
        #expect(pull.status == 5, "\(pull.stderr)")
        #expect(pull.stderr.contains("Not enough disk") || pull.stderr.contains("Disk full"), "\(pull.stderr)")
    }

    @Test("the demo runs to completion offline and leaves nothing behind")
    func demo() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let r = try cli.run("demo")
        #expect(r.status == 0, "\(r.stderr)")
        for marker in ["[1]", "[3]", "interrupted on purpose; isResumable = true", "[5]", "tokens/s", "[6]", "[8]", "Done in"] {
            #expect(r.stdout.contains(marker), "missing \(marker)")
        }
        let root = cli.home.path + "/root"
        let left = (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []
        #expect(left.filter { $0.hasSuffix(".gguf") || $0.hasSuffix(".partial") }.isEmpty)
    }
}
