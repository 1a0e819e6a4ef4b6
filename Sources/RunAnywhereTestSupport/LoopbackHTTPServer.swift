import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A small HTTP/1.1 server on `127.0.0.1` (port chosen by the system) whose routes are scripted
/// per test to serve files or to misbehave: ranges, validators, dropped or stalled connections,
/// corrupted bodies, status sequences, redirects, bandwidth caps.
///
/// Every request is recorded (method, path, headers) so a test can assert what a client sent.
/// Each connection is served on its own thread and answered with `Connection: close`, unless
/// ``keepsConnectionsAlive`` is set.
///
/// ```swift
/// let server = try LoopbackHTTPServer()
/// defer { server.stop() }
/// server.setRoute("/model.bin", LoopbackRoute(body: bytes, etag: "\"v1\"", plan: [.dropAfter(bytes: 1000)]))
/// let url = server.url("/model.bin")
/// ```
public final class LoopbackHTTPServer: Sendable {
    private let core: LoopbackServerCore

    /// The port the server listens on.
    public var port: Int { core.port }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(core.port)")! }

    /// Starts a server listening on `127.0.0.1`, port 0 (the system picks a free port).
    /// - Throws: a `POSIXError` when the socket cannot be created, bound or listened on.
    public init(routes: [String: LoopbackRoute] = [:]) throws {
        core = try LoopbackServerCore(routes: routes)
        core.start()
    }

    deinit { core.stop() }

    /// The absolute URL of `path` on this server (`path` starts with `/`; characters a URL cannot hold are
    /// percent-encoded).
    public func url(_ path: String) -> URL {
        if let url = URL(string: "http://127.0.0.1:\(core.port)\(path)") { return url }
        let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
        return URL(string: "http://127.0.0.1:\(core.port)\(encoded)") ?? baseURL
    }

    /// Adds or replaces the route for `path` (matched exactly, then without the query string).
    public func setRoute(_ path: String, _ route: LoopbackRoute) {
        core.state.withLock { $0.routes[path] = route }
    }

    /// Removes the route for `path` and every route whose path starts with `path` (long campaigns free their bodies).
    public func removeRoutes(withPrefix path: String) {
        core.state.withLock { s in
            for key in s.routes.keys where key.hasPrefix(path) { s.routes[key] = nil }
        }
    }

    /// Whether a connection whose file or range was sent whole stays open for the client's next request
    /// (HTTP/1.1 keep-alive; default false: every answer closes its connection).
    public var keepsConnectionsAlive: Bool {
        get { core.keepsConnectionsAlive }
        set { core.keepAlive.store(newValue, ordering: .sequentiallyConsistent) }
    }

    /// Connections accepted since the server started.
    public var acceptedConnectionCount: Int { core.accepted.load(ordering: .sequentiallyConsistent) }

    /// Whether requests are recorded (default true); long runs turn it off so memory stays flat.
    public var recordsRequests: Bool {
        get { core.state.withLock { $0.recordsRequests } }
        set { core.state.withLock { $0.recordsRequests = newValue } }
    }

    /// The current state of the route for `path` (its plan shrinks as requests consume it).
    public func route(_ path: String) -> LoopbackRoute? {
        core.state.withLock { $0.routes[path] }
    }

    /// Every request received so far, in order of arrival.
    public var requests: [LoopbackRequest] {
        core.state.withLock { $0.requests }
    }

    /// The requests received for `path`, in order of arrival.
    public func requests(to path: String) -> [LoopbackRequest] {
        requests.filter { $0.path == path || $0.path.hasPrefix(path + "?") }
    }

    /// Forgets the recorded requests.
    public func clearRequests() {
        core.state.withLock { $0.requests.removeAll() }
    }

    /// The number of connections currently being served.
    public var openConnectionCount: Int {
        core.state.withLock { $0.openConnections.count }
    }

    /// Stops accepting, interrupts every connection (including stalled ones), waits for all
    /// server threads to finish and closes every socket. Safe to call more than once.
    public func stop() {
        core.stop()
    }
}

/// The part of the server that its threads hold on to.
final class LoopbackServerCore: Sendable {
    struct State {
        var routes: [String: LoopbackRoute]
        var requests: [LoopbackRequest] = []
        var recordsRequests = true
        var openConnections: Set<Int32> = []
        var isStopped = false
    }

    let port: Int
    let listenFD: Int32
    let state: Mutex<State>
    let isStopping = Atomic<Bool>(false)
    let keepAlive = Atomic<Bool>(false)
    let accepted = Atomic<Int>(0)
    let threads = DispatchGroup()

    init(routes: [String: LoopbackRoute]) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listenFD = fd
        state = Mutex(State(routes: routes))
    }

    func start() {
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop()
            threads.leave()
        }
        thread.name = "LoopbackHTTPServer.accept"
        thread.start()
    }

    func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.isStopped = true }
            return !s.isStopped
        }
        guard first else { return }
        isStopping.store(true, ordering: .sequentiallyConsistent)
        // Wake blocked reads; threads notice `isStopping` within one poll interval.
        state.withLock { s in for fd in s.openConnections { shutdown(fd, Int32(SHUT_RDWR)) } }
        _ = threads.wait(timeout: .now() + 10)
    }

    var stopping: Bool { isStopping.load(ordering: .sequentiallyConsistent) }
    var keepsConnectionsAlive: Bool { keepAlive.load(ordering: .sequentiallyConsistent) }

    private func acceptLoop() {
        defer { close(listenFD) }
        while !stopping {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, 50)
            guard ready > 0 else { continue }
            let fd = accept(listenFD, nil, nil)
            guard fd >= 0 else { continue }
            accepted.add(1, ordering: .sequentiallyConsistent)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            state.withLock { _ = $0.openConnections.insert(fd) }
            threads.enter()
            let thread = Thread { [self] in
                let connection = LoopbackConnection(fd: fd, core: self)
                connection.serve()
                state.withLock { _ = $0.openConnections.remove(fd) }
                connection.closeSocket()
                threads.leave()
            }
            thread.name = "LoopbackHTTPServer.connection"
            thread.start()
        }
    }

    /// Records the request and takes the next action of its route.
    func take(_ request: LoopbackRequest) -> (LoopbackRoute, LoopbackAction)? {
        state.withLock { s in
            if s.recordsRequests { s.requests.append(request) }
            var key = request.path
            if s.routes[key] == nil, let q = key.firstIndex(of: "?") { key = String(key[..<q]) }
            guard var route = s.routes[key] else { return nil }
            let action = route.plan.isEmpty ? route.fallback : route.plan.removeFirst()
            if case .replaceResource(let body, let etag) = action {
                route.body = body
                route.etag = etag
            }
            s.routes[key] = route
            return (route, action)
        }
    }
}
