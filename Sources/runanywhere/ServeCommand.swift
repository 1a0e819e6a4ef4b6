import Foundation
import RunAnywhere
import RunAnywhereServer

/// `runanywhere serve`: the OpenAI-compatible HTTP server, until SIGINT or SIGTERM.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "Serve the models on disk over an OpenAI-compatible HTTP API"
    static let help = """
        Usage: runanywhere serve [options]

          --host HOST          address to listen on (default 127.0.0.1: this machine only)
          --port PORT          port (default 8080; 0 picks a free one)
          --api-key KEY        require `Authorization: Bearer KEY` on every endpoint but /health
                               (or set RUNANYWHERE_API_KEY, which other users cannot read in `ps`)
          --models-dir DIR     storage root whose downloaded models are served (default $RUNANYWHERE_HOME,
                               else $XDG_DATA_HOME/runanywhere or ~/.local/share/runanywhere)
          --queue-depth N      requests that may wait for a busy model before 429 (default 16)
          --max-body-bytes N   larger request bodies get 413 (default 1048576)
          --max-resident N     keep at most N models loaded, evicting the least recently used
          --memory-budget-mb N keep loaded models within N MiB
          --quiet              no line per request on stderr

        Endpoints: GET /health, GET /v1/models, POST /v1/chat/completions, POST /v1/completions
        (stream: true for server-sent events). Models load on the first request that names them; the server never
        downloads (`runanywhere models pull ID` first). The URL is printed on stdout; SIGINT or SIGTERM lets
        requests in flight finish (up to 10 s), then stops with exit code 0; a second signal stops at once (130).
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["host", "port", "api-key", "models-dir", "queue-depth", "max-body-bytes",
                                                      "max-resident", "memory-budget-mb"], flags: ["quiet"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        guard args.positionals.isEmpty else { throw UsageError("serve takes no arguments (got '\(args.positionals[0])')") }
        var config = ServerConfiguration()
        if let host = args.option("host") { config.host = host }
        if let port = try args.int("port", in: 0...65535) { config.port = port }
        config.apiKey = args.option("api-key") ?? ProcessInfo.processInfo.environment["RUNANYWHERE_API_KEY"]
        if config.apiKey == "" { throw UsageError("--api-key must not be empty") }
        if let depth = try args.int("queue-depth", in: 0...100_000) { config.queueDepth = depth }
        if let limit = try args.int("max-body-bytes", in: 1024...1 << 30) { config.maxBodyBytes = limit }
        RunAnywhere.configure(RunAnywhereConfiguration(
            storageRoot: args.option("models-dir").map { URL(fileURLWithPath: $0, isDirectory: true) },
            memoryBudgetBytes: try args.int("memory-budget-mb", in: 1...1 << 30).map { Int64($0) << 20 },
            maxResidentModels: try args.int("max-resident", in: 1...1000)))

        let signals = TerminationSignals()
        let requestLog: (@Sendable (String) -> Void)? = args.flag("quiet") ? nil : { @Sendable line in Output.stderr(line) }
        let server = try OpenAIServer(sdk: RunAnywhere.shared, configuration: config, log: requestLog)
        if !server.isLoopback && config.apiKey == nil {
            Output.stderr("warning: listening on \(config.host), reachable from other machines, without an API key: anyone who can reach this port can use the models. Set --api-key or RUNANYWHERE_API_KEY.")
        }
        let models = try await RunAnywhere.models.list(filter: ModelFilter(downloadedOnly: true))
            .filter { $0.category == .language || $0.category == .vision }.map(\.id)
        Output.out(server.url.absoluteString)
        Output.stderr("Serving \(models.isEmpty ? "no models yet (runanywhere models pull ID)" : models.joined(separator: ", ")) on \(server.url.absoluteString)/v1 — Ctrl-C stops.")
        let signal = await signals.next()
        Output.stderr("\(signal == SIGINT ? "SIGINT" : "SIGTERM"): finishing \(server.inFlight) request(s) in flight, then stopping (a second signal stops at once).")
        Task {
            _ = await signals.next()
            Output.stderr("second signal: stopping without waiting for requests in flight.")
            exit(ExitCode.interrupted)
        }
        await server.stop(grace: .seconds(10))
        let s = server.statistics
        Output.stderr("Stopped: \(s.completed) completed, \(s.cancelled) cancelled, \(s.refused) refused, \(s.failed) failed.")
        return ExitCode.ok
    }

}

/// SIGINT and SIGTERM, caught from creation on (their default action, ending the process at once, is turned off),
/// so that a signal sent as soon as the server's URL is printed is not lost.
final class TerminationSignals {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init() {
        signal(SIGPIPE, SIG_IGN)
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        sources = [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { continuation.yield(sig) }
            source.resume()
            return source
        }
    }

    /// Waits for the first signal and returns it.
    func next() async -> Int32 {
        for await sig in stream { return sig }
        return SIGTERM
    }

    deinit { sources.forEach { $0.cancel() } }
}
