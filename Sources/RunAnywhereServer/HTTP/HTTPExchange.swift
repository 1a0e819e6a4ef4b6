import Foundation

/// A request as the router sees it: method, path, the headers it reads, the body, and a way to tell whether the
/// client is still there.
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    /// The headers the router reads, by lower-case name.
    var headers: [String: String]
    var body: [UInt8]
    /// True once the client has closed its connection (polled while a completion runs).
    var clientGone: @Sendable () -> Bool
}

/// An answer: a whole body, or a stream of server-sent events produced while the model generates.
enum HTTPResponse {
    /// A complete body.
    case full(status: Int, headers: [(String, String)], body: [UInt8])
    /// A `text/event-stream` body read piece by piece.
    case stream(headers: [(String, String)], body: ResponseStream)

    /// A JSON body.
    static func json(_ status: Int, _ value: JSONValue, headers: [(String, String)] = []) -> HTTPResponse {
        .full(status: status, headers: [("Content-Type", "application/json")] + headers, body: value.encoded())
    }

    /// An OpenAI-shaped error.
    static func error(_ e: APIError, path: String = "") -> HTTPResponse {
        var headers: [(String, String)] = []
        if e.status == 401 { headers.append(("WWW-Authenticate", "Bearer")) }
        if e.status == 405, let allowed = RequestParser.allowedMethod(path) { headers.append(("Allow", allowed)) }
        return json(e.status, e.json, headers: headers)
    }

    /// The status line's code.
    var status: Int {
        switch self {
        case .full(let status, _, _): return status
        case .stream: return 200
        }
    }
}

/// A response body produced while it is sent: ``read(into:)`` blocks (on a connection thread) until bytes are ready.
protocol ResponseStream: AnyObject, Sendable {
    /// Fills up to `buffer.count` bytes; returns how many, or nil at the end of the body (`failed` says the body
    /// ended abnormally: the client went away or the generation could not continue).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int?, failed: Bool)
    /// The connection ended (normally or not): stop producing.
    func close()
}
