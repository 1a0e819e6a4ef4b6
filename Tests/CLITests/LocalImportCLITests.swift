import Foundation
import Testing
import RunAnywhere
import RunAnywhereTestSupport

@Suite("CLI local models", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct LocalImportCLITests {
    /// A CLI run against a fresh root, with fake Hugging Face and Ollama stores in its home folder.
    static func setUp() throws -> (CLI, FakeModelStores) {
        var cli = try CLI()
        let stores = try FakeModelStores(base: cli.home.url.appendingPathComponent("stores"))
        cli.extraEnvironment = stores.environment(home: cli.home.url)
        return (cli, stores)
    }

    @Test("models import links a GGUF, runs it, refuses bad input with the documented exit codes, and rm keeps the original")
    func importFile() throws {
        let (cli, _) = try Self.setUp(); defer { cli.home.remove() }
        let original = cli.home.url.appendingPathComponent("files/Forest-Q8.gguf")
        try FileManager.default.createDirectory(at: original.deletingLastPathComponent(), withIntermediateDirectories: true)
        let bytes = try DemoModel.write(.forest, to: original)
        let sha = FakeModelStores.sha256(bytes)

        let imported = try cli.run("models", "import", original.path, "--json")
        #expect(imported.status == 0, "\(imported.stderr)")
        let json = try #require(cli.json(imported) as? [String: Any])
        let model = try #require(json["model"] as? [String: Any])
        #expect(json["placement"] as? String == "hardLink" && json["sha256"] as? String == sha)
        #expect(model["id"] as? String == "forest-q8" && model["isDownloaded"] as? Bool == true)

        let listed = try #require(cli.json(try cli.run("models", "list", "--downloaded", "--json")) as? [[String: Any]])
        #expect(listed.map { $0["id"] as? String } == ["forest-q8"])
        let run = try cli.run("run", "forest-q8", "Once upon a time", "--max-tokens", "4", "--temperature", "0")
        #expect(run.status == 0 && (run.stdout.hasPrefix(" the") || run.stdout.hasPrefix(" there")), "\(run.stdout) \(run.stderr)")
        let again = try cli.run("models", "import", original.path)
        #expect(again.status == 0 && again.stdout.contains("already imported"), "\(again.stdout)")

        let notes = cli.home.url.appendingPathComponent("files/notes.gguf")
        try Data("plain text, not a model".utf8).write(to: notes)
        for (arguments, code) in [([notes.path], Int32(7)), ([cli.home.path + "/nothing.gguf"], 2), ([original.path, "--id", "qwen3-0.6b"], 2),
                                  ([original.path, "--copy", "--symlink"], 2), ([original.path, "--id", "../up"], 2)] {
            let r = try cli.run(["models", "import"] + arguments)
            #expect(r.status == code && r.stderr.hasPrefix("error:"), "\(arguments): \(r.status) \(r.stderr)")
        }
        let removed = try cli.run("models", "rm", "forest-q8")
        #expect(removed.status == 0)
        #expect(FakeModelStores.sha256(try Data(contentsOf: original)) == sha)
        #expect(try cli.run("models", "info", "forest-q8").status == 3, "the imported model's registration went with it")
    }

    @Test("models list --discover shows the fakes' GGUFs; importing by the listed paths links them; rm keeps the blobs")
    func discoverAndImport() throws {
        let (cli, stores) = try Self.setUp(); defer { cli.home.remove() }
        let forest = DemoModel.gguf(.forest).data(), sea = DemoModel.gguf(.sea).data()
        let snapshot = try stores.addHuggingFace(repository: "someone/Forest-GGUF", file: "Forest-Q8_0.gguf", data: forest)
        let manifest = try stores.addOllama(model: "sea", tag: "tiny", data: sea)
        let broken = try stores.addOllama(model: "broken", data: nil, digest: "sha256:../../secret")

        let text = try cli.run("models", "list", "--discover")
        #expect(text.status == 0 && text.stdout.contains("someone/Forest-GGUF/Forest-Q8_0.gguf") && text.stdout.contains("sea:tiny"), "\(text.stdout)")
        #expect(text.stderr.contains("skipped") && text.stderr.contains("broken"), "\(text.stderr)")
        let json = try #require(cli.json(try cli.run("models", "list", "--discover", "--json")) as? [String: Any])
        let models = try #require(json["models"] as? [[String: Any]])
        #expect(Set(models.compactMap { $0["suggestedId"] as? String }) == ["forest-q8_0", "sea-tiny"])
        #expect((json["skipped"] as? [[String: Any]])?.count == 1)

        let refused = try cli.run("models", "import", broken.path)
        #expect(refused.status == 7 && refused.stderr.contains("digest"), "\(refused.stderr)")
        let a = try cli.run("models", "import", snapshot.path, "--json")
        let b = try cli.run("models", "import", manifest.path, "--id", "sea")
        #expect(a.status == 0 && (cli.json(a) as? [String: Any])?["placement"] as? String == "hardLink", "\(a.stderr)")
        #expect(b.status == 0 && b.stdout.contains("Imported sea (hard link"), "\(b.stdout) \(b.stderr)")
        let after = try #require(cli.json(try cli.run("models", "list", "--discover", "--json")) as? [String: Any])
        #expect(Set((after["models"] as? [[String: Any]] ?? []).compactMap { $0["importedAs"] as? String }) == ["forest-q8_0", "sea"])
        let run = try cli.run("run", "sea", "Once upon a time", "--max-tokens", "3", "--temperature", "0")
        #expect(run.status == 0 && !run.stdout.isEmpty, "\(run.stderr)")
        for id in ["forest-q8_0", "sea"] { #expect(try cli.run("models", "rm", id).status == 0) }
        #expect(FakeModelStores.sha256(try Data(contentsOf: snapshot)) == FakeModelStores.sha256(forest))
        let seaBlob = stores.ollamaModels.appendingPathComponent("blobs/sha256-" + FakeModelStores.sha256(sea))
        #expect(FakeModelStores.sha256(try Data(contentsOf: seaBlob)) == FakeModelStores.sha256(sea))
    }

    @Test("a copy shows progress on a terminal", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal"))
    func copyProgressOnTerminal() throws {
        let (cli, _) = try Self.setUp(); defer { cli.home.remove() }
        let original = cli.home.url.appendingPathComponent("Forest.gguf")
        try DemoModel.write(.forest, to: original)
        let binary = try #require(CLI.binary).path
        let r = try cli.run(["-qec", "'\(binary)' models import '\(original.path)' --copy", "/dev/null"],
                            executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("Copying") && r.stdout.contains("100.0%") && r.stdout.contains("Imported forest (copied from"), "\(r.stdout)")
    }
}
