import Foundation
import RunAnywhere
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `runanywhere models import PATH.gguf`.
enum ModelsImportCommand: Command {
    static let name = "import"
    static let summary = "Register a GGUF file already on this machine (linked, not copied, when possible)"
    static let help = """
        Usage: runanywhere models import PATH.gguf [--id ID] [--copy | --symlink] [--quiet] [--json]

        Registers a GGUF model file already on this machine, after checking its header and recording its SHA-256.
        It is hard-linked into the storage root when both are on one file system (no byte copied), else copied
        (with progress on a terminal). Without --id, the id comes from the file name.

        A file found by `runanywhere models list --discover` (PATH as listed there: a Hugging Face snapshot file,
        an Ollama manifest, or the blob itself) is never copied: hard link, else symbolic link. Its bytes must have
        the SHA-256 its store records; a file of a catalog model becomes that model's download.

          --id ID      the model id (letters, digits, '.', '_', '-')
          --copy       always copy
          --symlink    link to the file instead (nothing copied; the model stops working if the file goes away)
          --quiet      no progress
          --json       print the result as JSON

        `runanywhere models rm ID` removes the link or copy, never the file imported from.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["id"], flags: ["copy", "symlink", "quiet", "json"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let path = try args.positional(0, "PATH of a .gguf file")
        guard args.positionals.count == 1 else { throw UsageError("models import takes one PATH (got \(args.positionals.count))") }
        if args.flag("copy") && args.flag("symlink") { throw UsageError("--copy and --symlink exclude each other") }
        let placements: [LocalImport.Placement]? = args.flag("copy") ? [.copy] : args.flag("symlink") ? [.symlink] : nil
        let file = URL(fileURLWithPath: path)
        let bar = ProgressBar(label: file.lastPathComponent, enabled: Output.stderrIsTTY && !args.flag("quiet") && !args.flag("json"))
        let progress = ImportProgressDisplay(bar: bar)
        let id = args.option("id")
        let task = Task { () throws -> LocalImport in
            if let found = try await discovered(file) {
                return try await RunAnywhere.models.importLocal(found, id: id, placements: placements ?? [.hardLink, .symlink], onProgress: progress.show)
            }
            return try await RunAnywhere.models.importLocal(file: file, id: id, placements: placements ?? [.hardLink, .copy], onProgress: progress.show)
        }
        let interrupt = SignalWatch.onInterrupt { task.cancel() }
        defer { interrupt.cancel() }
        let imported: LocalImport
        do {
            imported = try await task.value
        } catch {
            bar.abort()
            throw error
        }
        bar.abort()
        if args.flag("json") {
            try Output.json(imported)
        } else {
            Output.out(describe(imported))
        }
        return ExitCode.ok
    }

    /// The discovered file `file` names: a listed snapshot file or manifest, or the same file as a listed blob.
    /// - Throws: `.invalidModelFormat` with the reason when discovery passed over that very entry.
    static func discovered(_ file: URL) async throws -> DiscoveredModel? {
        let given = file.standardizedFileURL.path
        func identity(_ path: String) -> [UInt64]? {
            var st = stat()
            return stat(path, &st) == 0 ? [UInt64(truncatingIfNeeded: st.st_dev), UInt64(truncatingIfNeeded: st.st_ino)] : nil
        }
        let mine = identity(given)
        let discovery = await RunAnywhere.models.discoverLocal()
        if let skipped = discovery.skipped.first(where: { $0.path.standardizedFileURL.path == given }) {
            throw RunAnywhereError(.invalidModelFormat, "\(given) cannot be imported: \(skipped.reason)")
        }
        return discovery.models.first { found in
            found.referencePath.standardizedFileURL.path == given || (mine != nil && identity(found.path.path) == mine)
        }
    }

    static func describe(_ imported: LocalImport) -> String {
        let m = imported.model
        let how: String
        switch imported.placement {
        case .hardLink: how = "hard link to \(imported.sourcePath.path), no byte copied"
        case .symlink: how = "symbolic link to \(imported.sourcePath.path), no byte copied"
        case .copy: how = "copied from \(imported.sourcePath.path)"
        }
        let head = imported.wasAlreadyImported ? "\(m.id) was already imported" : "Imported \(m.id)"
        return """
            \(head) (\(how); \(ModelText.size(m.downloadSize)), sha256 \(imported.sha256)).
            Run it: runanywhere run \(m.id) "PROMPT"    Remove it: runanywhere models rm \(m.id) (the original stays)
            """
    }
}

/// Import progress on the progress bar: a line saying what happens, then the bar.
final class ImportProgressDisplay: Sendable {
    private let bar: ProgressBar
    private let lastPhase = Mutex<LocalImportProgress.Phase?>(nil)

    init(bar: ProgressBar) { self.bar = bar }

    var show: @Sendable (LocalImportProgress) -> Void {
        { [self] p in
            let changed = lastPhase.withLock { last in
                defer { last = p.phase }
                return last != p.phase
            }
            if changed {
                let total = p.progress.bytesTotal.map(ByteFormatter.string) ?? "unknown size"
                bar.note(p.phase == .copying ? "Copying \(total)…" : "Computing the SHA-256 of \(total)…")
            }
            bar.update(p.progress)
        }
    }
}
