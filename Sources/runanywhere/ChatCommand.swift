import Foundation
import RunAnywhere
import Synchronization

/// `runanywhere chat ID`: an interactive conversation that keeps the model resident.
enum ChatCommand: Command {
    static let name = "chat"
    static let summary = "Chat with a model interactively (keeps it loaded)"
    static let help = """
        Usage: runanywhere chat ID [run options]

        Type a message and press Enter. Commands: /image FILE (attach a PNG or JPEG to the next message, for a
        vision model), /ps (what is loaded), /unload (free the model's memory; the next message loads it again),
        /reset (forget the conversation), /exit (or Ctrl-D). Ctrl-C stops the reply being written and keeps the
        chat; Ctrl-C at the prompt, or twice within a second, ends it (exit code 130).
        Takes the options of `runanywhere run` (--temperature, --context-length, --system, ...).
        When the conversation outgrows the context window, its oldest turns are dropped (the system prompt never);
        a single message too long for the window is refused and the chat goes on.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: RunCommand.valued, flags: ["raw"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let id = try args.positional(0, "model id")
        if args.option("prompt-file") != nil { throw UsageError("chat reads its messages from standard input; --prompt-file is for `runanywhere run`") }
        guard args.positionals.count == 1 else { throw UsageError("chat takes one model id; type the messages after it starts (or pipe them in)") }
        var options = try RunCommand.options(args, model: id)
        let remote = try RemoteOptions.configureIfPinned(args, id: id, options: options)
        if !remote, let model = await RunAnywhere.models.get(id: id), !model.isDownloaded {
            try await PullCommand.pull(id: id, quiet: false)
        }
        let loaded = try await RunAnywhere.models.load(id: id, options: options.loadOptions ?? LoadOptions())
        Output.stderr("Loaded \(id) on \(loaded.backend.rawValue) (\(ByteFormatter.string(loaded.memoryBytes)), context \(loaded.contextLength))\(loaded.backendNote.map { "; \($0)" } ?? ""). /exit to quit.")
        let interactive = isatty(STDIN_FILENO) == 1
        let interrupts = ChatInterrupts()
        let watch = SignalWatch.onInterrupt { interrupts.interrupted() }
        defer { watch.cancel() }
        var images: [VlmImage] = []
        var toldAboutDropping = false
        while true {
            if interactive { Output.out(">>> ", terminator: "") }
            guard let line = readLine(strippingNewline: true) else { break }
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            switch text {
            case "/exit", "/quit", "/bye":
                return ExitCode.ok
            case "/ps":
                Output.out(PsCommandRenderer.render(await RunAnywhere.models.state(), root: RunAnywhere.models.storageRoot))
                continue
            case "/unload":
                try await RunAnywhere.models.unload(id: id)
                Output.out("Unloaded \(id).")
                continue
            case "/reset":
                options.history = []
                Output.out("Conversation cleared.")
                continue
            case "/help", "/?":
                Output.out(help)
                continue
            default:
                if text.hasPrefix("/image ") {
                    let path = text.dropFirst("/image ".count).trimmingCharacters(in: .whitespaces)
                    guard FileManager.default.fileExists(atPath: path) else { Output.out("No file \(path)."); continue }
                    images.append(VlmImage(contentsOf: URL(fileURLWithPath: path)))
                    Output.out("Attached \(path) to the next message (\(images.count) image\(images.count == 1 ? "" : "s")).")
                    continue
                }
                if text.hasPrefix("/") {
                    Output.out("Unknown command \(text). Try /help.")
                    continue
                }
            }
            let result: GenerationResult
            let reply = Task { [options, images] in try await RunCommand.stream(prompt: text, images: images, options: options) }
            interrupts.replying(reply)
            do {
                result = try await reply.value
                interrupts.replied()
            } catch let error as RunAnywhereError where error.code == .invalidConfiguration {
                // A message that cannot fit the context even alone: say so, keep the conversation going.
                interrupts.replied()
                Output.error(CLIWords.message(error))
                continue
            } catch let error as RunAnywhereError where error.code == .cancelled {
                interrupts.replied()
                Output.stderr("(reply stopped)")
                continue
            }
            if result.finishReason == .cancelled { Output.stderr("(reply stopped)") }
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

/// What Ctrl-C means in `chat`: during a reply it stops the reply; at the prompt, or a second time within a
/// second, it ends the chat.
final class ChatInterrupts: Sendable {
    private struct State {
        var reply: Task<GenerationResult, any Error>?
        var lastInterrupt = -Double.infinity
    }

    private let state = Mutex(State())

    /// A reply is being written: Ctrl-C cancels it.
    func replying(_ task: Task<GenerationResult, any Error>) { state.withLock { $0.reply = task } }

    /// The reply ended.
    func replied() { state.withLock { $0.reply = nil } }

    /// Handles one SIGINT.
    func interrupted() {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let reply = state.withLock { s -> Task<GenerationResult, any Error>? in
            defer { s.lastInterrupt = now; s.reply = nil }
            return now - s.lastInterrupt < 1 ? nil : s.reply
        }
        guard let reply else {
            FileHandle.standardError.write(Data("\n".utf8))
            _exit(ExitCode.interrupted)  // not exit(): the main thread holds stdin's lock in readLine, which exit() would wait for
        }
        reply.cancel()
    }
}
