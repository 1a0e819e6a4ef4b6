import Foundation
import RunAnywhere

/// `runanywhere models rm ID`.
enum ModelsRemoveCommand: Command {
    static let name = "rm"
    static let summary = "Delete a model's files (unloading it first)"
    static let help = """
        Usage: runanywhere models rm ID [ID...]

        Removes the files and any partial download. A registered model stays registered.
        An imported model (`models import`) loses its link or copy and its registration; the file it was
        imported from (yours, the Hugging Face cache's, Ollama's) is never touched.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments)
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        _ = try args.positional(0, "model id")
        for id in args.positionals {
            let before = await RunAnywhere.models.get(id: id)
            let partial = await RunAnywhere.models.resumableBytes(id: id)
            try await RunAnywhere.models.delete(id: id)
            let name = before?.id ?? id
            if before?.isDownloaded == true {
                Output.out("Deleted \(name).")
            } else if let partial {
                Output.out("Deleted the partial download of \(name) (\(ByteFormatter.string(partial))).")
            } else {
                Output.out("\(name) was not downloaded: nothing to delete.")
            }
        }
        return ExitCode.ok
    }
}
