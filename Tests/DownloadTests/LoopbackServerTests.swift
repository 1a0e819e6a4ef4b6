import Foundation
import Glibc
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

@Suite("Loopback HTTP server")
struct LoopbackServerTests {
    @Test("serves a resource with its validators and records the request")
    func servesResource() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let body = testBytes(10_000)
        server.setRoute("/f", LoopbackRoute(body: body, etag: "\"v1\"", lastModified: "Mon, 30 Nov 2026 10:00:00 GMT"))
        let (head, got) = try await fetch(HTTPRequest(url: server.url("/f"), headers: ["X-Test": "yes"]))
        #expect(head.status == 200)
        #expect(head.etag == "\"v1\"")
        #expect(head.contentLength == 10_000)
        #expect(got == body)
        let recorded = try #require(server.requests(to: "/f").first)
        #expect(recorded.method == "GET")
        #expect(recorded.header("x-test") == "yes")
    }

    @Test("answers a range with 206, ignores it when If-Range does not match, and 416 past the end")
    func ranges() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let body = testBytes(1000)
        server.setRoute("/f", LoopbackRoute(body: body, etag: "\"v1\""))
        let (partial, tail) = try await fetch(HTTPRequest(url: server.url("/f"), rangeStart: 600, ifRange: "\"v1\""))
        #expect(partial.status == 206)
        #expect(partial.contentRange == ContentRange("bytes 600-999/1000"))
        #expect(tail == Array(body[600...]))

        let (full, all) = try await fetch(HTTPRequest(url: server.url("/f"), rangeStart: 600, ifRange: "\"v0\""))
        #expect(full.status == 200)
        #expect(all == body)

        let (unsatisfiable, _) = try await fetch(HTTPRequest(url: server.url("/f"), rangeStart: 1000))
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.contentRange?.total == 1000)
    }

    @Test("stops cleanly while a connection is stalled")
    func stopsWhileStalled() async throws {
        let server = try LoopbackHTTPServer()
        server.setRoute("/slow", LoopbackRoute(body: testBytes(1000), plan: [.stallAfter(bytes: 10, seconds: 30)]))
        let task = Task { try? await fetch(HTTPRequest(url: server.url("/slow")), options: TransferOptions(connectTimeout: 2, stallTimeout: 60)) }
        while server.openConnectionCount == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        let started = Date()
        server.stop()
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(server.openConnectionCount == 0)
        task.cancel()
        _ = await task.value
    }

    @Test("answers HEAD with headers only")
    func head() throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/f", LoopbackRoute(body: testBytes(777), etag: "\"h\""))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(server.port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        let request = Array("HEAD /f HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply += buffer[0..<n]
        }
        let text = String(decoding: reply, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.contains("Content-Length: 777\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
        #expect(server.requests.first?.method == "HEAD")
    }

    @Test("sends Hugging Face linked headers when asked")
    func linkedHeaders() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let body = testBytes(500)
        let sha = try sha256Hex(body)
        server.setRoute("/f", LoopbackRoute(body: body, linkedSHA256: sha))
        let (head, _) = try await fetch(HTTPRequest(url: server.url("/f")))
        #expect(head.linkedSHA256 == sha)
        #expect(head.linkedSize == 500)
    }
}
