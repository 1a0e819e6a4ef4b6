import Foundation
import RunAnywhere

/// `runanywhere chat ID`: an interactive conversation that keeps the model resident.
enum ChatCommand: Command {
    static let name = "chat"
    static let summary = "Chat with a model interactively (keeps it loaded)"
    static let help = """
        Usage: runanywhere chat ID [run options]

        Type a message and press Enter. Commands: /image FILE (attach a PNG or JPEG to the next message, for a
        vision model), /ps (what is loaded), /unload (free the model's memory; the next message loads it again),
        /reset (forget the conversation), /exit (or Ctrl-D).
        Takes the options of `runanywhere run` (--temperature, --context-length, --system, ...).
        When the conversation outgrows the context window, its oldest turns are dropped (the system prompt never);
        a single message too long for the window is refused and the chat goes on.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: RunCommand.valued, flags: ["raw"])
        if args.wantsHelp { print(help); return ExitCode.ok }
        let id = try args.positional(0, "model id")
        var options = try RunCommand.options(args, model: id)
        let remote = try RemoteOptions.configureIfPinned(args, id: id, options: options)
        if !remote, let model = await RunAnywhere.models.get(id: id), !model.isDownloaded {
            try await PullCommand.pull(id: id, quiet: false)
        }
        let loaded = try await RunAnywhere.models.load(id: id, options: options.loadOptions ?? LoadOptions())
        Output.stderr("Loaded \(id) on \(loaded.backend.rawValue) (\(ByteFormatter.string(loaded.memoryBytes)), context \(loaded.contextLength))\(loaded.backendNote.map { "; \($0)" } ?? ""). /exit to quit.")
        let interactive = isatty(STDIN_FILENO) == 1
        var images: [VlmImage] = []
        var toldAboutDropping = false
        while true {
            if interactive { FileHandle.standardOutput.write(Data(">>> ".utf8)) }
            guard let line = readLine(strippingNewline: true) else { break }
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            switch text {
            case "/exit", "/quit", "/bye":
                return ExitCode.ok
            case "/ps":
                print(PsCommandRenderer.render(await RunAnywhere.models.state(), root: RunAnywhere.models.storageRoot))
                continue
            case "/unload":
                try await RunAnywhere.models.unload(id: id)
                print("Unloaded \(id).")
                continue
            case "/reset":
                options.history = []
                print("Conversation cleared.")
                continue
            case "/help", "/?":
                print(help)
                continue
            default:
                if text.hasPrefix("/image ") {
                    let path = text.dropFirst("/image ".count).trimmingCharacters(in: .whitespaces)
                    guard FileManager.default.fileExists(atPath: path) else { print("No file \(path)."); continue }
                    images.append(VlmImage(contentsOf: URL(fileURLWithPath: path)))
                    print("Attached \(path) to the next message (\(images.count) image\(images.count == 1 ? "" : "s")).")
                    continue
                }
                if text.hasPrefix("/") {
                    print("Unknown command \(text). Try /help.")
                    continue
                }
            }
            let result: GenerationResult
            do {
                result = try await RunCommand.stream(prompt: text, images: images, options: options)
            } catch let error as RunAnywhereError where error.code == .invalidConfiguration {
                // A message that cannot fit the context even alone: say so, keep the conversation going.
                Output.error(error.message)
                continue
            }
            images = []
            RunCommand.reportSpeed(result)
            if result.droppedHistoryTurns > 0 {
                // The conversation outgrew the context window: the oldest turns went, as in the generation itself.
                options.history.removeFirst(min(result.droppedHistoryTurns, options.history.count))
                if !toldAboutDropping {
                    Output.stderr("(earlier turns were dropped to fit the context window of \(loaded.contextLength) tokens)")
                    toldAboutDropping = true
                }
            }
            options.history.append(ChatTurn(role: .user, content: text))
            options.history.append(ChatTurn(role: .assistant, content: result.text))
        }
        return ExitCode.ok
    }
}
