import Foundation
import RunAnywhere
import RunAnywhereLlamaCpp

/// `runanywhere bench ID [--backend native|llamaCpp|both]`: the same model on each backend, side by side.
enum BenchCommand: Command {
    static let name = "bench"
    static let summary = "Measure a model's speed, load time and memory on each backend"
    static let help = """
        Usage: runanywhere bench ID [--backend native|llamaCpp|both] [options]

          --backend B          native, llamaCpp or both (default both; a backend that cannot serve the
                               model is listed with the reason)
          --prompt-tokens N    about N prompt tokens (default 128)
          --gen-tokens N       tokens to generate (default 64; fewer when the model ends its answer)
          --reps N             runs per backend, the median is shown (default 3)
          --context-length N   context window (default 512)
          --threads N          CPU threads (default: the SDK's choice)
          --json               print the rows as JSON

        Each backend loads the model once (load time, resident memory of the process before loading, after
        loading and after the runs, and after unloading), then generates greedily with the chat template off;
        every run starts with a different word so none reuses the previous run's cache. The model must be
        downloaded (`runanywhere models pull ID`).
        """

    /// One backend's figures.
    struct Row: Codable {
        var backend: String
        var status: String
        var loadSeconds: Double?
        var promptTokens: Int?
        var promptTokensPerSecond: Double?
        var generatedTokens: Int?
        var decodeTokensPerSecond: Double?
        var rssBeforeLoad: Int64?
        var rssAfterLoad: Int64?
        var rssAfterRuns: Int64?
        var rssAfterUnload: Int64?
    }

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["backend", "prompt-tokens", "gen-tokens", "reps", "context-length", "threads"], flags: ["json"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let id = try args.positional(0, "model id")
        let choice = args.option("backend") ?? "both"
        let backends: [BackendID]
        switch choice {
        case "both": backends = [.native, .llamaCpp]
        default:
            backends = [try RunCommand.backendID(choice)]
        }
        let promptTokens = try args.int("prompt-tokens", in: 1...100_000) ?? 128
        let genTokens = try args.int("gen-tokens", in: 1...100_000) ?? 64
        let reps = try args.int("reps", in: 1...100) ?? 3
        let context = try args.int("context-length", in: 16...10_000_000) ?? max(512, promptTokens + genTokens + 16)
        let threads = try args.int("threads", in: LoadOptions.threadRange)
        guard let model = await RunAnywhere.models.get(id: id) else { throw RunAnywhereError.modelNotFound(id) }
        guard model.isDownloaded else {
            throw RunAnywhereError(.modelNotDownloaded, "Model '\(id)' is not downloaded; run `runanywhere models pull \(id)` first.", modelId: id)
        }
        var rows: [Row] = []
        for backend in backends {
            let load = LoadOptions(backendPreferences: [BackendPreference(backend: backend, required: true)],
                                   contextLength: context, threads: threads)
            do {
                rows.append(try await measure(id: id, load: load, promptTokens: promptTokens, genTokens: genTokens, reps: reps))
            } catch let error as RunAnywhereError where error.code == .backendUnavailable {
                rows.append(Row(backend: backend.rawValue, status: "unavailable: \(error.message)"))
            }
        }
        if args.flag("json") {
            try Output.json(rows)
        } else {
            Output.out(render(rows, model: id))
        }
        return ExitCode.ok
    }

    /// Loads, runs `reps` times, unloads; the medians of the runs.
    static func measure(id: String, load: LoadOptions, promptTokens: Int, genTokens: Int, reps: Int) async throws -> Row {
        try await RunAnywhere.models.unload(id: id)
        let backend = load.backendPreferences.first?.backend.rawValue ?? "?"
        var row = Row(backend: backend, status: "ok")
        row.rssBeforeLoad = ResidentMemory.bytes()
        let loaded = try await RunAnywhere.models.load(id: id, options: load)
        row.rssAfterLoad = ResidentMemory.bytes()
        row.loadSeconds = loaded.loadSeconds
        var prompt: [Double] = []
        var decode: [Double] = []
        for rep in 0..<reps {
            let options = LlmOptions(model: id, maxTokens: genTokens, temperature: 0, repetitionPenalty: 1, rawPrompt: true, loadOptions: load)
            let r = try await RunAnywhere.llm.generate(prompt: benchPrompt(words: promptTokens, run: rep), options: options)
            prompt.append(r.promptTokensPerSecond)
            decode.append(r.tokensPerSecond)
            row.promptTokens = r.promptTokens
            row.generatedTokens = r.outputTokens
        }
        row.rssAfterRuns = ResidentMemory.bytes()
        row.promptTokensPerSecond = median(prompt)
        row.decodeTokensPerSecond = median(decode)
        try await RunAnywhere.models.unload(id: id)
        row.rssAfterUnload = ResidentMemory.bytes()
        return row
    }

    /// About `words` tokens of ordinary English, starting with a word that differs per run.
    static func benchPrompt(words: Int, run: Int) -> String {
        let openers = ["Once", "Yesterday", "Later", "Suddenly", "Meanwhile", "Today", "Afterwards", "Finally"]
        let text = "the quick brown fox jumps over the lazy dog while a small bird sings in the old tree near the river".split(separator: " ")
        var out = [openers[run % openers.count] + (run >= openers.count ? " \(run)" : "")]
        while out.count < max(1, words * 3 / 4) { out.append(String(text[out.count % text.count])) }
        return out.joined(separator: " ")
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func render(_ rows: [Row], model: String) -> String {
        func mib(_ v: Int64?) -> String { v.map { String(format: "%.0f MiB", Double($0) / 1_048_576) } ?? "-" }
        func delta(_ a: Int64?, _ b: Int64?) -> String {
            guard let a, let b else { return "-" }
            return String(format: "%+.0f MiB", Double(b - a) / 1_048_576)
        }
        var out = "Model \(model)\n"
        out += Output.table(["BACKEND", "LOAD", "PROMPT", "DECODE", "RSS AFTER LOAD", "AFTER RUNS", "AFTER UNLOAD"], rows.filter { $0.status == "ok" }.map { r in
            [r.backend,
             r.loadSeconds.map { String(format: "%.2f s", $0) } ?? "-",
             String(format: "%.1f tok/s (%d)", r.promptTokensPerSecond ?? 0, r.promptTokens ?? 0),
             String(format: "%.1f tok/s (%d)", r.decodeTokensPerSecond ?? 0, r.generatedTokens ?? 0),
             "\(mib(r.rssAfterLoad)) (\(delta(r.rssBeforeLoad, r.rssAfterLoad)))",
             mib(r.rssAfterRuns),
             "\(mib(r.rssAfterUnload)) (\(delta(r.rssBeforeLoad, r.rssAfterUnload)))"]
        })
        for r in rows where r.status != "ok" { out += "\n\(r.backend) \(r.status)" }
        out += "\nPROMPT and DECODE: medians of the runs, tokens in brackets; RSS is the whole process's, change since just before loading in brackets."
        return out
    }
}
