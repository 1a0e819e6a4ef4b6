import Foundation
import RunAnywhere

/// `runanywhere run ID "prompt"`: downloads and loads as needed, streams the text.
enum RunCommand: Command {
    static let name = "run"
    static let summary = "Generate text with a model (downloading and loading it as needed)"
    static let help = """
        Usage: runanywhere run ID "PROMPT" [options]
               runanywhere run ID [options] -- "-PROMPT STARTING WITH A DASH"
               runanywhere run ID - [options] < prompt.txt     (- reads the prompt from standard input)
               runanywhere run ID --prompt-file FILE [options]

          --image FILE         a PNG or JPEG for a vision model (repeatable; images go before the prompt)
          --max-tokens N       at most N new tokens (default 256)
          --temperature T      0 = greedy, llama.cpp's greedy text (default 0.7)
          --top-k K            keep the K most likely tokens (default 40, 0 = off)
          --top-p P            nucleus sampling (default 0.95)
          --min-p P            drop tokens below P × the most likely (default 0.05)
          --repeat-penalty R   penalise tokens among the last 64 (default 1 = off, as llama.cpp)
          --seed N             the same seed gives the same text
          --stop TEXT          stop at TEXT (repeatable: --stop A --stop B stops at either)
          --prompt-file FILE   read the prompt from FILE (- for standard input)
          --system TEXT        system prompt
          --context-length N   context window to allocate
          --threads N          CPU threads (1 to 64; 4 a core on larger machines)
          --backend B          native, llamacpp or remote (also llama.cpp, llamaCpp; required: fails if that backend
                               cannot serve the model or llama.cpp is not installed, saying how to install it;
                               without it the native engine serves what it supports, llama.cpp the rest;
                               remote sends the prompt to --remote-url and nowhere else)
          --raw                send the prompt as written, without the chat template
          --json               print the result as JSON instead of streaming text

        \(RemoteOptions.help)

        Prompt and decode speeds are printed on stderr at the end.
        """

    static func options(_ args: Arguments, model: String?) throws -> LlmOptions {
        var o = LlmOptions(model: model)
        if let v = try args.int("max-tokens", in: 1...1_000_000) { o.maxTokens = v }
        if let v = try args.double("temperature", in: 0...100) { o.temperature = v }
        if let v = try args.int("top-k", in: 0...1_000_000) { o.topK = v }
        if let v = try args.double("top-p", in: 0.000001...1) { o.topP = v }
        if let v = try args.double("min-p", in: 0...0.999999) { o.minP = v }
        if let v = try args.double("repeat-penalty", in: 0.000001...100) { o.repetitionPenalty = v }
        if let s = args.option("seed") {
            guard let seed = UInt64(s) else { throw UsageError("--seed must be a non-negative whole number, got '\(s)'") }
            o.seed = seed
        }
        let stops = args.values("stop")
        if stops.contains(where: \.isEmpty) { throw UsageError("--stop needs some text") }
        if !stops.isEmpty { o.stopSequences = stops }
        o.systemPrompt = args.option("system")
        o.rawPrompt = args.flag("raw")
        var load = LoadOptions()
        var custom = false
        if let c = try args.int("context-length", in: 16...10_000_000) { load.contextLength = c; custom = true }
        if let t = try args.int("threads", in: LoadOptions.threadRange) { load.threads = t; custom = true }
        if let b = args.option("backend") {
            let backend = try backendID(b)
            load.backendPreferences = [BackendPreference(backend: backend, required: true)]
            custom = true
        }
        if custom { o.loadOptions = load }
        return o
    }

    /// A text-generation backend by the names people type: `native`, `llamacpp`, `llama.cpp`, `llamaCpp`, `llama-cpp`.
    static func backendID(_ text: String) throws -> BackendID {
        switch text.lowercased().replacingOccurrences(of: ".", with: "").replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "_", with: "") {
        case "native": return .native
        case "llamacpp": return .llamaCpp
        default:
            // `remote` or `remote:NAME`: a configured remote endpoint (--remote-url).
            if let backend = BackendID(rawValue: text), case .remote = backend { return backend }
            throw UsageError("unknown backend '\(text)'; one of: native, llamacpp (llama.cpp), remote")
        }
    }

    /// The prompt: the second positional (`-` reads standard input) or `--prompt-file FILE`.
    static func prompt(_ args: Arguments) throws -> String {
        if let file = args.option("prompt-file") {
            guard args.positionals.count == 1 else { throw UsageError("give the prompt either as an argument or with --prompt-file, not both") }
            return try readPrompt(file)
        }
        let prompt = try args.positional(1, "prompt (or --prompt-file FILE, or - to read standard input)")
        guard args.positionals.count == 2 else {
            throw UsageError("too many arguments: quote the prompt (a prompt starting with '-' goes after --)")
        }
        return prompt == "-" ? try readPrompt("-") : prompt
    }

    /// The text of `path`, or of standard input for `-`.
    static func readPrompt(_ path: String) throws -> String {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let d = FileManager.default.contents(atPath: path) else {
                throw UsageError("cannot read the prompt file \(path): \(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")")
            }
            data = d
        }
        guard let text = String(data: data, encoding: .utf8) else { throw UsageError("the prompt in \(path == "-" ? "standard input" : path) is not UTF-8 text") }
        let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard !trimmed.isEmpty else { throw UsageError("the prompt is empty") }
        return trimmed
    }

    static let valued: Set<String> = Set(["max-tokens", "temperature", "top-k", "top-p", "min-p", "repeat-penalty", "seed", "stop", "system",
                                          "context-length", "threads", "backend", "image", "prompt-file"]).union(RemoteOptions.valued)

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: valued, flags: ["raw", "json"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let id = try args.positional(0, "model id")
        let options = try options(args, model: id)
        let prompt = try prompt(args)
        let remote = try RemoteOptions.configureIfPinned(args, id: id, options: options)
        if !remote, let model = await RunAnywhere.models.get(id: id), !model.isDownloaded {
            try await PullCommand.pull(id: id, quiet: false)
        }
        let images = args.values("image").map { VlmImage(contentsOf: URL(fileURLWithPath: $0)) }
        if args.flag("json") {
            let result = images.isEmpty ? try await RunAnywhere.llm.generate(prompt: prompt, options: options)
                                        : try await RunAnywhere.vlm.generate(prompt: prompt, images: images, options: options)
            try Output.json(result)
            return ExitCode.ok
        }
        let result = try await stream(prompt: prompt, images: images, options: options)
        reportSpeed(result)
        if let note = result.backendNote {
            Output.stderr("[\(result.backend.rawValue): \(note)]")
        }
        return ExitCode.ok
    }

    /// Streams text to stdout; returns the result. With images the prompt goes to `RunAnywhere.vlm`.
    static func stream(prompt: String, images: [VlmImage] = [], options: LlmOptions) async throws -> GenerationResult {
        var result: GenerationResult?
        let events = images.isEmpty ? RunAnywhere.llm.generateStream(prompt: prompt, options: options)
                                    : RunAnywhere.vlm.generateStream(prompt: prompt, images: images, options: options)
        for try await event in events {
            switch event {
            case .text(let t):
                Output.out(t, terminator: "")
            case .completed(let r):
                result = r
            }
        }
        Output.out("")
        guard let result else {
            if Task.isCancelled { throw RunAnywhereError.cancelled("The reply") }
            throw RunAnywhereError(.generationFailed, "generation ended without a result")
        }
        return result
    }

    static func reportSpeed(_ r: GenerationResult) {
        let reused = r.reusedPromptTokens > 0 ? " (\(r.reusedPromptTokens) already read)" : ""
        Output.stderr("[\(r.modelId) on \(r.backend.rawValue): prompt \(r.promptTokens) tokens\(reused) at "
            + String(format: "%.1f tok/s, %d tokens at %.1f tok/s, first token after %.2f s, stopped: ", r.promptTokensPerSecond,
                     r.outputTokens, r.tokensPerSecond, r.timeToFirstTokenSeconds) + r.finishReason.rawValue + "]")
    }
}
