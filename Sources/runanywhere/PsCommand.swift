import Foundation
import RunAnywhere

/// `runanywhere ps`: what is resident, and the storage.
enum PsCommand: Command {
    static let name = "ps"
    static let summary = "Show loaded models and storage use"
    static let help = """
        Usage: runanywhere ps [--json]

        Models are loaded per process: a separate `runanywhere ps` shows none resident; inside
        `runanywhere chat`, use /ps.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, flags: ["json"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let state = await RunAnywhere.models.state()
        if args.flag("json") {
            try Output.json(state)
        } else {
            Output.out(PsCommandRenderer.render(state, root: RunAnywhere.models.storageRoot))
        }
        return ExitCode.ok
    }
}

/// The text of `ps` (also used by `chat` and `demo`).
enum PsCommandRenderer {
    static func render(_ state: ModelsState, root: URL) -> String {
        var out = ""
        if state.loaded.isEmpty {
            out += "No models loaded in this process.\n"
        } else {
            out += Output.table(["ID", "KIND", "BACKEND", "CONTEXT", "THREADS", "MEMORY", "LOADED IN"], state.loaded.map {
                [$0.id, $0.category.rawValue, $0.backend.rawValue, $0.contextLength > 0 ? "\($0.contextLength)" : "-", $0.threads > 0 ? "\($0.threads)" : "-",
                 ByteFormatter.string($0.memoryBytes), String(format: "%.2f s", $0.loadSeconds)]
            }) + "\n"
            for m in state.loaded {
                if let note = m.backendNote { out += "\(m.id) on \(m.backend.rawValue): \(note)\n" }
            }
        }
        out += "Storage: \(ByteFormatter.string(state.storageUsedBytes)) of models in \(root.path)"
        if let free = state.storageFreeBytes { out += ", \(ByteFormatter.string(free)) free" }
        return out
    }
}
