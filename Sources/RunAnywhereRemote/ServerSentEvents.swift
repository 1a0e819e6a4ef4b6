import Foundation

/// One server-sent event: its `event:` name (nil when none) and its `data:` lines joined by newlines.
struct ServerSentEvent: Sendable, Hashable {
    var event: String?
    var data: String
}

/// Parses a `text/event-stream` body as its bytes arrive, in pieces of any size: a line (LF, CRLF or CR ended) is
/// read once whole, an event ends at a blank line. Comments (`:`) and fields other than `event`/`data` are skipped.
struct ServerSentEventParser {
    private var line: [UInt8] = []
    private var data: [String] = []
    private var event: String?
    private var lastWasCR = false
    /// Bytes held in one line at most: a line longer than this is a malformed stream, not a reason to grow forever.
    let maxLineBytes: Int

    init(maxLineBytes: Int = 4 << 20) { self.maxLineBytes = maxLineBytes }

    /// Adds bytes; returns the events they completed, in order.
    /// - Throws: `ServerSentEventParser.LineTooLong` when one line passes ``maxLineBytes``.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if byte == 0x0A, lastWasCR { lastWasCR = false; continue }   // the LF of a CRLF
            lastWasCR = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                if let e = endLine() { events.append(e) }
            } else {
                line.append(byte)
                if line.count > maxLineBytes { throw LineTooLong(limit: maxLineBytes) }
            }
        }
        return events
    }

    /// The event left when the body ends without its closing blank line, if any.
    mutating func finish() -> ServerSentEvent? {
        if !line.isEmpty, let e = endLine() { return e }
        return dispatch()
    }

    struct LineTooLong: Error { let limit: Int }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring, value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            var v = text[text.index(after: colon)...]
            if v.first == " " { v = v.dropFirst() }
            value = v
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "data": data.append(String(value))
        case "event": event = String(value)
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer { data.removeAll(); event = nil }
        guard !data.isEmpty else { return nil }
        return ServerSentEvent(event: event, data: data.joined(separator: "\n"))
    }
}
