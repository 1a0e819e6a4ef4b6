import Foundation
import RunAnywhere

/// Entry point of the `runanywhere` command.
@main
struct CLI {
    static let commands: [any Command.Type] = [
        ModelsCommand.self, RunCommand.self, TranscribeCommand.self, ChatCommand.self, ServeCommand.self, PsCommand.self, BenchCommand.self,
        DemoCommand.self,
    ]

    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        let code = await run(&args)
        exit(code)
    }

    static func run(_ args: inout [String]) async -> Int32 {
        guard let first = args.first else {
            Output.out(usage)
            return ExitCode.usage
        }
        switch first {
        case "--help", "-h", "help":
            Output.out(usage)
            return ExitCode.ok
        case "--version", "-V":
            Output.out("runanywhere \(RunAnywhere.version)")
            return ExitCode.ok
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            Output.error("unknown command '\(first)'. Run `runanywhere --help` for the list of commands.")
            return ExitCode.usage
        }
        args.removeFirst()
        return await Output.guarded { try await command.run(arguments: args) }
    }

    static var usage: String {
        """
        runanywhere \(RunAnywhere.version) — find, download, load and run AI models on this machine.

        Usage: runanywhere <command> [options]

        Commands:
        \(commands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        Options:
          --help, -h     Show help (also after any command: `runanywhere models --help`)
          --version      Print the version

        Environment:
          RUNANYWHERE_HOME   storage root (default $XDG_DATA_HOME/runanywhere or ~/.local/share/runanywhere)
          HF_TOKEN           Hugging Face token for gated repositories
          HF_ENDPOINT        a Hugging Face mirror (e.g. https://hf-mirror.com): huggingface.co downloads go there
          HF_HOME, HF_HUB_CACHE, OLLAMA_MODELS  where `models list --discover` looks for other tools' GGUFs
          RUNANYWHERE_SHERPA_ONNX_LIB  sherpa-onnx's libsherpa-onnx-c-api.so or its folder (speech models)
          RUNANYWHERE_SILERO_VAD       silero_vad.onnx, to cut long audio at silences
          RUNANYWHERE_LLAMACPP_LIB  folder of llama.cpp's libraries (default .runanywhere-deps/llamacpp/lib,
                             filled by scripts/install-llamacpp.sh)
          RUNANYWHERE_REMOTE_URL      an OpenAI-compatible server for `run --backend remote`, `models list --remote`
          RUNANYWHERE_REMOTE_API_KEY  its API key
          NO_COLOR           disable colours

        \(ExitCode.help)
        """
    }
}

/// One CLI command.
protocol Command: Sendable {
    /// The word that selects it.
    static var name: String { get }
    /// One line for `--help`.
    static var summary: String { get }
    /// Runs it; returns the exit code. Throwing a RunAnywhereError prints it and maps it to an exit code.
    static func run(arguments: [String]) async throws -> Int32
}
