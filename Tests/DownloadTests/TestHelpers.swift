import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport

/// Deterministic pseudo-random bytes (xorshift), so failures are reproducible.
func testBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed | 1
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        out[i] = UInt8(truncatingIfNeeded: state)
    }
    return out
}

func sha256Hex(_ bytes: [UInt8]) throws -> String {
    let hasher = try SHA256Hasher()
    hasher.update(bytes)
    return hasher.hexDigest()
}

func fileBytes(_ url: URL) -> [UInt8]? {
    (try? Data(contentsOf: url)).map { [UInt8]($0) }
}

func fileExists(_ url: URL) -> Bool {
    FileManager.default.fileExists(atPath: url.path)
}

/// A policy with short waits so fault tests run quickly.
func fastPolicy(stall: Double = 1, attempts: Int = 6) -> DownloadPolicy {
    var policy = DownloadPolicy()
    policy.initialBackoff = 0.02
    policy.maxBackoff = 0.1
    policy.maxAttempts = attempts
    policy.transfer = TransferOptions(connectTimeout: 2, stallTimeout: stall)
    policy.diskMargin = 0
    policy.freeSpace = { _ in Int64.max / 4 }
    policy.checkpointBytes = 64 * 1024
    policy.checkpointInterval = 0   // every 64 KiB: the tests pin what a checkpoint records, not how often it runs
    return policy
}

/// Collects what a ``CurlTransfer`` delivers.
final class CollectingSink: TransferSink, @unchecked Sendable {
    var head: HTTPResponseHead?
    var body: [UInt8] = []
    var acceptBody = true

    func receive(head: HTTPResponseHead) throws -> Bool {
        self.head = head
        return acceptBody
    }

    func receive(body: UnsafeRawBufferPointer) throws {
        self.body.append(contentsOf: body)
    }
}

/// Runs one transfer off the cooperative pool and returns what arrived.
func fetch(_ request: HTTPRequest, options: TransferOptions = TransferOptions(connectTimeout: 2, stallTimeout: 2)) async throws -> (HTTPResponseHead, [UInt8]) {
    try await BlockingWork.run(name: "test.fetch") { flag in
        let sink = CollectingSink()
        let head = try CurlTransfer.perform(request, options: options, sink: sink, cancellation: flag)
        return (head, sink.body)
    }
}

/// Records progress reports from the transfer thread.
final class ProgressLog: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var entries: [FileDownloadProgress] = []

    func append(_ p: FileDownloadProgress) {
        lock.lock(); defer { lock.unlock() }
        entries.append(p)
    }

    var all: [FileDownloadProgress] {
        lock.lock(); defer { lock.unlock() }
        return entries
    }
}
