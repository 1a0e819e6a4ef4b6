import CMicroHTTPD
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libmicrohttpd underneath the server: it parses HTTP, and hands each request to the ``Router`` on the request's
/// own connection thread (one thread per connection, up to a limit), where the router may block while a model works.
final class MicroHTTPDaemon: @unchecked Sendable {
    // `daemon` is set once in init and cleared once by `stop()` (the server calls it once, after `quiesce()`);
    // the other properties are constants. libmicrohttpd calls back from its own threads.
    private var daemon: OpaquePointer?
    private let router: Router
    private let maxBodyBytes: Int
    /// The port listened on.
    private(set) var port: Int = 0
    /// Requests begun and not yet ended (their responses may still be sending); idle connections do not count.
    let activeRequests = Atomic<Int>(0)

    /// Listens on `address`; throws a message for a person when it cannot (port in use, no such address).
    init(address: inout sockaddr_storage, isIPv6: Bool, router: Router, maxBodyBytes: Int, connectionLimit: Int,
         idleTimeoutSeconds: Int) throws(DaemonStartFailure) {
        self.router = router
        self.maxBodyBytes = maxBodyBytes
        var flags = MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_ITC.rawValue
        if isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        let cls = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &address) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { addr in
                ra_mhd_start(UInt32(flags), addr, accessHandler, requestCompleted, cls,
                             UInt32(max(1, connectionLimit)), UInt32(max(0, idleTimeoutSeconds)))
            }
        }
        guard let started else { throw DaemonStartFailure(errno: errno) }
        daemon = started
        port = Int(ra_mhd_bound_port(started))
    }

    // libmicrohttpd's callbacks hold this object unretained: it must not go away while the daemon runs.
    deinit { stop() }

    /// Stops accepting connections; open ones are still served.
    func quiesce() {
        guard let daemon else { return }
        let listener = MHD_quiesce_daemon(daemon)
        if listener >= 0 { close(listener) }
    }

    /// Closes every connection and stops the daemon's threads (waits for the connection threads to return).
    func stop() {
        guard let daemon else { return }
        self.daemon = nil
        MHD_stop_daemon(daemon)
    }

    fileprivate func handle(_ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
                            uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let raw = state.pointee else {
            // First call: the headers are in, the body (if any) is not.
            let request = PendingRequest()
            activeRequests.add(1, ordering: .sequentiallyConsistent)
            state.pointee = Unmanaged.passRetained(request).toOpaque()
            if let length = header(connection, "Content-Length").flatMap(Int.init), length > maxBodyBytes {
                request.answered = true
                return queue(.error(.tooLarge(limit: maxBodyBytes)), on: connection, request: request)
            }
            return .YES
        }
        let request = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if !request.tooLarge, let upload {
                if request.body.count + uploadSize.pointee > maxBodyBytes {
                    request.tooLarge = true
                    request.body = []
                } else {
                    upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        if request.answered { return .YES }
        request.answered = true
        if request.tooLarge { return queue(.error(.tooLarge(limit: maxBodyBytes)), on: connection, request: request) }
        let fd = ra_mhd_connection_fd(connection)
        var headers: [String: String] = [:]
        for name in ["Authorization", "Content-Type"] { headers[name.lowercased()] = header(connection, name) }
        let exchange = HTTPRequest(method: method, path: url, headers: headers, body: request.body,
                                   clientGone: { fd >= 0 && ra_socket_peer_closed(fd) == 1 })
        request.body = []
        return queue(router.respond(exchange), on: connection, request: request)
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer, request: PendingRequest) -> MHD_Result {
        let made: OpaquePointer?
        let headers: [(String, String)]
        switch response {
        case .full(_, let h, let body):
            headers = h
            made = body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let h, let body):
            headers = h
            request.stream = body
            made = MHD_create_response_from_callback(UInt64.max, 16 * 1024, streamReader,
                                                     Unmanaged.passRetained(StreamBox(body)).toOpaque(), streamFreed)
        }
        guard let made else { return .NO }
        for (name, value) in headers { MHD_add_response_header(made, name, value) }
        let result = MHD_queue_response(connection, UInt32(response.status), made)
        MHD_destroy_response(made)
        return result
    }
}

/// Why the daemon could not start.
struct DaemonStartFailure: Error {
    let errno: Int32
}

/// What is known of a request between libmicrohttpd's calls: the body so far, and its stream once answered.
private final class PendingRequest {
    var body: [UInt8] = []
    var tooLarge = false
    var answered = false
    var stream: (any ResponseStream)?
}

/// Holds a stream for libmicrohttpd's content-reader callbacks.
private final class StreamBox {
    let stream: any ResponseStream
    init(_ stream: any ResponseStream) { self.stream = stream }
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, state in
    guard let cls, let connection, let url, let method, let uploadSize, let state else { return .NO }
    let daemon = Unmanaged<MicroHTTPDaemon>.fromOpaque(cls).takeUnretainedValue()
    return daemon.handle(connection, url: String(cString: url), method: String(cString: method), upload: upload,
                         uploadSize: uploadSize, state: state)
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, _, state, termination in
    guard let cls, let state, let raw = state.pointee else { return }
    state.pointee = nil
    let request = Unmanaged<PendingRequest>.fromOpaque(raw).takeRetainedValue()
    Unmanaged<MicroHTTPDaemon>.fromOpaque(cls).takeUnretainedValue().activeRequests.subtract(1, ordering: .sequentiallyConsistent)
    // A stream that did not reach its end (client gone, error, shutdown): stop its generation.
    if termination != .REQUEST_TERMINATED_COMPLETED_OK { request.stream?.close() }
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -2 }
    let box = Unmanaged<StreamBox>.fromOpaque(cls).takeUnretainedValue()
    let (count, failed) = box.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
    guard let count else { return failed ? -2 : -1 }   // MHD_CONTENT_READER_END_WITH_ERROR / _END_OF_STREAM
    return count
}

private let streamFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<StreamBox>.fromOpaque(cls).takeRetainedValue().stream.close()
}
