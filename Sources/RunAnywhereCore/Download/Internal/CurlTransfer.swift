import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives one response of a ``CurlTransfer``. Called on the transfer's thread, one call at a time.
package protocol TransferSink: AnyObject {
    /// The final response's status and headers (2xx or 416), before any body byte.
    /// Return `true` to receive the body, `false` to end the transfer here without error.
    /// Throwing ends the transfer and the error is rethrown by ``CurlTransfer/perform(_:options:sink:cancellation:)``.
    func receive(head: HTTPResponseHead) throws -> Bool
    /// The next bytes of the body. Throwing ends the transfer and the error is rethrown.
    func receive(body: UnsafeRawBufferPointer) throws
}

/// A libcurl handle kept by one thread across its requests, so that consecutive requests to one server go
/// over the connection (and TLS session) the last one left open instead of opening another: a segmented
/// download's worker asks for range after range. Use from one thread at a time.
package final class CurlConnection {
    fileprivate let easy: UnsafeMutableRawPointer
    fileprivate let multi: UnsafeMutableRawPointer

    /// - Throws: `TransferError.transient` when libcurl cannot create its handles.
    package init() throws {
        guard CurlGlobal.ensureInitialized(), let easy = curl_easy_init() else {
            throw TransferError.transient(reason: "libcurl could not create a transfer handle.", retryAfter: nil)
        }
        guard let multi = curl_multi_init() else {
            curl_easy_cleanup(easy)
            throw TransferError.transient(reason: "libcurl could not create a transfer handle.", retryAfter: nil)
        }
        self.easy = easy
        self.multi = multi
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
    }
}

/// Timeouts and limits of one transfer.
package struct TransferOptions: Sendable, Hashable {
    /// Seconds allowed to establish the connection.
    package var connectTimeout: Double = 30
    /// A transfer that receives no byte for this many seconds fails (transiently).
    package var stallTimeout: Double = 60
    /// Redirects followed before giving up.
    package var maxRedirects: Int = 10
    /// The `User-Agent` sent.
    package var userAgent: String = RunAnywhereSDK.userAgent
    /// Hand every final response to the sink, errors (4xx, 5xx) included, instead of classifying them here
    /// (an API client reads the server's error document itself).
    package var deliversErrorResponses: Bool = false

    package init(connectTimeout: Double = 30, stallTimeout: Double = 60, maxRedirects: Int = 10, deliversErrorResponses: Bool = false) {
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.maxRedirects = maxRedirects
        self.deliversErrorResponses = deliversErrorResponses
    }
}

/// What happened to a transfer, for callers that must know whether a failed request reached the server (an API
/// client repeats only a request that never did).
package final class TransferReport: @unchecked Sendable {
    /// Whether a connection to the server was made (so the request may have been sent).
    package var connected = false
    /// Whether the transfer ended because no byte arrived within the stall timeout.
    package var stalled = false
    /// libcurl's own words for the failure ("Failed to connect to … port …"), else empty.
    package var detail = ""

    package init() {}
}

/// One HTTP request through libcurl (a GET, or a POST of ``HTTPRequest/body``), blocking the calling thread (use ``BlockingWork`` from async code).
///
/// Redirects are followed here, not by libcurl, so `Authorization` goes only to the origin it was
/// given for. Only http and https are spoken. The body streams into a ``TransferSink`` in small
/// buffers; nothing is held in memory. Failures are thrown as ``TransferError`` (transient,
/// permanent or cancelled); errors the sink throws come out unchanged.
package enum CurlTransfer {
    /// How often the transfer loop looks at the cancellation flag and the stall clock.
    static let pollIntervalMilliseconds: Int32 = 50

    /// Performs `request`, following redirects, and returns the final response head. With `connection`,
    /// its handle (and the connections it keeps open) is used instead of fresh ones.
    package static func perform(
        _ request: HTTPRequest,
        options: TransferOptions = TransferOptions(),
        sink: any TransferSink,
        cancellation: CancellationFlag,
        connection: CurlConnection? = nil,
        shouldContinue: (() -> Bool)? = nil,
        report: TransferReport? = nil
    ) throws -> HTTPResponseHead {
        guard CurlGlobal.ensureInitialized() else {
            throw TransferError.permanent(RunAnywhereError(.downloadFailed, "libcurl could not be initialised."))
        }
        guard let origin = URLOrigin(request.url), request.url.isHTTPOrHTTPS else {
            throw TransferError.permanent(RunAnywhereError(.invalidConfiguration,
                "Cannot download \(request.url.absoluteString): only http and https URLs are supported."))
        }
        // One handle for every hop, so a redirect to the same server reuses the connection.
        let handle = try connection ?? CurlConnection()
        var url = request.url
        var hops: [HTTPResponseHead] = []
        for _ in 0...options.maxRedirects {
            if cancellation.isCancelled { throw TransferError.cancelled }
            let sendAuthorization = request.authorization != nil && URLOrigin(url) == origin
            let outcome = try performOnce(request, url: url, sendAuthorization: sendAuthorization, redirects: hops,
                                          options: options, sink: sink, cancellation: cancellation,
                                          connection: handle, shouldContinue: shouldContinue, report: report)
            switch outcome {
            case .finished(let head):
                return head
            case .redirect(let head, let location):
                guard request.body == nil else {
                    throw TransferError.permanent(RunAnywhereError(.invalidConfiguration,
                        "\(url.absoluteString) redirected a POST to '\(withoutCredentials(location))'; use the final URL."))
                }
                guard let next = URL(string: location, relativeTo: url)?.absoluteURL,
                      next.isHTTPOrHTTPS, next.host != nil else {
                    throw TransferError.permanent(RunAnywhereError(.downloadFailed,
                        "\(url.absoluteString) redirected to '\(withoutCredentials(location))', which is not an http or https URL."))
                }
                // Credentials a server puts into a redirect would be sent on by libcurl as Basic auth: refuse.
                guard next.user == nil, next.password == nil else {
                    throw TransferError.permanent(RunAnywhereError(.downloadFailed,
                        "\(url.absoluteString) redirected to '\(withoutCredentials(location))', a URL carrying credentials; refusing to follow it."))
                }
                hops.append(head)
                url = next
            }
        }
        throw TransferError.permanent(RunAnywhereError(.downloadFailed,
            "Too many redirects (more than \(options.maxRedirects)) starting at \(request.url.absoluteString)."))
    }

    /// `location` with any `user:password@` part removed, for messages.
    package static func withoutCredentials(_ location: String) -> String {
        guard var parts = URLComponents(string: location) else {
            return location.contains("@") ? "(a URL with credentials)" : location
        }
        guard parts.user != nil || parts.password != nil else { return location }
        parts.user = nil
        parts.password = nil
        return parts.string ?? "(a URL with credentials)"
    }

    private enum Outcome {
        case finished(HTTPResponseHead)
        case redirect(HTTPResponseHead, location: String)
    }

    // swiftlint:disable:next function_body_length
    private static func performOnce(
        _ request: HTTPRequest, url: URL, sendAuthorization: Bool, redirects: [HTTPResponseHead],
        options: TransferOptions, sink: any TransferSink, cancellation: CancellationFlag, connection: CurlConnection,
        shouldContinue: (() -> Bool)?, report: TransferReport?
    ) throws -> Outcome {
        // A reset handle forgets every option of the last request but keeps its open connections.
        let easy = connection.easy, multi = connection.multi
        curl_easy_reset(easy)

        let context = TransferContext(url: url, redirects: redirects, sink: sink, cancellation: cancellation,
                                      deliversErrors: options.deliversErrorResponses)
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }

        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        var lines = request.headers.filter { $0.key.lowercased() != "authorization" }.map { "\($0.key): \($0.value)" }
        if sendAuthorization, let authorization = request.authorization { lines.append("Authorization: \(authorization)") }
        if let start = request.rangeStart {
            lines.append("Range: bytes=\(start)-\(request.rangeEnd.map(String.init) ?? "")")
            if let validator = request.ifRange { lines.append("If-Range: \(validator)") }
        }
        lines.append("Accept-Encoding: identity")
        if request.body != nil, !request.headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            lines.append("Content-Type: application/json")
        }
        for line in lines { headerList = curl_slist_append(headerList, line) }

        var setup = CURLE_OK
        func set(_ code: CURLcode) { if setup == CURLE_OK { setup = code } }
        set(ra_curl_setopt_string(easy, CURLOPT_URL, url.absoluteString))
        set(ra_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(ra_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        set(ra_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        set(ra_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(options.connectTimeout * 1000))))
        set(ra_curl_setopt_long(easy, CURLOPT_BUFFERSIZE, 256 * 1024))
        set(ra_curl_setopt_string(easy, CURLOPT_USERAGENT, options.userAgent))
        set(ra_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))
        set(ra_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        set(ra_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, contextPointer))
        set(ra_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, contextPointer))
        set(ra_curl_setopt_pointer(easy, CURLOPT_XFERINFODATA, contextPointer))
        if let body = request.body {
            // libcurl copies the body (COPYPOSTFIELDS reads POSTFIELDSIZE first), so it need not outlive this call.
            set(ra_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            (body.isEmpty ? Data([0]) : body).withUnsafeBytes { bytes in
                set(ra_curl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress)))
            }
        }
        set(ra_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
        set(ra_curl_setopt_header_cb(easy) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
            return context.header(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
        })
        set(ra_curl_setopt_write_cb(easy) { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
            return context.body(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
        })
        set(ra_curl_setopt_xferinfo_cb(easy) { userdata, _, _, _, _ in
            guard let userdata else { return 1 }
            let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
            return context.cancellation.isCancelled ? 1 : 0
        })
        guard setup == CURLE_OK else {
            throw TransferError.permanent(RunAnywhereError(.downloadFailed,
                "libcurl rejected an option for \(url.absoluteString): \(String(cString: curl_easy_strerror(setup)))."))
        }

        // Drive the transfer ourselves so cancellation and stalls are noticed within one poll interval.
        guard curl_multi_add_handle(multi, easy) == CURLM_OK else {
            throw TransferError.transient(reason: "libcurl could not start the transfer of \(url.absoluteString).", retryAfter: nil)
        }
        defer { curl_multi_remove_handle(multi, easy) }
        var result = CURLE_OK
        var finished = false
        var stalled = false
        var running: Int32 = 1
        while true {
            let code = curl_multi_perform(multi, &running)
            if code != CURLM_OK {
                throw TransferError.transient(reason: "libcurl failed while transferring \(url.absoluteString): \(String(cString: curl_multi_strerror(code))).", retryAfter: nil)
            }
            if ra_curl_multi_next_result(multi, &result) != 0 { finished = true; break }
            if running == 0 { break }
            if cancellation.isCancelled || context.abortReason != nil { break }
            if let shouldContinue, !shouldContinue() { cancellation.cancel(); break }
            if monotonicSeconds() - context.lastActivity > options.stallTimeout { stalled = true; break }
            _ = curl_multi_poll(multi, nil, 0, pollIntervalMilliseconds, nil)
        }

        if let report {
            var connectTime: curl_off_t = 0
            _ = ra_curl_getinfo_off(easy, CURLINFO_CONNECT_TIME_T, &connectTime)
            report.connected = report.connected || connectTime > 0 || context.head != nil
            report.stalled = stalled
            report.detail = finished && result != CURLE_OK ? String(cString: errorBuffer) : ""
        }
        if let error = context.sinkError { throw error }
        if cancellation.isCancelled { throw TransferError.cancelled }
        if stalled {
            throw TransferError.transient(reason: "No data arrived from \(url.host ?? "the server") for \(Int(options.stallTimeout.rounded())) s while downloading \(url.absoluteString).", retryAfter: nil)
        }
        if let head = context.head {
            switch context.disposition {
            case .redirect(let location): return .redirect(head, location: location)
            case .errorBody:
                let text = String(decoding: context.errorBody, as: UTF8.self)
                throw classify(status: head.status, url: url, retryAfter: head.header("retry-after"), detail: text)
            case .stop: return .finished(head)
            case .body, .awaitingHead: break
            }
        }
        if finished, result == CURLE_OK, let head = context.head { return .finished(head) }
        if finished, result == CURLE_WRITE_ERROR, context.disposition == .stop, let head = context.head { return .finished(head) }
        var osErrno = 0
        _ = ra_curl_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        let detail = String(cString: errorBuffer)
        if !finished {
            throw TransferError.transient(reason: "The transfer of \(url.absoluteString) ended without a result.", retryAfter: nil)
        }
        if result == CURLE_OK {
            throw TransferError.transient(reason: "\(url.absoluteString) answered without an HTTP response.", retryAfter: nil)
        }
        throw classify(curlCode: result, osErrno: Int32(osErrno), url: url, detail: detail)
    }

    /// Classifies an HTTP error status.
    package static func classify(status: Int, url: URL, retryAfter: String?, detail: String = "") -> TransferError {
        let host = url.host ?? "the server"
        let said = detail.trimmingCharacters(in: .whitespacesAndNewlines).prefix(200)
        let serverSays = said.isEmpty ? "" : " The server said: \(said)"
        switch status {
        case 401, 403:
            return .permanent(RunAnywhereError(.authenticationRequired,
                "\(host) refused access to \(url.absoluteString) (HTTP \(status)). The model may be gated or private: accept its terms on the website and set a token with RunAnywhere.setHfToken(_:).\(serverSays)"))
        case 404, 410:
            return .permanent(RunAnywhereError(.downloadFailed,
                "Nothing found at \(url.absoluteString) (HTTP \(status)). Check the model's URL or register it again.\(serverSays)"))
        case 408, 425, 429, 500...599:
            return .transient(reason: "\(host) answered HTTP \(status) for \(url.absoluteString).\(serverSays)",
                              retryAfter: parseRetryAfter(retryAfter))
        default:
            return .permanent(RunAnywhereError(.downloadFailed,
                "\(host) answered HTTP \(status) for \(url.absoluteString).\(serverSays)"))
        }
    }

    /// Classifies a libcurl failure.
    package static func classify(curlCode: CURLcode, osErrno: Int32, url: URL, detail: String) -> TransferError {
        let host = url.host ?? "the server"
        let what = detail.isEmpty ? String(cString: curl_easy_strerror(curlCode)) : detail
        switch curlCode {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .permanent(RunAnywhereError(.networkUnavailable,
                "Could not resolve \(host) (\(what)). Check the network connection."))
        case CURLE_COULDNT_CONNECT where [ENETUNREACH, EHOSTUNREACH, ENETDOWN].contains(osErrno):
            return .permanent(RunAnywhereError(.networkUnavailable,
                "No route to \(host) (\(what)). Check the network connection."))
        case CURLE_COULDNT_CONNECT where osErrno == ECONNREFUSED:
            let port = url.port.map { ":\($0)" } ?? ""
            return .transient(reason: "\(host)\(port) \(TransferError.refusedPhrase) (nothing is listening there). Check the URL, or that the server is running.", retryAfter: nil)
        case CURLE_OPERATION_TIMEDOUT where detail.lowercased().contains("connect"):
            return .transient(reason: "\(host) did not answer within the connect timeout of \(Int(TransferOptions().connectTimeout)) s. Check the network connection.", retryAfter: nil)
        case CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE,
             CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SSL_CONNECT_ERROR, CURLE_WEIRD_SERVER_REPLY,
             CURLE_AGAIN:
            return .transient(reason: "The connection to \(host) failed while downloading \(url.absoluteString): \(what).", retryAfter: nil)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .permanent(RunAnywhereError(.invalidConfiguration, "Cannot download \(url.absoluteString): \(what)."))
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        default:
            return .permanent(RunAnywhereError(.downloadFailed,
                "Downloading \(url.absoluteString) failed: \(what) (libcurl code \(curlCode.rawValue))."))
        }
    }
}

/// State of one libcurl easy transfer, touched only from its callbacks on the transfer thread.
final class TransferContext {
    enum Disposition: Equatable {
        case awaitingHead, body, redirect(String), errorBody, stop
    }

    let url: URL
    let redirects: [HTTPResponseHead]
    let sink: any TransferSink
    let cancellation: CancellationFlag
    var status = 0
    var headers: [String: String] = [:]
    var head: HTTPResponseHead?
    var disposition = Disposition.awaitingHead
    var errorBody: [UInt8] = []
    var sinkError: (any Error)?
    var abortReason: String?
    var lastActivity = monotonicSeconds()

    /// Whether error responses go to the sink too (``TransferOptions/deliversErrorResponses``).
    let deliversErrors: Bool

    init(url: URL, redirects: [HTTPResponseHead], sink: any TransferSink, cancellation: CancellationFlag, deliversErrors: Bool = false) {
        self.deliversErrors = deliversErrors
        self.url = url
        self.redirects = redirects
        self.sink = sink
        self.cancellation = cancellation
    }

    /// One header line (status line, header, or the blank line ending the head). False aborts.
    func header(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lastActivity = monotonicSeconds()
        if cancellation.isCancelled { return false }
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
            headers = [:]
            return true
        }
        if !line.isEmpty {
            if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return true
        }
        // End of a head. Informational responses are followed by the real one.
        if (100..<200).contains(status) { return true }
        let head = HTTPResponseHead(status: status, url: url, headers: headers, redirects: redirects)
        self.head = head
        if (300..<400).contains(status), let location = headers["location"], !location.isEmpty {
            disposition = .redirect(location)
            return true
        }
        if (200..<300).contains(status) || status == 416 || deliversErrors {
            do {
                disposition = try sink.receive(head: head) ? .body : .stop
            } catch {
                sinkError = error
                return false
            }
            return disposition == .body
        }
        disposition = .errorBody
        return true
    }

    /// Body bytes. False aborts the transfer.
    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lastActivity = monotonicSeconds()
        if cancellation.isCancelled { return false }
        switch disposition {
        case .body:
            do {
                try sink.receive(body: bytes)
                return true
            } catch {
                sinkError = error
                return false
            }
        case .errorBody:
            errorBody.append(contentsOf: bytes.prefix(max(0, 1024 - errorBody.count)))
            return true
        case .redirect:
            return true
        case .awaitingHead, .stop:
            return false
        }
    }
}
