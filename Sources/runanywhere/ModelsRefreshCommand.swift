import Foundation
import RunAnywhere

/// `runanywhere models refresh`.
enum ModelsRefreshCommand: Command {
    static let name = "refresh"
    static let summary = "Reconcile the registry with the files on disk"
    static let help = """
        Usage: runanywhere models refresh [--remote] [--prune] [--no-rescan]

          --remote      also fetch the remote catalog (RUNANYWHERE_CATALOG_URL) and ask the servers the download
                        sizes that are not known yet (kept; `models list` shows them)
          --prune       drop registry entries whose files are gone
          --no-rescan   do not re-read the disk

        Re-reading the disk also removes files in a model's folder that its manifest does not list (left by an
        earlier registration of the id with other files); `runanywhere ps` counts only the models' own files.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, flags: ["remote", "prune", "no-rescan"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let r = await RunAnywhere.models.refresh(rescanLocal: !args.flag("no-rescan"), includeRemoteCatalog: args.flag("remote"), pruneOrphans: args.flag("prune"))
        Output.out("\(r.modelCount) models, \(r.downloadedCount) downloaded.")
        if args.flag("remote") {
            Output.out("Remote catalog: \(r.remoteModels) models.")
            let sizes = await RunAnywhere.models.learnDownloadSizes()
            if !sizes.isEmpty { Output.out("Learnt the download size of \(sizes.count) model\(sizes.count == 1 ? "" : "s"): \(sizes.keys.sorted().joined(separator: ", ")).") }
        }
        if !r.recovered.isEmpty { Output.out("Rebuilt manifests: \(r.recovered.joined(separator: ", ")).") }
        if !r.removedStrayFiles.isEmpty { Output.out("Removed stray files: \(r.removedStrayFiles.joined(separator: ", ")).") }
        if !r.pruned.isEmpty { Output.out("Pruned: \(r.pruned.joined(separator: ", ")).") }
        for (k, v) in r.problems.sorted(by: { $0.key < $1.key }) { Output.stderr("warning: \(k): \(Redact.text(CLIWords.text(v)))") }
        return r.problems["remote catalog"] != nil ? ExitCode.network : ExitCode.ok
    }
}
