import Foundation
import RunAnywhere

/// `runanywhere demo`: a tour of the SDK.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "A tour of the SDK on this machine"
    static let help = """
        Usage: runanywhere demo

        Shows the curated catalog and where models are stored.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments)
        if args.wantsHelp { print(help); return ExitCode.ok }
        let models = try await RunAnywhere.models.list()
        print("RunAnywhere \(RunAnywhere.version) — storage root: \(RunAnywhere.models.storageRoot.path)\n")
        print(Output.table(ModelText.header, models.map(ModelText.row)))
        return ExitCode.ok
    }
}
