import Foundation

/// One header line, as sent or received (name keeps the case it was written with).
public struct LoopbackHeader: Sendable, Hashable {
    /// The header name, e.g. `ETag`.
    public var name: String
    /// The header value.
    public var value: String

    /// Creates a header line.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What the server does with one request to a route. A route consumes one action per request
/// from its ``LoopbackRoute/plan`` and falls back to ``LoopbackRoute/fallback`` when the plan is used up.
public enum LoopbackAction: Sendable, Hashable {
    /// Serve the resource normally: 200, or 206/416 for a `Range` request (honouring `If-Range`).
    case serve
    /// Answer with this status, extra headers and body instead of the resource.
    case status(Int, headers: [LoopbackHeader] = [], body: [UInt8] = [])
    /// Answer with `status` (429 or 503) and `Retry-After: seconds`.
    case retryAfter(seconds: Int, status: Int = 429)
    /// Serve normally but reset the connection (RST) after this many body bytes.
    case dropAfter(bytes: Int)
    /// Serve normally but close the connection cleanly (FIN) after this many body bytes,
    /// while the headers promised the full length.
    case truncateAfter(bytes: Int)
    /// Serve normally but stop sending for `seconds` after this many body bytes, then continue.
    case stallAfter(bytes: Int, seconds: Double)
    /// Serve normally but flip every bit of the resource byte at this absolute offset.
    case corrupt(offset: Int)
    /// Serve the resource, but declare this `Content-Length` (whatever the real body is).
    case declaredLength(Int)
    /// Redirect with a `Location` header (absolute URL or a path on this server).
    case redirect(to: String, status: Int = 302)
    /// Replace the resource's bytes and ETag (from this request on), then serve it.
    case replaceResource(body: [UInt8], etag: String?)
    /// Answer a HEAD-like response without any body bytes, then close.
    case headersOnly
}

/// A scripted resource on a ``LoopbackHTTPServer``.
public struct LoopbackRoute: Sendable {
    /// The resource's bytes.
    public var body: [UInt8]
    /// The ETag sent with it (include the quotes: `"\"v1\""`), or nil for none.
    public var etag: String?
    /// The Last-Modified value sent with it, or nil for none.
    public var lastModified: String?
    /// Whether `Range` requests are honoured (otherwise the full body is always sent with 200).
    public var acceptsRanges: Bool
    /// When set, Hugging Face-style `X-Linked-Etag` (this SHA-256 in quotes) and `X-Linked-Size` headers are sent.
    public var linkedSHA256: String?
    /// More headers to send with every response of this route.
    public var extraHeaders: [LoopbackHeader]
    /// Caps the body send rate of each connection to this many bytes per second.
    public var bandwidthBytesPerSecond: Int?
    /// One action per request, consumed in order.
    public var plan: [LoopbackAction]
    /// The action once the plan is used up.
    public var fallback: LoopbackAction

    /// Creates a route serving `body`.
    public init(
        body: [UInt8] = [],
        etag: String? = nil,
        lastModified: String? = nil,
        acceptsRanges: Bool = true,
        linkedSHA256: String? = nil,
        extraHeaders: [LoopbackHeader] = [],
        bandwidthBytesPerSecond: Int? = nil,
        plan: [LoopbackAction] = [],
        fallback: LoopbackAction = .serve
    ) {
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.acceptsRanges = acceptsRanges
        self.linkedSHA256 = linkedSHA256
        self.extraHeaders = extraHeaders
        self.bandwidthBytesPerSecond = bandwidthBytesPerSecond
        self.plan = plan
        self.fallback = fallback
    }

    /// A route that always redirects to `location`.
    public static func redirect(to location: String, status: Int = 302) -> LoopbackRoute {
        LoopbackRoute(fallback: .redirect(to: location, status: status))
    }
}

/// A request the server received.
public struct LoopbackRequest: Sendable, Hashable {
    /// `GET`, `HEAD`, ...
    public var method: String
    /// The request target, e.g. `/model.bin`.
    public var path: String
    /// The header lines in the order received.
    public var headers: [LoopbackHeader]

    /// The value of the first header with this name (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
