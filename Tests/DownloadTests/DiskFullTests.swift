import Foundation
import Glibc
@testable import RunAnywhere
import RunAnywhereTestSupport
import Testing

/// Mounting a small tmpfs needs root (CAP_SYS_ADMIN); elsewhere this suite is skipped.
private let canMount: Bool = {
    guard geteuid() == 0, let dir = try? TemporaryDirectory(prefix: "runanywhere-mountprobe") else { return false }
    defer { dir.remove() }
    guard mount("tmpfs", dir.path, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount2(dir.path, 0)
    return true
}()

@Suite("Disk full", .enabled(if: canMount, "needs root to mount a small tmpfs that really fills up"))
struct DiskFullTests {
    @Test("a write that hits ENOSPC fails with insufficientStorage and keeps the partial resumable")
    func enospc() async throws {
        let dir = try TemporaryDirectory(prefix: "runanywhere-diskfull")
        let server = try LoopbackHTTPServer()
        #expect(mount("tmpfs", dir.path, "tmpfs", 0, "size=256k") == 0)
        defer {
            server.stop()
            umount2(dir.path, 0)
            dir.remove()
        }
        let body = testBytes(600_000)
        server.setRoute("/big.bin", LoopbackRoute(body: body, etag: "\"big\""))
        let request = FileDownloadRequest(url: server.url("/big.bin"), destination: dir.url.appendingPathComponent("big.bin"),
                                          expectedSHA256: try sha256Hex(body))
        var policy = fastPolicy()
        policy.freeSpace = { _ in Int64.max / 4 }   // the probe says yes; the volume says no
        await #expect {
            _ = try await FileDownloader(policy: policy).download(request)
        } throws: { ($0 as? RunAnywhereError)?.code == .insufficientStorage }
        #expect(!fileExists(request.destination))
        #expect(FileDownloader.isResumable(request))
        let kept = try #require(DownloadJournal.load(from: request.journalURL)).bytesWritten
        #expect(kept > 100_000)

        #expect(mount("tmpfs", dir.path, "tmpfs", UInt(MS_REMOUNT), "size=2m") == 0)
        let result = try await FileDownloader(policy: policy).download(request)
        #expect(result.resumedFrom == kept)
        #expect(fileBytes(request.destination) == body)
    }
}
