import Foundation
import RunAnywhere

/// `runanywhere models refresh`.
enum ModelsRefreshCommand: Command {
    static let name = "refresh"
    static let summary = "Reconcile the registry with the files on disk"
    static let help = """
        Usage: runanywhere models refresh [--remote] [--prune] [--no-rescan]

          --remote      also fetch the remote catalog (RUNANYWHERE_CATALOG_URL)
          --prune       drop registry entries whose files are gone
          --no-rescan   do not re-read the disk
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, flags: ["remote", "prune", "no-rescan"])
        if args.wantsHelp { print(help); return ExitCode.ok }
        let r = await RunAnywhere.models.refresh(rescanLocal: !args.flag("no-rescan"), includeRemoteCatalog: args.flag("remote"), pruneOrphans: args.flag("prune"))
        print("\(r.modelCount) models, \(r.downloadedCount) downloaded.")
        if args.flag("remote") { print("Remote catalog: \(r.remoteModels) models.") }
        if !r.recovered.isEmpty { print("Rebuilt manifests: \(r.recovered.joined(separator: ", ")).") }
        if !r.pruned.isEmpty { print("Pruned: \(r.pruned.joined(separator: ", ")).") }
        for (k, v) in r.problems.sorted(by: { $0.key < $1.key }) { Output.stderr("warning: \(k): \(v)") }
        return r.problems["remote catalog"] != nil ? ExitCode.network : ExitCode.ok
    }
}
