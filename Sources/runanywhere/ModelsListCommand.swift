import Foundation
import RunAnywhere
import RunAnywhereRemote

/// `runanywhere models list`.
enum ModelsListCommand: Command {
    static let name = "list"
    static let summary = "List the models the registry knows"
    static let help = """
        Usage: runanywhere models list [--category C] [--framework F] [--downloaded] [--search TEXT] [--json]
               runanywhere models list --discover [--json]
               runanywhere models list --remote [--remote-url URL] [--api-key KEY] [--json]

          --category C    only this category: \(ModelCategory.allCases.map(\.rawValue).joined(separator: ", "))
          --framework F   only this framework: \(InferenceFramework.allCases.map(\.rawValue).joined(separator: ", "))
          --downloaded    only models whose files are on disk
          --search TEXT   match id, name or description
          --json          machine-readable output
          --remote        list what the remote server serves (its /v1/models) instead of the registry
        \(RemoteOptions.help)
        \(ModelsDiscoverListing.help)
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: Set(["category", "framework", "search"]).union(RemoteOptions.valued),
                                 flags: ["downloaded", "json", "discover", "remote"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        guard args.positionals.isEmpty else { throw UsageError("models list takes no arguments (got '\(args.positionals[0])')") }
        if args.flag("discover") {
            if args.flag("downloaded") || args.flag("remote") || ["category", "framework", "search"].contains(where: { args.option($0) != nil }) {
                throw UsageError("--discover lists files other tools keep; it takes only --json")
            }
            return try await ModelsDiscoverListing.run(json: args.flag("json"))
        }
        if args.flag("remote") { return try await listRemote(args) }
        var filter = ModelFilter(search: args.option("search"))
        if let c = args.option("category") {
            guard let cat = ModelCategory(rawValue: c) else { throw UsageError("unknown category '\(c)'; one of: \(ModelCategory.allCases.map(\.rawValue).joined(separator: ", "))") }
            filter.category = cat
        }
        if let f = args.option("framework") {
            guard let fw = InferenceFramework(rawValue: f) else { throw UsageError("unknown framework '\(f)'; one of: \(InferenceFramework.allCases.map(\.rawValue).joined(separator: ", "))") }
            filter.framework = fw
        }
        if args.flag("downloaded") { filter.downloadedOnly = true }
        let models = try await RunAnywhere.models.list(filter: filter)
        if args.flag("json") {
            try Output.json(models.map { ModelJSON($0) })
        } else if models.isEmpty {
            Output.out("No models match.")
        } else {
            Output.out(Output.table(ModelText.header, models.map(ModelText.row)))
            if models.contains(where: { $0.downloadSize == nil && !$0.isDownloaded }) {
                Output.stderr("(SIZE unknown: `runanywhere models refresh --remote` or `models info ID` asks the servers when online.)")
            }
        }
        return ExitCode.ok
    }

    /// `models list --remote`: the ids of the server's `/v1/models`.
    static func listRemote(_ args: Arguments) async throws -> Int32 {
        let endpoint = try RemoteOptions.require(args)
        let ids = try await RemoteBackend(endpoint: endpoint).serverModels()
        if args.flag("json") {
            try Output.json(ids)
        } else if ids.isEmpty {
            Output.out("The server lists no models.")
        } else {
            Output.out(Output.table(["SERVER MODEL"], ids.map { [$0] }))
            Output.stderr("Use one with: runanywhere run ID \"PROMPT\" --backend remote --server-model NAME")
        }
        return ExitCode.ok
    }
}
