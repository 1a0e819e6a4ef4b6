import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// Bugs the fault campaign found, pinned down one by one.
@Suite("Chaos regressions")
struct ChaosRegressionTests {
    @Test("a resume that ends in 416 still checks the SHA-256 the server announced on the first attempt (campaign run 2596)")
    func resumeKeepsAnnouncedChecksum() async throws {
        // The server announces one SHA-256 (X-Linked-Etag) but serves other bytes, with a Content-Length too long:
        // the first attempt gets every byte and ends short of the promise; the resume asks for the rest, gets 416.
        let announced = try sha256Hex(testBytes(300_000, seed: 99))
        let f = try DownloadFixture { $0.linkedSHA256 = announced; $0.plan = [.declaredLength(300_500)] }
        defer { f.cleanUp() }
        await #expect {
            _ = try await FileDownloader(policy: fastPolicy()).download(f.request())
        } throws: { ($0 as? RunAnywhereError)?.code == .checksumMismatch }
        #expect(!fileExists(f.destination))
        #expect(f.rangesRequested == [nil, "bytes=300000-"])
    }

    @Test("a resume whose 206 carries no checksum header still checks the one the first response announced")
    func resumeWithoutHeaderKeepsAnnouncedChecksum() async throws {
        let announced = try sha256Hex(testBytes(300_000, seed: 98))
        let f = try DownloadFixture { $0.linkedSHA256 = announced; $0.plan = [.dropAfter(bytes: 120_000)] }
        defer { f.cleanUp() }
        // After the drop the route stops announcing the checksum (as a CDN behind a redirect would).
        var route = try #require(f.server.route("/model.gguf"))
        route.linkedSHA256 = nil
        route.plan = []
        let server = f.server
        Task {
            while server.requests(to: "/model.gguf").isEmpty { try? await Task.sleep(nanoseconds: 1_000_000) }
            server.setRoute("/model.gguf", route)
        }
        var policy = fastPolicy()
        policy.checkpointBytes = 16 * 1024
        await #expect {
            _ = try await FileDownloader(policy: policy).download(f.request())
        } throws: { ($0 as? RunAnywhereError)?.code == .checksumMismatch }
        #expect(!fileExists(f.destination))
    }

    @Test("the lock is taken when the holder that just finished removed the whole download folder before our open (CI stop 31, 8 pulls)")
    func lockAfterFolderRemoved() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // The folder is gone, as after the finishing holder's unlink of .lock and rmdir of the folder.
        let lockFile = root.appendingPathComponent("downloads/shared/.lock")
        let lock = try await ModelDownloadLock.acquire(lockFile, modelId: "shared", pollInterval: 0.01)
        var info = stat()
        #expect(stat(lockFile.path, &info) == 0)
        lock.release()
    }

    @Test("a lock path that can never be created (a link into a missing folder) ends in a storage error, not an endless retry",
          .timeLimit(.minutes(15)))   // (an endless retry hangs; the limit also counts the wait for a thread on 2 cores)
    func lockPathNeverCreatable() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let lockFile = root.appendingPathComponent(".lock")
        try FileManager.default.createSymbolicLink(atPath: lockFile.path, withDestinationPath: root.appendingPathComponent("gone/x").path)
        await #expect {
            _ = try await ModelDownloadLock.acquire(lockFile, modelId: "shared", pollInterval: 0.01)
        } throws: { ($0 as? RunAnywhereError)?.code == .storageFailure }
    }
}
