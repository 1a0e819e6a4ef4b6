import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves one connection: reads a request, answers it as its route's next action says, and closes — or, when
/// the server keeps connections alive and the answer was a whole file or range, reads the next request.
struct LoopbackConnection {
    let fd: Int32
    let core: LoopbackServerCore

    /// What a normal answer would be for the request, before faults.
    private struct Plan {
        var status: Int
        var headers: [LoopbackHeader]
        var slice: Range<Int>
    }

    func serve() {
        while let head = readHead(), let request = parse(head), answer(request) {}
    }

    /// Answers one request; true when the connection stays open for another.
    private func answer(_ request: LoopbackRequest) -> Bool {
        guard let (route, action) = core.take(request) else {
            sendSimple(404, reason: "Not Found", body: Array("no route for \(request.path)\n".utf8))
            return false
        }
        switch action {
        case .status(let code, let headers, let body):
            sendSimple(code, headers: headers + route.extraHeaders, body: body, isHead: request.method == "HEAD")
        case .retryAfter(let seconds, let status):
            sendSimple(status, headers: [LoopbackHeader("Retry-After", "\(seconds)")], body: Array("slow down\n".utf8))
        case .redirect(let location, let status):
            sendSimple(status, headers: [LoopbackHeader("Location", location)] + route.extraHeaders + linkedHeaders(route), body: [])
        case .serve:
            let keepAlive = core.keepsConnectionsAlive && request.header("Connection")?.lowercased() != "close"
            return serveResource(request, route: route, action: action, keepAlive: keepAlive) && keepAlive
        default:
            _ = serveResource(request, route: route, action: action, keepAlive: false)
        }
        return false
    }

    func closeSocket() { close(fd) }

    // MARK: - Resource

    private func linkedHeaders(_ route: LoopbackRoute) -> [LoopbackHeader] {
        guard let sha = route.linkedSHA256 else { return [] }
        return [LoopbackHeader("X-Linked-Etag", "\"\(sha)\""), LoopbackHeader("X-Linked-Size", "\(route.body.count)")]
    }

    private func plan(for request: LoopbackRequest, route: LoopbackRoute) -> Plan {
        let size = route.body.count
        var headers: [LoopbackHeader] = [LoopbackHeader("Content-Type", "application/octet-stream")]
        if let etag = route.etag { headers.append(LoopbackHeader("ETag", etag)) }
        if let modified = route.lastModified { headers.append(LoopbackHeader("Last-Modified", modified)) }
        if route.acceptsRanges { headers.append(LoopbackHeader("Accept-Ranges", "bytes")) }
        headers += linkedHeaders(route) + route.extraHeaders

        guard route.acceptsRanges, let rangeHeader = request.header("Range"),
              let range = Self.parseRange(rangeHeader) else {
            return Plan(status: 200, headers: headers, slice: 0..<size)
        }
        if let ifRange = request.header("If-Range") {
            let strongETag = route.etag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
            guard ifRange == strongETag || (ifRange == route.lastModified && !ifRange.hasPrefix("\"")) else {
                return Plan(status: 200, headers: headers, slice: 0..<size)
            }
        }
        let start: Int, end: Int
        switch range {
        case .from(let a, let b):
            guard a < size else {
                return Plan(status: 416, headers: headers + [LoopbackHeader("Content-Range", "bytes */\(size)")], slice: 0..<0)
            }
            start = a
            end = min(b ?? (size - 1), size - 1)
        case .suffix(let n):
            guard n > 0, size > 0 else {
                return Plan(status: 416, headers: headers + [LoopbackHeader("Content-Range", "bytes */\(size)")], slice: 0..<0)
            }
            start = max(0, size - n)
            end = size - 1
        }
        return Plan(status: 206, headers: headers + [LoopbackHeader("Content-Range", "bytes \(start)-\(end)/\(size)")],
                    slice: start..<(end + 1))
    }

    /// Sends the file or range; true when all of it went out.
    private func serveResource(_ request: LoopbackRequest, route: LoopbackRoute, action: LoopbackAction,
                               keepAlive: Bool) -> Bool {
        let answer = plan(for: request, route: route)
        var declared = answer.slice.count
        if case .declaredLength(let n) = action { declared = n }
        var head = "HTTP/1.1 \(answer.status) \(Self.reason(answer.status))\r\n"
        for h in answer.headers { head += "\(h.name): \(h.value)\r\n" }
        head += "Content-Length: \(declared)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        guard sendAll(Array(head.utf8)) else { return false }
        if request.method == "HEAD" || action == .headersOnly { return true }

        var body = Array(route.body[answer.slice])
        if case .corrupt(let offset) = action, answer.slice.contains(offset) {
            body[offset - answer.slice.lowerBound] ^= 0xFF
        }
        var limit = body.count
        var stallAt: Int?, stallSeconds = 0.0
        switch action {
        case .dropAfter(let n), .truncateAfter(let n): limit = min(n, body.count)
        case .stallAfter(let n, let seconds): stallAt = n; stallSeconds = seconds
        default: break
        }
        let chunk = route.bandwidthBytesPerSecond.map { max(1, min(16_384, $0 / 20)) } ?? 65_536
        var sent = 0
        while sent < limit, !core.stopping {
            if let at = stallAt, sent >= at {
                stallAt = nil
                guard pause(stallSeconds) else { return false }
            }
            var end = min(limit, sent + chunk)
            if let at = stallAt, at > sent { end = min(end, at) }
            let started = Date()
            guard sendAll(Array(body[sent..<end])) else { return false }
            if let rate = route.bandwidthBytesPerSecond, rate > 0 {
                let due = Double(end - sent) / Double(rate) - Date().timeIntervalSince(started)
                if due > 0, !pause(due) { return false }
            }
            sent = end
        }
        switch action {
        case .dropAfter:
            // Give the client a moment to read what was sent, then reset the connection.
            _ = pause(0.1)
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        case .truncateAfter:
            shutdown(fd, Int32(SHUT_WR))
        default:
            break
        }
        return sent == body.count
    }

    // MARK: - Wire

    private func sendSimple(_ status: Int, reason: String? = nil, headers: [LoopbackHeader] = [], body: [UInt8], isHead: Bool = false) {
        var head = "HTTP/1.1 \(status) \(reason ?? Self.reason(status))\r\n"
        for h in headers { head += "\(h.name): \(h.value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard sendAll(Array(head.utf8)) else { return }
        if !isHead { _ = sendAll(body) }
    }

    /// Sends every byte unless the server is stopping or the peer went away.
    private func sendAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            if core.stopping { return false }
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// Sleeps in short slices so a stopping server is not held up. False when stopping.
    private func pause(_ seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if core.stopping { return false }
            usleep(UInt32(min(20_000, max(1_000, deadline.timeIntervalSinceNow * 1e6))))
        }
        return !core.stopping
    }

    private func readHead() -> [UInt8]? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(10)
        while !core.stopping, Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR || errno == EAGAIN { continue }
            guard n > 0 else { return nil }
            buffer += chunk[0..<n]
            if let end = Self.headEnd(buffer) { return Array(buffer[0..<end]) }
            if buffer.count > 64 * 1024 { return nil }
        }
        return nil
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func parse(_ head: [UInt8]) -> LoopbackRequest? {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [LoopbackHeader] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(LoopbackHeader(String(line[..<colon]),
                                          line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return LoopbackRequest(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
    }

    private enum ByteRange { case from(Int, Int?), suffix(Int) }

    private static func parseRange(_ value: String) -> ByteRange? {
        guard value.hasPrefix("bytes="), !value.contains(",") else { return nil }
        let spec = value.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], second = spec[spec.index(after: dash)...]
        if first.isEmpty { return Int(second).map { .suffix($0) } }
        guard let a = Int(first) else { return nil }
        if second.isEmpty { return .from(a, nil) }
        guard let b = Int(second), b >= a else { return nil }
        return .from(a, b)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
