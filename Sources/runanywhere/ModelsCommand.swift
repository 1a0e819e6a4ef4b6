import Foundation
import RunAnywhere

/// `runanywhere models <subcommand>`.
enum ModelsCommand: Command {
    static let name = "models"
    static let summary = "List, inspect, download, register, import, refresh and remove models"

    static let subcommands: [any Command.Type] = [
        ModelsListCommand.self, ModelsInfoCommand.self, PullCommand.self, ModelsRegisterCommand.self,
        ModelsRefreshCommand.self, ModelsRemoveCommand.self, ModelsImportCommand.self,
    ]

    static var help: String {
        """
        Usage: runanywhere models <subcommand> [options]

        Subcommands:
        \(subcommands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        Run `runanywhere models <subcommand> --help` for its options.
        """
    }

    static func run(arguments: [String]) async throws -> Int32 {
        guard let first = arguments.first else {
            Output.out(help)
            return ExitCode.usage
        }
        if first == "--help" || first == "-h" {
            Output.out(help)
            return ExitCode.ok
        }
        guard let sub = subcommands.first(where: { $0.name == first }) else {
            throw UsageError("unknown subcommand 'models \(first)'. Run `runanywhere models --help`.")
        }
        return try await sub.run(arguments: Array(arguments.dropFirst()))
    }
}

/// Shared formatting of models for the CLI.
enum ModelText {
    static func size(_ bytes: Int64?) -> String { bytes.map(ByteFormatter.string) ?? "unknown" }

    static func row(_ m: ModelInfo) -> [String] {
        [m.id, m.category.rawValue, m.framework.rawValue, m.quantization ?? "-", size(m.downloadSize), m.isDownloaded ? "yes" : "no", m.name]
    }

    static let header = ["ID", "CATEGORY", "FRAMEWORK", "QUANT", "SIZE", "DOWNLOADED", "NAME"]
}
