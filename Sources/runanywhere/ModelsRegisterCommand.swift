import Foundation
import RunAnywhere

/// `runanywhere models register URL`.
enum ModelsRegisterCommand: Command {
    static let name = "register"
    static let summary = "Register a model by URL (a GGUF file or an archive)"
    static let help = """
        Usage: runanywhere models register URL [--id ID] [--name NAME] [--sha256 HEX] [--size BYTES]
                                              [--modality M] [--framework F] [--json] [--force]
                                              [--archive] [--root-dir DIR] [--expected-file NAME]... [--primary-file NAME]

        Without --id a stable id is derived from the URL's file name. Ids are case-insensitive and stored in
        lower case. An id whose model is downloaded from another URL is refused; --force deletes its files first.
        An archive URL (.tar.gz, .tar.bz2, .tar.xz, .tar, .zip) is registered as an archive model; --archive
        says so explicitly. --root-dir names the archive's top folder whose contents become the model folder,
        --expected-file (repeatable) a file that must be there after unpacking, --primary-file the main one.
        --modality (or --category): language, speech-recognition, vision, … (default language);
        --framework: llamaCpp, onnx, … (default llamaCpp).

        Example (a Moonshine speech model in a tar archive):
          runanywhere models register http://mirror/moonshine-base-en.tar --archive --root-dir moonshine-base-en \\
            --modality speech-recognition --framework onnx --expected-file encoder_model.ort \\
            --expected-file decoder_model_merged.ort --expected-file tokens.txt
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["id", "name", "sha256", "size", "category", "modality", "framework",
                                                      "root-dir", "expected-file", "primary-file"],
                                 flags: ["json", "archive", "force"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let url = try args.positional(0, "URL")
        let category = try (args.option("modality") ?? args.option("category")).map(parseCategory) ?? .language
        let framework = try args.option("framework").map { f in
            guard let v = InferenceFramework(rawValue: f) else {
                throw UsageError("unknown framework '\(f)'; one of: \(InferenceFramework.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return v
        } ?? .llamaCpp
        let size = try args.int("size").map(Int64.init)
        let name = args.option("name") ?? URL(string: url)?.lastPathComponent ?? url
        let archiveOptions = ["root-dir", "expected-file", "primary-file"].filter { args.option($0) != nil }
        if args.flag("force"), let id = args.option("id"), let old = await RunAnywhere.models.get(id: id), old.isDownloaded,
           old.artifact.files.first?.url.absoluteString != url {
            // --force: the downloaded files of the id's earlier registration go first, so none is stranded.
            try await RunAnywhere.models.delete(id: id)
        }
        let info: ModelInfo
        if args.flag("archive") || ArchiveFormat(fileName: url) != nil {
            let expected = args.values("expected-file")
            let structure = ArchiveStructure(rootDirectory: args.option("root-dir"), expectedFiles: expected,
                                             primaryFile: args.option("primary-file") ?? expected.first)
            info = try await RunAnywhere.registerModel(archive: url, structure: structure, id: args.option("id"), name: name,
                                                       framework: framework, modality: category, sha256: args.option("sha256"), sizeBytes: size)
        } else {
            if let first = archiveOptions.first { throw UsageError("--\(first) applies to archives; add --archive") }
            info = try await RunAnywhere.registerModel(id: args.option("id"), name: name, url: url, framework: framework,
                                                       modality: category, sha256: args.option("sha256"), sizeBytes: size)
        }
        if args.flag("json") { try Output.json(ModelJSON(info)) } else { Output.out("Registered \(info.id). Download it with `runanywhere models pull \(info.id)`.") }
        return ExitCode.ok
    }

    /// A category by its name (`speechRecognition`) or in kebab case (`speech-recognition`).
    static func parseCategory(_ text: String) throws -> ModelCategory {
        let camel = text.split(separator: "-").enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalized }.joined()
        guard let v = ModelCategory(rawValue: camel) else {
            let names = ModelCategory.allCases.map { $0.rawValue.replacing(/([A-Z])/) { "-" + $0.output.1.lowercased() } }
            throw UsageError("unknown modality '\(text)'; one of: \(names.joined(separator: ", "))")
        }
        return v
    }
}
