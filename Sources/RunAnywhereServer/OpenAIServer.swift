import CMicroHTTPD
import Foundation
import RunAnywhere
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an ``OpenAIServer`` listens and what it accepts. The defaults are safe: loopback only, 1 MiB bodies.
public struct ServerConfiguration: Sendable, Hashable {
    /// The address to listen on: a name or an IPv4/IPv6 literal (default 127.0.0.1, this machine only).
    public var host: String
    /// The port (0 = any free port; ``OpenAIServer/port`` says which).
    public var port: Int
    /// When set, every endpoint but `/health` needs `Authorization: Bearer <apiKey>`.
    public var apiKey: String?
    /// Larger request bodies get 413.
    public var maxBodyBytes: Int
    /// Requests that may wait for a busy model; one more gets 429.
    public var queueDepth: Int
    /// Open connections at most (each has its own thread while open).
    public var connectionLimit: Int
    /// A connection idle this long is closed.
    public var idleTimeoutSeconds: Int

    /// Creates a configuration.
    public init(host: String = "127.0.0.1", port: Int = 8080, apiKey: String? = nil, maxBodyBytes: Int = 1 << 20,
                queueDepth: Int = 16, connectionLimit: Int = 64, idleTimeoutSeconds: Int = 300) {
        self.host = host
        self.port = port
        self.apiKey = apiKey
        self.maxBodyBytes = maxBodyBytes
        self.queueDepth = queueDepth
        self.connectionLimit = connectionLimit
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }
}

/// An OpenAI-compatible HTTP server over an SDK instance: `GET /health`, `GET /v1/models`, `POST /v1/chat/completions`
/// and `POST /v1/completions` (streamed as server-sent events or not), on libmicrohttpd.
///
/// Completions go through `sdk.llm.generateStream`, so models load on demand and stay resident under the SDK's
/// residency policy; requests to one model run one at a time in arrival order; a client that disconnects cancels
/// its generation.
///
/// ```swift
/// let server = try OpenAIServer(sdk: RunAnywhere.shared, configuration: ServerConfiguration(port: 8080))
/// // … curl http://127.0.0.1:8080/v1/models
/// await server.stop()
/// ```
public final class OpenAIServer: Sendable {
    /// The configuration it was started with.
    public let configuration: ServerConfiguration
    /// The port it listens on.
    public let port: Int
    /// Whether it listens on a loopback address only (127.0.0.0/8 or ::1).
    public let isLoopback: Bool
    private let daemon: MicroHTTPDaemon
    private let router: Router
    private let runner: GenerationRunner

    /// Starts listening.
    /// - Parameter log: receives one line per request (method, path, status, seconds; model and tokens for a
    ///   completion), from the connection's thread.
    /// - Throws: `.invalidConfiguration` when the host does not resolve, a value is out of range, or the port cannot
    ///   be listened on (in use, or not allowed).
    public init(sdk: RunAnywhereSDK, configuration: ServerConfiguration, log: (@Sendable (String) -> Void)? = nil) throws {
        guard (0...65535).contains(configuration.port) else {
            throw RunAnywhereError(.invalidConfiguration, "The port must be in 0...65535 (got \(configuration.port)).")
        }
        guard configuration.maxBodyBytes > 0, configuration.queueDepth >= 0 else {
            throw RunAnywhereError(.invalidConfiguration, "The body limit must be positive and the queue depth at least 0.")
        }
        if let key = configuration.apiKey, key.isEmpty {
            throw RunAnywhereError(.invalidConfiguration, "The API key must not be empty.")
        }
        self.configuration = configuration
        var address = sockaddr_storage()
        var ipv6: Int32 = 0, loopback: Int32 = 0
        let rc = ra_resolve_bind_address(configuration.host, UInt16(configuration.port), &address, &ipv6, &loopback)
        guard rc == 0 else {
            throw RunAnywhereError(.invalidConfiguration, "Cannot listen on '\(configuration.host)': \(String(cString: gai_strerror(rc))).")
        }
        isLoopback = loopback != 0
        runner = GenerationRunner(sdk: sdk, queueDepth: configuration.queueDepth)
        router = Router(sdk: sdk, runner: runner, apiKey: configuration.apiKey, log: log)
        do {
            daemon = try MicroHTTPDaemon(address: &address, isIPv6: ipv6 != 0, router: router, maxBodyBytes: configuration.maxBodyBytes,
                                         connectionLimit: configuration.connectionLimit, idleTimeoutSeconds: configuration.idleTimeoutSeconds)
        } catch {
            let reason = error.errno == EADDRINUSE ? "the port is in use" : String(cString: strerror(error.errno))
            throw RunAnywhereError(.invalidConfiguration, "Cannot listen on \(configuration.host):\(configuration.port): \(reason). Choose another port (--port).")
        }
        port = daemon.port
    }

    /// The base URL clients use (`http://host:port`).
    public var url: URL {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return URL(string: "http://\(host):\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// What the server has served so far.
    public var statistics: ServerStatistics { runner.statistics }

    /// Completions running or waiting for their turn.
    public var inFlight: Int { runner.inFlight }

    /// Completions waiting for their model's turn (the others in flight are running or loading their model).
    public var waiting: Int { runner.waiting }

    /// Shuts down: stops accepting connections, answers new requests on open ones with 503, lets in-flight requests
    /// finish for up to `grace`, then cancels those left, and closes every connection.
    public func stop(grace: Duration = .seconds(10)) async {
        router.drain()
        daemon.quiesce()
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while daemon.activeRequests.load(ordering: .sequentiallyConsistent) > 0, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        runner.cancelAll()
        let hardDeadline = clock.now + .seconds(5)
        while daemon.activeRequests.load(ordering: .sequentiallyConsistent) > 0 || runner.inFlight > 0, clock.now < hardDeadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        // MHD_stop_daemon joins the connection threads: wait for it off the Swift concurrency threads.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [daemon] in
                daemon.stop()
                done.resume()
            }
        }
    }
}
