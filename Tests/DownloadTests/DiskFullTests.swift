import Foundation
import Glibc
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// Mounting a small tmpfs needs root (CAP_SYS_ADMIN); elsewhere these suites are skipped.
private let canMount = SmallFilesystem.isAvailable

@Suite("Disk full", .enabled(if: canMount, "needs root to mount a small tmpfs that really fills up"))
struct DiskFullTests {
    @Test("a write that hits ENOSPC fails with insufficientStorage and keeps the partial resumable")
    func enospc() async throws {
        let dir = try SmallFilesystem(bytes: 256 * 1024)
        let server = try LoopbackHTTPServer()
        defer {
            server.stop()
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

        try dir.resize(bytes: 2 * 1024 * 1024)
        let result = try await FileDownloader(policy: policy).download(request)
        #expect(result.resumedFrom == kept)
        #expect(fileBytes(request.destination) == body)
    }
}

@Suite("Disk full through the public API", .enabled(if: canMount, "needs root to mount a small tmpfs that really fills up"))
struct ModelDiskFullTests {
    @Test("the disk filling mid-download gives insufficientStorage, keeps the partial resumable, and the download completes once space is freed",
          arguments: ["delete-filler", "grow-volume"])
    func fillsMidDownload(freeBy: String) async throws {
        let dir = try SmallFilesystem(bytes: 1024 * 1024)
        let root = dir.url.appendingPathComponent("root")
        let server = try LoopbackHTTPServer()
        defer {
            server.stop()
            dir.remove()
        }
        let body = testBytes(700_000, seed: 44)
        // 250 kB/s: about 3 s in all, so the filler lands mid-download even when a loaded machine delivers the progress late.
        server.setRoute("/big.bin", LoopbackRoute(body: body, etag: "\"big\"", bandwidthBytesPerSecond: 250_000))
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: root, environment: ["HOME": dir.path]))
        var policy = fastPolicy()
        policy.freeSpace = { try availableDiskBytes(at: $0) }   // the real volume: 1 MB, enough when the download starts
        sdk.models.downloads.policy = policy
        _ = try await sdk.registerModel(id: "big", name: "big", url: server.url("/big.bin").absoluteString, framework: .llamaCpp,
                                        modality: .language, sha256: try sha256Hex(body), sizeBytes: Int64(body.count))
        // Another writer takes the rest of the volume once the download is under way.
        let filler = dir.url.appendingPathComponent("filler")
        let stream = try await sdk.models.download(id: "big")
        await #expect {
            for try await event in stream {
                if case .progress(let p) = event, p.bytesDone > 150_000, !fileExists(filler) {
                    let fd = open(filler.path, O_WRONLY | O_CREAT, 0o644)
                    let chunk = [UInt8](repeating: 7, count: 64 * 1024)
                    while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
                    close(fd)
                }
            }
        } throws: { ($0 as? RunAnywhereError)?.code == .insufficientStorage && ($0 as? RunAnywhereError)?.modelId == "big" }
        #expect(await sdk.models.get(id: "big")?.isDownloaded == false)
        #expect(await sdk.models.isResumable(id: "big"))

        if freeBy == "delete-filler" {
            try FileManager.default.removeItem(at: filler)
        } else {
            try dir.resize(bytes: 4 * 1024 * 1024)
        }
        let events = try await collect(try await sdk.models.download(id: "big"))
        guard case .started(_, _, let resumed) = events.first else {
            Issue.record("first event: \(String(describing: events.first))")
            return
        }
        #expect(resumed > 100_000)
        let model = try #require(events.last?.completedModel)
        #expect(fileBytes(try #require(model.primaryFilePath)) == body)
    }
}
