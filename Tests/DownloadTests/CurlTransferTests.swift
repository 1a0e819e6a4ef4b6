import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

@Suite("CurlTransfer")
struct CurlTransferTests {
    @Test("keeps Authorization on a same-host redirect and drops it on a cross-host one")
    func authorizationStaysOnItsHost() async throws {
        let origin = try LoopbackHTTPServer()
        let other = try LoopbackHTTPServer()
        defer { origin.stop(); other.stop() }
        let body = testBytes(2048)
        other.setRoute("/blob", LoopbackRoute(body: body))
        origin.setRoute("/file", LoopbackRoute(body: body))
        origin.setRoute("/same", .redirect(to: "/file"))
        origin.setRoute("/cross", .redirect(to: other.url("/blob").absoluteString))

        let (sameHead, sameBody) = try await fetch(HTTPRequest(url: origin.url("/same"), authorization: "Bearer secret"))
        #expect(sameHead.status == 200)
        #expect(sameBody == body)
        #expect(origin.requests(to: "/file").first?.header("Authorization") == "Bearer secret")

        let (crossHead, crossBody) = try await fetch(HTTPRequest(url: origin.url("/cross"), authorization: "Bearer secret"))
        #expect(crossHead.status == 200)
        #expect(crossHead.url == other.url("/blob"))
        #expect(crossHead.redirects.map(\.status) == [302])
        #expect(crossBody == body)
        #expect(origin.requests(to: "/cross").first?.header("Authorization") == "Bearer secret")
        let hop = try #require(other.requests(to: "/blob").first)
        #expect(hop.header("Authorization") == nil)
    }

    @Test("gives up on a redirect loop with downloadFailed")
    func redirectLoop() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/a", .redirect(to: "/b"))
        server.setRoute("/b", .redirect(to: "/a"))
        await #expect {
            _ = try await fetch(HTTPRequest(url: server.url("/a")))
        } throws: { error in
            guard case TransferError.permanent(let e) = error else { return false }
            return e.code == .downloadFailed && e.message.contains("redirects")
        }
        #expect(server.requests.count == 11)
    }

    @Test("refuses a redirect to a scheme other than http or https")
    func redirectToFile() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/a", .redirect(to: "file:///etc/passwd"))
        await #expect {
            _ = try await fetch(HTTPRequest(url: server.url("/a")))
        } throws: { error in
            guard case TransferError.permanent(let e) = error else { return false }
            return e.code == .downloadFailed
        }
    }

    @Test("maps 401 and 403 to authenticationRequired and 404 to downloadFailed naming the URL", arguments: [401, 403, 404])
    func statusMapping(status: Int) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/gated", LoopbackRoute(fallback: .status(status, body: Array("Access restricted".utf8))))
        let url = server.url("/gated")
        await #expect {
            _ = try await fetch(HTTPRequest(url: url))
        } throws: { error in
            guard case TransferError.permanent(let e) = error else { return false }
            let code: RunAnywhereError.Code = status == 404 ? .downloadFailed : .authenticationRequired
            return e.code == code && e.message.contains(url.absoluteString) && e.message.contains("Access restricted")
        }
    }

    @Test("classifies 503 and 429 as transient with Retry-After parsed")
    func transientStatus() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/busy", LoopbackRoute(fallback: .retryAfter(seconds: 7, status: 503)))
        await #expect(throws: TransferError.self) {
            do { _ = try await fetch(HTTPRequest(url: server.url("/busy"))) } catch TransferError.transient(_, let retryAfter) {
                #expect(retryAfter == 7)
                throw TransferError.cancelled
            }
        }
        #expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: Date(timeIntervalSince1970: 1_445_412_470)) == 10)
        #expect(parseRetryAfter("soon") == nil)
    }

    @Test("reports a refused connection as transient")
    func refused() async throws {
        let server = try LoopbackHTTPServer()
        let url = server.url("/gone")
        server.stop()
        await #expect {
            _ = try await fetch(HTTPRequest(url: url))
        } throws: { error in
            if case TransferError.transient = error { return true }
            return false
        }
    }

    @Test("reports an unresolvable host as networkUnavailable")
    func unresolvable() async throws {
        await #expect {
            _ = try await fetch(HTTPRequest(url: URL(string: "http://no-such-host.invalid/x")!))
        } throws: { error in
            guard case TransferError.permanent(let e) = error else { return false }
            return e.code == .networkUnavailable
        }
    }

    @Test("fails a stalled body as transient after the stall timeout")
    func stall() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/slow", LoopbackRoute(body: testBytes(100_000), plan: [.stallAfter(bytes: 1000, seconds: 20)]))
        let url = server.url("/slow")
        // Timed on the transfer's own thread: on a loaded machine the awaiting test task can wait for a thread of
        // the cooperative pool (other tests block theirs) longer than the server's stall (CI, 2 cores under load).
        let (failure, seconds) = try await BlockingWork.run(name: "test.stall") { flag -> (String?, Double) in
            let started = monotonicSeconds()
            do {
                _ = try CurlTransfer.perform(HTTPRequest(url: url), options: TransferOptions(connectTimeout: 2, stallTimeout: 0.5),
                                             sink: CollectingSink(), cancellation: flag)
                return (nil, monotonicSeconds() - started)
            } catch TransferError.transient(let reason, _) {
                return (reason, monotonicSeconds() - started)
            } catch {
                return ("\(error)", monotonicSeconds() - started)
            }
        }
        #expect(failure?.contains("No data") == true, "\(failure ?? "no error")")
        // Well under the 20 s stall the server would keep up; slack for a loaded 2-core machine.
        #expect(seconds < 18)
    }

    @Test("stops promptly when the task is cancelled")
    func cancellation() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.setRoute("/slow", LoopbackRoute(body: testBytes(1_000_000), bandwidthBytesPerSecond: 50_000))
        let task = Task { try await fetch(HTTPRequest(url: server.url("/slow")), options: TransferOptions(connectTimeout: 2, stallTimeout: 30)) }
        try await Task.sleep(nanoseconds: 300_000_000)
        let cancelled = Date()
        task.cancel()
        let result = await task.result
        // The full body would take 20 s; cancellation must end it long before (slack for a loaded machine).
        #expect(Date().timeIntervalSince(cancelled) < 5)
        #expect(throws: TransferError.cancelled) { try result.get() }
    }

    @Test("refuses non-http URLs before connecting")
    func schemes() async throws {
        await #expect {
            _ = try await fetch(HTTPRequest(url: URL(string: "ftp://127.0.0.1/x")!))
        } throws: { error in
            guard case TransferError.permanent(let e) = error else { return false }
            return e.code == .invalidConfiguration
        }
    }
}

@Suite("SHA256Hasher")
struct SHA256HasherTests {
    @Test("matches the FIPS 180-2 test vectors")
    func vectors() throws {
        #expect(try sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("rehashing a file prefix and continuing gives the digest of the whole")
    func prefixThenRest() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let bytes = testBytes(9 * 1024 * 1024 + 17)
        let file = dir.url.appendingPathComponent("f")
        try Data(bytes).write(to: file)
        let split = 5 * 1024 * 1024 + 3
        let hasher = try SHA256Hasher.hashing(prefix: Int64(split), ofFileAt: file.path)
        hasher.update(Array(bytes[split...]))
        #expect(hasher.hexDigest() == (try sha256Hex(bytes)))
        #expect(try SHA256Hasher.hexDigest(ofFileAt: file.path) == (try sha256Hex(bytes)))
        #expect(throws: RunAnywhereError.self) { try SHA256Hasher.hashing(prefix: Int64(bytes.count + 1), ofFileAt: file.path) }
    }
}
