import Foundation
import Glibc
import Testing
import RunAnywhere
import RunAnywhereTestSupport

/// Every command line of the README's CLI section, run as a new user would: the built binary, a fresh storage
/// root, a loopback mirror of tiny models. Outputs and exit codes asserted.
@Suite("CLI for a new user (README)", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct CLINewUserTests {
    @Test("models list, info, register, pull, refresh, rm, ps as the README shows them")
    func models() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let forest = mirror.publishDemoModel(.forest)
        let sea = mirror.publishDemoModel(.sea)

        let list = try cli.run("models", "list")
        #expect(list.status == 0 && list.stdout.hasPrefix("ID ") && list.stdout.contains("qwen3-0.6b"))
        let filtered = try cli.run("models", "list", "--category", "language", "--framework", "llamaCpp", "--search", "qwen", "--json")
        let rows = try #require(cli.json(filtered) as? [[String: Any]])
        #expect(!rows.isEmpty && rows.allSatisfy { ($0["id"] as? String)?.contains("qwen") == true })
        #expect(try cli.run("models", "list", "--downloaded").stdout == "No models match.\n")

        let reg = try cli.run("models", "register", forest.url.absoluteString, "--id", "Forest", "--name", "Forest story",
                              "--sha256", forest.sha256, "--size", "\(forest.size)", "--json")
        #expect(reg.status == 0, "\(reg.stderr)")
        let regJSON = try #require(cli.json(reg) as? [String: Any])
        #expect(regJSON["id"] as? String == "forest" && regJSON["name"] as? String == "Forest story" && regJSON["downloadSize"] as? Int == forest.size)
        let seaReg = try cli.run("models", "register", sea.url.absoluteString, "--id", "sea")
        #expect(seaReg.stdout == "Registered sea. Download it with `runanywhere models pull sea`.\n")

        let info = try cli.run("models", "info", "FOREST")
        #expect(info.status == 0 && info.stdout.contains("downloaded  no") && info.stdout.contains(forest.sha256))

        let pull = try cli.run("models", "pull", "forest", "sea")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stderr.contains("forest is ready") && pull.stderr.contains("sea is ready"))
        let infoJSON = try #require(cli.json(try cli.run("models", "info", "forest", "--json")) as? [String: Any])
        #expect(infoJSON["isDownloaded"] as? Bool == true && (infoJSON["localPath"] as? String)?.hasPrefix("/") == true)
        let downloaded = try cli.run("models", "list", "--downloaded")
        #expect(downloaded.stdout.contains("forest ") && downloaded.stdout.contains("sea "))

        let ps = try cli.run("ps")
        #expect(ps.status == 0 && ps.stdout.hasPrefix("No models loaded in this process.\nStorage: "))
        let psJSON = try #require(cli.json(try cli.run("ps", "--json")) as? [String: Any])
        #expect(psJSON["storageUsedBytes"] as? Int == forest.size + sea.size)

        let refresh = try cli.run("models", "refresh")
        #expect(refresh.status == 0 && refresh.stdout.contains("2 downloaded."), "\(refresh.stdout)")
        let remote = try cli.run("models", "refresh", "--remote")
        #expect(remote.status == 4 && remote.stderr.contains("set RUNANYWHERE_CATALOG_URL to its URL"), "\(remote.stderr)")
        let rm = try cli.run("models", "rm", "forest", "sea")
        #expect(rm.stdout == "Deleted forest.\nDeleted sea.\n")
        #expect(try cli.run("models", "rm", "sea").stdout == "sea was not downloaded: nothing to delete.\n")
        let prune = try cli.run("models", "refresh", "--prune")
        #expect(prune.status == 0 && prune.stdout.contains("Pruned: forest, sea."), "\(prune.stdout)")
        let archive = try cli.run("models", "register", mirror.server.url("/moonshine-base-en.tar").absoluteString, "--archive",
                                  "--modality", "speech-recognition", "--framework", "onnx", "--root-dir", "moonshine-base-en",
                                  "--expected-file", "tokens.txt", "--primary-file", "tokens.txt", "--id", "moonshine-base-en")
        #expect(archive.status == 0, "\(archive.stderr)")
        let speech = try #require(cli.json(try cli.run("models", "info", "moonshine-base-en", "--json")) as? [String: Any])
        #expect(speech["packaging"] as? String == "archive" && speech["category"] as? String == "speechRecognition")
    }

    @Test("run with every option the README lists, -- for a dashed prompt, - for standard input; transcribe refuses a text model")
    func run() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        _ = try cli.run("models", "register", mirror.publishDemoModel(.forest).url.absoluteString, "--id", "forest")
        // run downloads the model when needed.
        let first = try cli.run("run", "forest", "Once upon a time", "--max-tokens", "8", "--temperature", "0")
        #expect(first.status == 0 && first.stderr.contains("forest is ready") && first.stderr.contains("[forest on native: prompt"), "\(first.stderr)")
        let all = try cli.run("run", "forest", "Once upon a time", "--max-tokens", "8", "--temperature", "0.5", "--top-k", "20",
                              "--top-p", "0.9", "--seed", "7", "--stop", "zzz", "--stop", "qqq", "--system", "A story.",
                              "--context-length", "256", "--threads", "1", "--backend", "native", "--raw", "--json")
        let result = try #require(cli.json(all) as? [String: Any], "\(all.stderr)")
        #expect(result["modelId"] as? String == "forest" && result["backend"] as? String == "native")
        #expect(try cli.run("run", "forest", "--max-tokens", "2", "--", "-a prompt starting with a dash").status == 0)
        let piped = try cli.run(["run", "forest", "-", "--max-tokens", "2"], stdin: "Once upon a time\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        let image = try cli.run("run", "forest", "Once", "--image", cli.home.path + "/none.png", "--max-tokens", "2")
        #expect(image.status != 0 && image.stderr.hasPrefix("error:"))
        let transcribe = try cli.run("transcribe", "forest", cli.home.path + "/none.wav")
        #expect(transcribe.status != 0 && transcribe.stderr.hasPrefix("error:"), "\(transcribe.stderr)")
        let bench = try cli.run("bench", "forest", "--backend", "native", "--prompt-tokens", "8", "--gen-tokens", "2", "--reps", "1")
        #expect(bench.status == 0 && bench.stdout.contains("native "), "\(bench.stderr)")
    }

    @Test("chat answers, /ps, /unload, /reset, /image of a missing file, /exit")
    func chat() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        _ = try cli.run("models", "register", mirror.publish("chat.gguf", data: DemoModel.chatData(.forest)).absoluteString, "--id", "forest")
        let r = try cli.run(["chat", "forest", "--max-tokens", "5", "--temperature", "0"],
                            stdin: "Once upon a time\n/ps\n/unload\n/image /no/such.png\nThe fox\n/reset\n/exit\n")
        #expect(r.status == 0, "\(r.stderr)")
        for line in ["Unloaded forest.", "No file /no/such.png.", "Conversation cleared."] {
            #expect(r.stdout.split(separator: "\n").contains { $0 == line }, "\(line): \(r.stdout)")
        }
        #expect(r.stderr.contains("Loaded forest on native") && r.stderr.components(separatedBy: "[forest on native").count == 3)
    }

    @Test("a 30-turn scripted chat on a 256-token context completes with every reply")
    func thirtyTurns() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        _ = try cli.run("models", "register", mirror.publish("chat.gguf", data: DemoModel.chatData(.sea)).absoluteString, "--id", "sea")
        let script = (1...30).map { "the girl walked to the beach to look at the boats \($0)\n" }.joined() + "/exit\n"
        let r = try cli.run(["chat", "sea", "--max-tokens", "20", "--temperature", "0", "--context-length", "256"], stdin: script)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "[sea on native").count - 1 == 30, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n", omittingEmptySubsequences: false).count >= 30)
    }
    // `runanywhere demo` is run by CLITests.demo.
}
