import Foundation
import RunAnywhere

/// `runanywhere models register URL`.
enum ModelsRegisterCommand: Command {
    static let name = "register"
    static let summary = "Register a model by URL (a GGUF file or an archive)"
    static let help = """
        Usage: runanywhere models register URL [--id ID] [--name NAME] [--sha256 HEX] [--size BYTES]
                                              [--category C] [--framework F] [--json]

        Without --id a stable id is derived from the URL's file name.
        An archive URL (.tar.gz, .tar.bz2, .tar.xz, .zip) is registered as an archive model.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["id", "name", "sha256", "size", "category", "framework"], flags: ["json"])
        if args.wantsHelp { print(help); return ExitCode.ok }
        let url = try args.positional(0, "URL")
        let category = try args.option("category").map { c in
            guard let v = ModelCategory(rawValue: c) else { throw UsageError("unknown category '\(c)'") }
            return v
        } ?? .language
        let framework = try args.option("framework").map { f in
            guard let v = InferenceFramework(rawValue: f) else { throw UsageError("unknown framework '\(f)'") }
            return v
        } ?? .llamaCpp
        let size = try args.int("size").map(Int64.init)
        let name = args.option("name") ?? URL(string: url)?.lastPathComponent ?? url
        let info: ModelInfo
        if ArchiveFormat(fileName: url) != nil {
            info = try await RunAnywhere.registerModel(archive: url, structure: ArchiveStructure(), id: args.option("id"), name: name,
                                                       framework: framework, modality: category, sha256: args.option("sha256"), sizeBytes: size)
        } else {
            info = try await RunAnywhere.registerModel(id: args.option("id"), name: name, url: url, framework: framework,
                                                       modality: category, sha256: args.option("sha256"), sizeBytes: size)
        }
        if args.flag("json") { try Output.json(info) } else { print("Registered \(info.id). Download it with `runanywhere models pull \(info.id)`.") }
        return ExitCode.ok
    }
}
