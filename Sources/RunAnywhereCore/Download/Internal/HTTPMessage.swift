import Foundation

/// One HTTP request: a GET as the downloader wants it sent, or a POST with a body (remote backends).
package struct HTTPRequest: Sendable, Hashable {
    /// The URL to fetch (http or https only).
    package var url: URL
    /// The body of a POST (sent with `Content-Type: application/json` unless ``headers`` say otherwise); nil sends
    /// a GET. A POST is never repeated after a redirect.
    package var body: Data?
    /// Extra request headers. Do not put `Authorization` here: use ``authorization``.
    package var headers: [String: String]
    /// The value of an `Authorization` header, sent only to the scheme, host and port of ``url``
    /// (so also after a redirect that stays there), never to any other origin.
    package var authorization: String?
    /// Ask for the bytes from this offset on (`Range: bytes=<offset>-`).
    package var rangeStart: Int64?
    /// With ``rangeStart``: the last byte wanted, inclusive (`Range: bytes=<start>-<end>`).
    package var rangeEnd: Int64?
    /// The validator (a strong ETag or a Last-Modified date) sent as `If-Range` with ``rangeStart``.
    package var ifRange: String?

    package init(url: URL, headers: [String: String] = [:], authorization: String? = nil,
                 rangeStart: Int64? = nil, rangeEnd: Int64? = nil, ifRange: String? = nil, body: Data? = nil) {
        self.url = url
        self.body = body
        self.headers = headers
        self.authorization = authorization
        self.rangeStart = rangeStart
        self.rangeEnd = rangeEnd
        self.ifRange = ifRange
    }
}

/// The status and headers of one HTTP response, delivered before any of its body.
package struct HTTPResponseHead: Sendable, Hashable {
    /// The status code (200, 206, 416, ...).
    package var status: Int
    /// The URL that gave this response (after redirects).
    package var url: URL
    /// Header values by lower-cased name (the last one wins when a header repeats).
    package var headers: [String: String]
    /// The redirect responses that led here, oldest first.
    package var redirects: [HTTPResponseHead]

    package init(status: Int, url: URL, headers: [String: String], redirects: [HTTPResponseHead] = []) {
        self.status = status
        self.url = url
        self.headers = headers
        self.redirects = redirects
    }

    /// The value of a header (case-insensitive name), or nil.
    package func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// `Content-Length`, when present and valid.
    package var contentLength: Int64? {
        header("content-length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The `ETag`, exactly as sent (quotes included).
    package var etag: String? { header("etag") }

    /// The `Last-Modified` date, exactly as sent.
    package var lastModified: String? { header("last-modified") }

    /// `Content-Range: bytes a-b/total` (206) or `bytes */total` (416), parsed.
    package var contentRange: ContentRange? { header("content-range").flatMap(ContentRange.init) }

    /// The SHA-256 a Hugging Face resolve URL announces (`X-Linked-Etag`, on this response or a redirect
    /// before it), as 64 lower-case hex digits; nil when absent or not a SHA-256.
    package var linkedSHA256: String? {
        for head in [self] + redirects.reversed() {
            guard let raw = head.header("x-linked-etag") else { continue }
            var value = raw.trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("W/") { value.removeFirst(2) }
            value = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if value.count == 64, value.allSatisfy(\.isHexDigit) { return value.lowercased() }
        }
        return nil
    }

    /// The size a Hugging Face resolve URL announces (`X-Linked-Size`), when present.
    package var linkedSize: Int64? {
        for head in [self] + redirects.reversed() {
            if let raw = head.header("x-linked-size"), let size = Int64(raw.trimmingCharacters(in: .whitespaces)), size >= 0 {
                return size
            }
        }
        return nil
    }

    /// A validator usable in `If-Range`: a strong ETag, else Last-Modified; nil when only a weak ETag or none.
    package var resumeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}

/// A parsed `Content-Range` header.
package struct ContentRange: Sendable, Hashable {
    /// First byte offset; nil for `bytes */total`.
    package var start: Int64?
    /// Last byte offset (inclusive); nil for `bytes */total`.
    package var end: Int64?
    /// The full size of the resource, when the server knows it.
    package var total: Int64?

    package init?(_ text: String) {
        let value = text.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" { total = nil } else {
            guard let t = Int64(parts[1]), t >= 0 else { return nil }
            total = t
        }
        if parts[0] == "*" {
            start = nil
            end = nil
        } else {
            let bounds = parts[0].split(separator: "-", maxSplits: 1)
            guard bounds.count == 2, let a = Int64(bounds[0]), let b = Int64(bounds[1]), a >= 0, b >= a else { return nil }
            if let total, b >= total { return nil }
            start = a
            end = b
        }
    }
}

/// How a failed transfer should be treated.
package enum TransferError: Error, Sendable, Equatable {
    /// Worth trying again (connection reset or refused, timeout, stall, 429, 5xx). `retryAfter` is the
    /// server's `Retry-After` in seconds, when it sent one.
    case transient(reason: String, retryAfter: Double?)
    /// Trying again will not help.
    case permanent(RunAnywhereError)
    /// The caller cancelled.
    case cancelled

    /// The words of a transient failure whose connection was refused: nothing listens at that address, so
    /// waiting and retrying for long rarely helps (``DownloadPolicy/maxRefusedAttempts``).
    static let refusedPhrase = "refused the connection"

    /// Whether this is a refused connection.
    var isConnectionRefused: Bool {
        if case .transient(let reason, _) = self { return reason.contains(Self.refusedPhrase) }
        return false
    }

    /// The error a person should see when this is the last word.
    package var runAnywhereError: RunAnywhereError {
        switch self {
        case .transient(let reason, _): RunAnywhereError(.downloadFailed, reason)
        case .permanent(let error): error
        case .cancelled: .cancelled("The download")
        }
    }
}

/// Parses `Retry-After`: delay seconds or an HTTP date. Returns seconds from `now` (never negative).
package func parseRetryAfter(_ value: String?, now: Date = Date()) -> Double? {
    guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
    if let seconds = Double(raw), seconds.isFinite, seconds >= 0 { return seconds }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: raw) else { return nil }
    return max(0, date.timeIntervalSince(now))
}

/// The scheme, host and port a URL talks to; two URLs with equal origins reach the same server.
extension URL {
    /// Whether the URL is one the downloader fetches: http or https (any case).
    package var isHTTPOrHTTPS: Bool {
        guard let scheme = scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }
}

package struct URLOrigin: Hashable, Sendable {
    package var scheme: String
    package var host: String
    package var port: Int

    package init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}
