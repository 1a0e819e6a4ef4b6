import Foundation
import RunAnywhere
import RunAnywhereTestSupport

/// `runanywhere demo`: the whole job of the SDK, for real, offline.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "A tour: register, download (interrupt + resume), verify, load, generate, switch, unload, delete"
    static let help = """
        Usage: runanywhere demo [--model ID] [--keep]

        Without --model the tour runs offline: a model mirror starts on 127.0.0.1 inside this process and
        serves two small story models the project generates itself (their weights encode word pairs of a
        built-in story, so the text reads like English but means nothing). Everything happens in a temporary
        storage root that is removed at the end, so your own models are untouched.

        With --model ID it tours a catalog model instead (downloaded from its real host into your storage
        root, e.g. --model qwen3-0.6b); --keep leaves it downloaded at the end.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["model"], flags: ["keep"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        if let id = args.option("model") {
            return try await catalogTour(id: id, keep: args.flag("keep"))
        }
        return try await offlineTour()
    }

    // MARK: The offline tour

    static func offlineTour() async throws -> Int32 {
        let started = Date()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("runanywhere-demo-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: root))
        let mirror = try ModelMirror()
        defer { mirror.stop() }

        step(1, "Start a model mirror on \(mirror.server.baseURL.absoluteString) (in this process) and publish two demo models")
        let forest = mirror.publishDemoModel(.forest, bandwidthBytesPerSecond: 600_000)
        let sea = mirror.publishDemoModel(.sea, bandwidthBytesPerSecond: 600_000)
        say("These are story models the project generates: a one-layer llama network whose weights hold the word")
        say("pairs of a short built-in story. The engine runs them like any GGUF; their text reads like English but")
        say("means nothing. For a real model, when online: runanywhere run qwen3-0.6b \"Tell me a story\"")

        step(2, "Register the first model by URL")
        let info = try await sdk.registerModel(id: "demo-forest", name: "Demo story model (forest)", url: forest.url.absoluteString,
                                               framework: .llamaCpp, modality: .language, sha256: forest.sha256,
                                               sizeBytes: Int64(forest.size))
        say("registered \(info.id): \(info.artifact.files[0].url.absoluteString), sha256 \(forest.sha256.prefix(16))…")
        let language = try await sdk.models.list(filter: ModelFilter(category: .language))
        say("the registry now lists \(language.count) language models (the curated catalog plus this one)")

        step(3, "Download it with progress, interrupt it part way, and resume")
        try await downloadInterruptingOnce(sdk: sdk, id: info.id)
        let downloaded = try await require(sdk, info.id)
        say("verified: \(ByteFormatter.string(downloaded.downloadSize ?? 0)), SHA-256 matches; the header says \(downloaded.architecture ?? "?"), "
            + "\(downloaded.parameterCount.map { String(format: "%.2fM parameters", Double($0) / 1e6) } ?? "?"), \(downloaded.quantization ?? "?"), "
            + "context \(downloaded.contextLength ?? 0)")

        step(4, "Load it")
        let rssBefore = residentBytes()
        let loaded = try await sdk.models.load(id: info.id, options: LoadOptions(contextLength: 1024))
        let prompt = "Once upon a time"
        let first = try await sdk.llm.generate(prompt: prompt, options: LlmOptions(model: info.id, maxTokens: 40, temperature: 0.8, seed: 7))
        let rssAfter = residentBytes()
        say("loaded on the \(loaded.backend.rawValue) engine in \(String(format: "%.3f", loaded.loadSeconds)) s, context \(loaded.contextLength), \(loaded.threads) threads")
        say("memory: estimated \(ByteFormatter.string(loaded.estimatedMemoryBytes)) before loading; the engine holds \(ByteFormatter.string(loaded.memoryBytes)); "
            + "this process grew by \(ByteFormatter.string(max(0, rssAfter - rssBefore))) (resident set)")

        step(5, "Generate")
        say("prompt: \(prompt)")
        say("text:   \(prompt)\(first.text)")
        say(String(format: "%d prompt tokens, %d new tokens at %.0f tokens/s, first token after %.3f s (%@)",
                   first.promptTokens, first.outputTokens, first.tokensPerSecond, first.timeToFirstTokenSeconds, first.finishReason.rawValue))

        step(6, "Register a second model and switch to it (load the new one, then unload the old one)")
        let second = try await sdk.registerModel(id: "demo-sea", name: "Demo story model (sea)", url: sea.url.absoluteString,
                                                 framework: .llamaCpp, modality: .language, sha256: sea.sha256,
                                                 sizeBytes: Int64(sea.size))
        try await download(sdk: sdk, id: second.id)
        _ = try await sdk.models.load(id: second.id, options: LoadOptions(contextLength: 1024))
        let both = await sdk.models.state()
        say("both resident for a moment: \(both.loaded.map(\.id).joined(separator: ", "))")
        try await sdk.models.unload(id: info.id)
        let text = try await sdk.llm.generate(prompt: prompt, options: LlmOptions(model: second.id, maxTokens: 40, temperature: 0.8, seed: 7))
        say("text:   \(prompt)\(text.text)")

        step(7, "What is resident right now")
        Output.out(indent(PsCommandRenderer.render(await sdk.models.state(), root: root)))

        step(8, "Unload everything and delete both models")
        try await sdk.models.unloadAll()
        try await sdk.models.delete(id: info.id)
        try await sdk.models.delete(id: second.id)
        let after = await sdk.models.state()
        say("resident: \(after.loaded.count) models; model files on disk: \(ByteFormatter.string(after.storageUsedBytes))")
        let requests = mirror.server.requests.filter { $0.method == "GET" }
        say("the mirror served \(requests.count) requests; \(requests.filter { $0.header("Range") != nil }.count) of them resumed with a Range header")

        Output.out("\nDone in \(String(format: "%.1f", Date().timeIntervalSince(started))) s. The temporary storage root is removed; your own models were not touched.")
        Output.out("Next: runanywhere models list · runanywhere run qwen3-0.6b \"Tell me a story\" (online) · runanywhere --help")
        return ExitCode.ok
    }

    /// Downloads, cancelling once after ~40% of the bytes, then resumes to completion.
    static func downloadInterruptingOnce(sdk: RunAnywhereSDK, id: String) async throws {
        let bar = ProgressBar(label: id, enabled: true)
        let interrupted = Task {
            for try await event in try await sdk.models.download(id: id) {
                if case .started(let total, let files, let resumed) = event { bar.start(totalBytes: total, files: files, resumed: resumed) }
                if case .progress(let p) = event {
                    bar.update(p)
                    if let f = p.fraction, f >= 0.4 { return true }
                }
            }
            return false
        }
        let stoppedEarly = try await interrupted.value
        bar.abort()
        if stoppedEarly {
            // Leaving the loop drops the stream, which cancels the transfer and keeps the partial file.
            try await Task.sleep(nanoseconds: 300_000_000)
            say("interrupted on purpose; isResumable = \(await sdk.models.isResumable(id: id))")
        }
        try await download(sdk: sdk, id: id)
    }

    static func download(sdk: RunAnywhereSDK, id: String) async throws {
        let bar = ProgressBar(label: id, enabled: true)
        for try await event in try await sdk.models.download(id: id) {
            switch event {
            case .started(let total, let files, let resumed): bar.start(totalBytes: total, files: files, resumed: resumed)
            case .progress(let p): bar.update(p)
            case .verifying(let name): bar.note("verifying \(name)")
            case .extracting(let name): bar.note("extracting \(name)")
            case .completed(let m): bar.finish("\(m.id) is ready")
            }
        }
    }

    // MARK: A catalog model

    static func catalogTour(id: String, keep: Bool) async throws -> Int32 {
        let sdk = RunAnywhere.shared
        step(1, "Find \(id) in the catalog")
        let model = try await require(sdk, id)
        say("\(model.name): \(model.artifact.files.map(\.url.absoluteString).joined(separator: ", "))")
        step(2, "Download (resumable; Ctrl-C keeps the partial)")
        try await PullCommand.pull(id: id, quiet: false)
        step(3, "Load")
        let loaded = try await sdk.models.load(id: id)
        say("loaded on \(loaded.backend.rawValue): estimated \(ByteFormatter.string(loaded.estimatedMemoryBytes)), holds \(ByteFormatter.string(loaded.memoryBytes)), context \(loaded.contextLength)")
        step(4, "Generate")
        let r = try await RunCommand.stream(prompt: "Tell me a short story about a fox.", options: LlmOptions(model: id, maxTokens: 80))
        RunCommand.reportSpeed(r)
        step(5, "Unload\(keep ? "" : " and delete")")
        try await sdk.models.unload(id: id)
        if !keep { try await sdk.models.delete(id: id) }
        Output.out(PsCommandRenderer.render(await sdk.models.state(), root: sdk.models.storageRoot))
        return ExitCode.ok
    }

    // MARK: Output helpers

    static func require(_ sdk: RunAnywhereSDK, _ id: String) async throws -> ModelInfo {
        guard let m = await sdk.models.get(id: id) else { throw RunAnywhereError.modelNotFound(id) }
        return m
    }

    static func step(_ n: Int, _ title: String) {
        let text = "\n[\(n)] \(title)"
        Output.out(Output.useColor ? "\u{1B}[1m\(text)\u{1B}[0m" : text)
    }

    static func say(_ text: String) { Output.out("    " + text) }

    static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
    }

    /// This process's resident set, bytes.
    static func residentBytes() -> Int64 {
        guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let parts = s.split(separator: " ")
        guard parts.count > 1, let pages = Int64(parts[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
