import Foundation
import RunAnywhere
import RunAnywhereRemote

/// `runanywhere models list`.
enum ModelsListCommand: Command {
    static let name = "list"
    static let summary = "List the models the registry knows"
    static let help = """
        Usage: runanywhere models list [--category C] [--framework F] [--downloaded] [--search TEXT] [--json]
               runanywhere models list --remote [--remote-url URL] [--api-key KEY] [--json]

          --category C    only this category: \(ModelCategory.allCases.map(\.rawValue).joined(separator: ", "))
          --framework F   only this framework: \(InferenceFramework.allCases.map(\.rawValue).joined(separator: ", "))
          --downloaded    only models whose files are on disk
          --search TEXT   match id, name or description
          --json          machine-readable output
          --remote        list what the remote server serves (its /v1/models) instead of the registry
        \(RemoteOptions.help)
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: Set(["category", "framework", "search"]).union(RemoteOptions.valued),
                                 flags: ["downloaded", "json", "remote"])
        if args.wantsHelp { print(help); return ExitCode.ok }
        guard args.positionals.isEmpty else { throw UsageError("models list takes no arguments (got '\(args.positionals[0])')") }
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
            try Output.json(models)
        } else if models.isEmpty {
            print("No models match.")
        } else {
            print(Output.table(ModelText.header, models.map(ModelText.row)))
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
            print("The server lists no models.")
        } else {
            print(Output.table(["SERVER MODEL"], ids.map { [$0] }))
            Output.stderr("Use one with: runanywhere run ID \"PROMPT\" --backend remote --server-model NAME")
        }
        return ExitCode.ok
    }
}
