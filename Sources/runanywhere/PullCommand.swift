import Foundation
import RunAnywhere
import Synchronization

/// `runanywhere models pull ID`: downloads with a progress bar (a TTY) or periodic lines (otherwise).
enum PullCommand: Command {
    static let name = "pull"
    static let summary = "Download a model (resumable; Ctrl-C keeps the partial)"
    static let help = """
        Usage: runanywhere models pull ID [ID...] [--quiet]

        Downloads and verifies the model's files (their SHA-256 when one is known). Ctrl-C stops and keeps every
        byte received: pulling again resumes from there (a second Ctrl-C exits at once). With several ids each is
        tried and reported; the exit code is that of the first failure. A server that refuses the connection fails
        at once; one that does not answer fails after 30 s.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, flags: ["quiet"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        _ = try args.positional(0, "model id")
        guard args.positionals.count > 1 else {
            try await pull(id: args.positionals[0], quiet: args.flag("quiet"))
            return ExitCode.ok
        }
        // Several ids: try each, report each, exit with the first failure's code.
        var failed: [(String, Int32)] = []
        for id in args.positionals {
            do {
                try await pull(id: id, quiet: args.flag("quiet"))
            } catch let error as RunAnywhereError where error.code == .cancelled {
                throw error
            } catch {
                failed.append((id, Output.report(error)))
            }
        }
        if failed.isEmpty { return ExitCode.ok }
        Output.stderr("\(args.positionals.count - failed.count) of \(args.positionals.count) pulled; failed: \(failed.map(\.0).joined(separator: ", ")).")
        return failed[0].1
    }

    /// Downloads one model, drawing progress on stderr. Ctrl-C cancels and says how to resume.
    static func pull(id: String, quiet: Bool) async throws {
        let resumable = await RunAnywhere.models.isResumable(id: id)
        let bar = ProgressBar(label: id, enabled: !quiet)
        let learntSize = await RunAnywhere.models.get(id: id)?.downloadSize  // shown until the server says
        if resumable && !quiet { Output.stderr("Resuming \(id) from the bytes already on disk.") }
        let task = Task {
            for try await event in try await RunAnywhere.models.download(id: id) {
                switch event {
                case .started(let total, let files, let resumed):
                    bar.start(totalBytes: total ?? learntSize, files: files, resumed: resumed)
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
        // Ctrl-C stops the download and waits until its bytes are flushed and recorded, so the next pull resumes
        // from all of them; a second Ctrl-C exits at once.
        let interrupted = Flag()
        let interrupt = SignalWatch.onInterrupt {
            guard interrupted.raise() else { _exit(ExitCode.interrupted) }
            Task {
                await RunAnywhere.models.cancelDownload(id: id)
                task.cancel()
            }
        }
        defer { interrupt.cancel() }
        do {
            _ = try await task.value
        } catch {
            bar.abort()
            if interrupted.isRaised {
                throw RunAnywhereError(.cancelled, "Download of '\(id)' interrupted. The partial file is kept: run `runanywhere models pull \(id)` to resume.", modelId: id)
            }
            throw error
        }
    }
}

/// A flag raised once, from any thread.
final class Flag: Sendable {
    private let raised = Mutex(false)

    /// Raises it; false when it was already raised.
    func raise() -> Bool { raised.withLock { was in defer { was = true }; return !was } }
    /// Lowers it again.
    func lower() { raised.withLock { $0 = false } }
    /// Whether it is raised.
    var isRaised: Bool { raised.withLock { $0 } }
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
