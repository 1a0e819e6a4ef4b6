import Foundation
import RunAnywhere

/// `runanywhere models pull ID`: downloads with a progress bar (a TTY) or periodic lines (otherwise).
enum PullCommand: Command {
    static let name = "pull"
    static let summary = "Download a model (resumable; Ctrl-C keeps the partial)"
    static let help = """
        Usage: runanywhere models pull ID [ID...] [--quiet]

        Downloads and verifies the model's files. Interrupted downloads resume when pulled again.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, flags: ["quiet"])
        if args.wantsHelp { print(help); return ExitCode.ok }
        _ = try args.positional(0, "model id")
        for id in args.positionals {
            try await pull(id: id, quiet: args.flag("quiet"))
        }
        return ExitCode.ok
    }

    /// Downloads one model, drawing progress on stderr. Ctrl-C cancels and says how to resume.
    static func pull(id: String, quiet: Bool) async throws {
        let resumable = await RunAnywhere.models.isResumable(id: id)
        let bar = ProgressBar(label: id, enabled: !quiet)
        if resumable && !quiet { Output.stderr("Resuming \(id) from the bytes already on disk.") }
        let task = Task {
            for try await event in try await RunAnywhere.models.download(id: id) {
                switch event {
                case .started(let total, let files, let resumed):
                    bar.start(totalBytes: total, files: files, resumed: resumed)
                case .progress(let p):
                    bar.update(p)
                case .verifying(let name):
                    bar.note("verifying \(name)")
                case .extracting(let name):
                    bar.note("extracting \(name)")
                case .completed(let model):
                    bar.finish("\(model.id) is ready (\(ModelText.size(model.downloadSize)))\(model.localPath.map { " in \($0.path)" } ?? "")")
                    return model
                }
            }
            throw RunAnywhereError(.downloadFailed, "The download of '\(id)' ended without completing.", modelId: id)
        }
        let interrupt = SignalWatch.onInterrupt { task.cancel() }
        defer { interrupt.cancel() }
        do {
            _ = try await task.value
        } catch {
            bar.abort()
            if task.isCancelled {
                throw RunAnywhereError(.cancelled, "Download of '\(id)' interrupted. The partial file is kept: run `runanywhere models pull \(id)` to resume.", modelId: id)
            }
            throw error
        }
    }
}

/// Runs a handler on SIGINT (Ctrl-C) instead of dying, while it is installed.
final class SignalWatch: @unchecked Sendable {  // the source is only resumed and cancelled, both thread-safe
    private let source: any DispatchSourceSignal

    private init(source: any DispatchSourceSignal) { self.source = source }

    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> SignalWatch {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        return SignalWatch(source: source)
    }

    func cancel() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
