import Foundation
import RunAnywhere

/// `runanywhere models list`.
enum ModelsListCommand: Command {
    static let name = "list"
    static let summary = "List the models the registry knows"
    static let help = """
        Usage: runanywhere models list [--category C] [--framework F] [--downloaded] [--search TEXT] [--json]
               runanywhere models list --discover [--json]

          --category C    only this category: \(ModelCategory.allCases.map(\.rawValue).joined(separator: ", "))
          --framework F   only this framework: \(InferenceFramework.allCases.map(\.rawValue).joined(separator: ", "))
          --downloaded    only models whose files are on disk
          --search TEXT   match id, name or description
          --json          machine-readable output
        \(ModelsDiscoverListing.help)
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["category", "framework", "search"], flags: ["downloaded", "json", "discover"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        guard args.positionals.isEmpty else { throw UsageError("models list takes no arguments (got '\(args.positionals[0])')") }
        if args.flag("discover") {
            if args.flag("downloaded") || ["category", "framework", "search"].contains(where: { args.option($0) != nil }) {
                throw UsageError("--discover lists files other tools keep; it takes only --json")
            }
            return try await ModelsDiscoverListing.run(json: args.flag("json"))
        }
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
}
