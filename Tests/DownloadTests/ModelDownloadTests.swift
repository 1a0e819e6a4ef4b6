import Foundation
import Glibc
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// An SDK instance on its own storage root, with a loopback server and short retry waits.
struct SDKFixture {
    let sdk: RunAnywhereSDK
    let server: LoopbackHTTPServer
    let dir: TemporaryDirectory

    init(policy: (inout DownloadPolicy) -> Void = { _ in }) throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-dl")
        server = try LoopbackHTTPServer()
        sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
            storageRoot: dir.url, trustedTokenHosts: ["127.0.0.1"], environment: ["HOME": dir.path]))
        var p = fastPolicy()
        policy(&p)
        sdk.models.downloads.policy = p
    }

    func cleanUp() {
        server.stop()
        dir.remove()
    }

    /// Serves `body` at `path` and registers it as a single-file model.
    @discardableResult
    func register(_ id: String, body: [UInt8], path: String? = nil, sha: Bool = true, size: Bool = true,
                  route: (inout LoopbackRoute) -> Void = { _ in }) async throws -> ModelInfo {
        // `.bin`, not `.gguf`: the registry reads a GGUF's header when it is installed, and these bytes are random.
        let path = path ?? "/\(id).bin"
        var r = LoopbackRoute(body: body, etag: "\"\(id)-v1\"")
        route(&r)
        server.setRoute(path, r)
        return try await sdk.registerModel(id: id, name: id, url: server.url(path).absoluteString, framework: .llamaCpp,
                                           modality: .language, sha256: sha ? try sha256Hex(body) : nil,
                                           sizeBytes: size ? Int64(body.count) : nil)
    }
}

func collect(_ stream: AsyncThrowingStream<DownloadEvent, any Error>) async throws -> [DownloadEvent] {
    var events: [DownloadEvent] = []
    for try await event in stream { events.append(event) }
    return events
}

extension DownloadEvent {
    var progress: DownloadProgress? { if case .progress(let p) = self { p } else { nil } }
    var completedModel: ModelInfo? { if case .completed(let m) = self { m } else { nil } }
    var isVerifying: Bool { if case .verifying = self { true } else { false } }
}

@Suite("Model downloads")
struct ModelDownloadTests {
    @Test("downloads a single-file model: events in order, bytes in the model folder, manifest with the SHA-256")
    func singleFile() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(400_000)
        try await f.register("tiny", body: body)
        let events = try await collect(try await f.sdk.models.download(id: "tiny"))

        guard case .started(let total, let files, let resumed) = events.first else {
            Issue.record("first event was \(String(describing: events.first))")
            return
        }
        #expect(total == 400_000 && files == 1 && resumed == 0)
        let model = try #require(events.last?.completedModel)
        #expect(model.isDownloaded)
        let verifyIndex = try #require(events.firstIndex { $0.isVerifying })
        #expect(events[..<verifyIndex].contains { $0.progress?.bytesDone == 400_000 })
        #expect(events[(verifyIndex + 1)...].allSatisfy { $0.progress == nil })
        let primary = try #require(model.primaryFilePath)
        #expect(fileBytes(primary) == body)
        #expect(await f.sdk.models.get(id: "tiny")?.isDownloaded == true)
        let manifest = try String(contentsOf: primary.deletingLastPathComponent().appendingPathComponent("manifest.json"), encoding: .utf8)
        #expect(manifest.contains(try sha256Hex(body)))
        #expect(listTree(f.sdk.models.storageRoot.appendingPathComponent("downloads/tiny")).isEmpty, "nothing stays in downloads/, not even the lock file")
        #expect(await f.sdk.models.isResumable(id: "tiny") == false)

        let again = try await collect(try await f.sdk.models.download(id: "tiny"))
        #expect(again.count == 1 && again.first?.completedModel?.id == "tiny")
        #expect(f.server.requests.count == 1)
    }

    @Test("throttles progress to about four events a second and measures speed over a window")
    func throttleAndSpeed() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        try await f.register("paced", body: testBytes(1_500_000)) { $0.bandwidthBytesPerSecond = 1_000_000 }
        let started = Date()
        let events = try await collect(try await f.sdk.models.download(id: "paced"))
        let elapsed = Date().timeIntervalSince(started)
        let progress = events.compactMap(\.progress)
        #expect(elapsed > 1.2)
        #expect(progress.count <= Int(elapsed * 4) + 3)
        #expect(progress.count >= 4)
        #expect(progress.first?.bytesPerSecond == nil)
        let speeds = progress.compactMap(\.bytesPerSecond)
        #expect(!speeds.isEmpty)
        #expect(speeds.allSatisfy { $0 > 100_000 && $0 < 2_500_000 }, "speeds \(speeds) under a 1 MB/s cap (low end slack for a loaded machine)")
        #expect(progress.contains { $0.etaSeconds != nil })
        #expect(progress.last?.fraction == 1)
    }

    @Test("a .gguf that is not a valid GGUF is refused and not left installed")
    func invalidGGUF() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        try await f.register("fake", body: testBytes(10_000), path: "/fake.gguf")
        await #expect {
            _ = try await collect(try await f.sdk.models.download(id: "fake"))
        } throws: { ($0 as? RunAnywhereError)?.code == .invalidModelFormat }
        #expect(await f.sdk.models.get(id: "fake")?.isDownloaded == false)
        #expect(listTree(f.sdk.models.storageRoot.appendingPathComponent("models/llamaCpp/fake")) == ["manifest.json"])
    }

    @Test("throws modelNotFound and invalidConfiguration up front")
    func badIDs() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        await #expect { _ = try await f.sdk.models.download(id: "no-such-model") } throws: { ($0 as? RunAnywhereError)?.code == .modelNotFound }
        await #expect { _ = try await f.sdk.models.download(id: "../etc") } throws: { ($0 as? RunAnywhereError)?.code == .invalidConfiguration }
    }

    @Test("cancelling the consumer keeps the partial resumable; the next download resumes and completes")
    func cancelAndResume() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(2_000_000)
        // 200 kB/s: the cancel at 300 kB lands 8 s before the end even when a loaded machine runs the consumer late
        // (at 1 MB/s, a machine at load 19 let the first transfer finish and install before the cancel was seen).
        try await f.register("slow", body: body) { $0.bandwidthBytesPerSecond = 200_000 }
        let consumer = Task {
            for try await event in try await f.sdk.models.download(id: "slow") {
                if let p = event.progress, p.bytesDone >= 300_000 { return p.bytesDone }
            }
            return Int64(-1)
        }
        let seen = try await consumer.value   // returning drops the stream, which cancels the transfer
        #expect(seen >= 300_000)
        var waited = 0
        while f.server.openConnectionCount > 0, waited < 200 { try await Task.sleep(nanoseconds: 10_000_000); waited += 1 }
        #expect(f.server.openConnectionCount == 0)
        #expect(await f.sdk.models.isResumable(id: "slow"))
        #expect(await f.sdk.models.get(id: "slow")?.isDownloaded == false)

        var route = try #require(f.server.route("/slow.bin"))
        route.bandwidthBytesPerSecond = nil
        f.server.setRoute("/slow.bin", route)
        var resumedBytes: Int64 = -1
        var completed: ModelInfo?
        for try await event in try await f.sdk.models.download(id: "slow") {
            if case .started(_, _, let resumed) = event { resumedBytes = resumed }
            if case .completed(let m) = event { completed = m }
        }
        #expect(resumedBytes > 0)
        #expect(try fileBytes(#require(completed?.primaryFilePath)) == body)
        #expect(f.server.requests.last?.header("Range") != nil)
    }

    @Test("two download calls for one model share one transfer")
    func sharedTransfer() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(600_000)
        try await f.register("shared", body: body) { $0.bandwidthBytesPerSecond = 2_000_000 }
        let a = try await f.sdk.models.download(id: "shared")
        let b = try await f.sdk.models.download(id: "shared")
        async let ea = collect(a)
        async let eb = collect(b)
        let (x, y) = try await (ea, eb)
        #expect(x.last?.completedModel?.isDownloaded == true)
        #expect(y.last?.completedModel?.isDownloaded == true)
        if case .started = y.first {} else { Issue.record("second stream did not start with .started") }
        #expect(f.server.requests.count == 1)
    }

    @Test("each file's first progress report goes out even inside the throttle interval")
    func eachFileStartIsReported() {
        final class Seen: @unchecked Sendable { let lock = NSLock(); var indices: [Int] = [] }
        let seen = Seen()
        let aggregator = ModelProgressAggregator(sizes: [100, 100, 100], interval: 60) { event in
            if case .progress(let p) = event { seen.lock.lock(); seen.indices.append(p.currentFileIndex); seen.lock.unlock() }
        }
        for index in 0..<3 {
            for done in [10, 50, 100] as [Int64] {
                aggregator.update(index, FileDownloadProgress(bytesDone: done, bytesTotal: 100, retryAttempt: 0))
            }
        }
        #expect(seen.indices == [0, 1, 2])
    }

    @Test("downloads a multi-file model with per-file and overall progress")
    func multiFile() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let parts = [testBytes(300_000, seed: 1), testBytes(200_000, seed: 2), testBytes(100_000, seed: 3)]
        var descriptors: [ModelFileDescriptor] = []
        for (i, part) in parts.enumerated() {
            f.server.setRoute("/f\(i).bin", LoopbackRoute(body: part, etag: "\"p\(i)\"", bandwidthBytesPerSecond: 1_500_000))
            descriptors.append(ModelFileDescriptor(url: f.server.url("/f\(i).bin"), fileName: i == 2 ? "extra/f2.bin" : nil,
                                                   sizeBytes: Int64(part.count), sha256: try sha256Hex(part),
                                                   role: i == 0 ? .model : .projector))
        }
        _ = try await f.sdk.registerModel(multiFile: descriptors, id: "vlm", name: "VLM", framework: .llamaCpp, modality: .vision)
        let events = try await collect(try await f.sdk.models.download(id: "vlm"))
        let progress = events.compactMap(\.progress)
        #expect(progress.allSatisfy { $0.totalFiles == 3 && $0.overallBytesTotal == 600_000 })
        #expect(Set(progress.map(\.currentFileIndex)).count > 1)
        #expect(progress.last?.overallBytesDone == 600_000)
        #expect(events.filter(\.isVerifying).count == 3)
        let model = try #require(events.last?.completedModel)
        let folder = try #require(model.localPath)
        #expect(fileBytes(folder.appendingPathComponent("f0.bin")) == parts[0])
        #expect(fileBytes(folder.appendingPathComponent("f1.bin")) == parts[1])
        #expect(fileBytes(folder.appendingPathComponent("extra/f2.bin")) == parts[2])
        #expect(model.primaryFilePath?.lastPathComponent == "f0.bin")
    }

    @Test("unpacks an archive model, strips its root folder and checks the expected files")
    func archive() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let encoder = testBytes(50_000, seed: 5), decoder = testBytes(40_000, seed: 6)
        let archive = f.dir.url.appendingPathComponent("asr.tar.gz")
        try writeArchive([.directory("model/"), .file("model/encoder.onnx", encoder), .file("model/decoder.onnx", decoder),
                          .file("model/sub/tokens.txt", Array("x".utf8))], format: .tarGz, to: archive)
        let bytes = try #require(fileBytes(archive))
        f.server.setRoute("/asr.tar.gz", LoopbackRoute(body: bytes, etag: "\"a\""))
        f.server.setRoute("/broken.tar.gz", LoopbackRoute(body: bytes, etag: "\"a\""))

        let structure = ArchiveStructure(rootDirectory: "model", expectedFiles: ["encoder.onnx", "decoder.onnx"], primaryFile: "encoder.onnx")
        _ = try await f.sdk.registerModel(archive: f.server.url("/asr.tar.gz").absoluteString, structure: structure, id: "asr",
                                          name: "ASR", framework: .onnx, modality: .speechRecognition, sha256: try sha256Hex(bytes))
        let events = try await collect(try await f.sdk.models.download(id: "asr"))
        #expect(events.contains { if case .extracting("asr.tar.gz") = $0 { true } else { false } })
        let model = try #require(events.last?.completedModel)
        let folder = try #require(model.localPath)
        #expect(listTree(folder) == ["decoder.onnx", "encoder.onnx", "manifest.json", "sub", "sub/tokens.txt"])
        #expect(fileBytes(folder.appendingPathComponent("encoder.onnx")) == encoder)
        #expect(model.primaryFilePath?.lastPathComponent == "encoder.onnx")
        #expect(!fileExists(f.sdk.models.storageRoot.appendingPathComponent("downloads/asr/asr.tar.gz")))

        let wrong = ArchiveStructure(rootDirectory: "model", expectedFiles: ["encoder.onnx", "joiner.onnx"])
        _ = try await f.sdk.registerModel(archive: f.server.url("/broken.tar.gz").absoluteString, structure: wrong, id: "broken",
                                          name: "Broken", framework: .onnx, modality: .speechRecognition)
        await #expect {
            _ = try await collect(try await f.sdk.models.download(id: "broken"))
        } throws: { error in
            guard let e = error as? RunAnywhereError else { return false }
            return e.code == .extractionFailed && e.message.contains("joiner.onnx") && e.modelId == "broken"
        }
        #expect(await f.sdk.models.get(id: "broken")?.isDownloaded == false)
        let brokenFolder = f.sdk.models.storageRoot.appendingPathComponent("models/onnx/broken")
        #expect(listTree(brokenFolder) == ["manifest.json"])
        #expect(listTree(f.sdk.models.storageRoot.appendingPathComponent("models/onnx")).allSatisfy { !$0.hasPrefix(".") })
    }

    @Test("sends the token only to its host, and reports 401 as authenticationRequired for the model")
    func tokens() async throws {
        let f = try SDKFixture()
        let cdn = try LoopbackHTTPServer()
        defer { f.cleanUp(); cdn.stop() }
        try f.sdk.setHfToken("hf_secret")
        let body = testBytes(100_000)
        cdn.setRoute("/blob", LoopbackRoute(body: body, etag: "\"b\""))
        try await f.register("gated", body: body, path: "/owner/repo/resolve/main/gated.bin") {
            $0.fallback = .redirect(to: cdn.url("/blob").absoluteString)
            $0.linkedSHA256 = try? sha256Hex(body)
        }
        _ = try await collect(try await f.sdk.models.download(id: "gated"))
        #expect(f.server.requests.first?.header("Authorization") == "Bearer hf_secret")
        #expect(cdn.requests.count == 1)
        #expect(cdn.requests.first?.header("Authorization") == nil)
        let journalsAndManifests = listTree(f.dir.url).filter { $0.hasSuffix(".json") || $0.hasSuffix(".journal") }
        for file in journalsAndManifests {
            #expect(!(try String(contentsOf: f.dir.url.appendingPathComponent(file), encoding: .utf8)).contains("hf_secret"))
        }

        try await f.register("locked", body: body) { $0.fallback = .status(401) }
        await #expect {
            _ = try await collect(try await f.sdk.models.download(id: "locked"))
        } throws: { ($0 as? RunAnywhereError)?.code == .authenticationRequired && ($0 as? RunAnywhereError)?.modelId == "locked" }
    }

    @Test("fails with insufficientStorage before any request when the disk is too small")
    func smallDisk() async throws {
        let f = try SDKFixture { $0.freeSpace = { _ in 100_000 } }
        defer { f.cleanUp() }
        try await f.register("big", body: testBytes(300_000))
        await #expect {
            _ = try await collect(try await f.sdk.models.download(id: "big"))
        } throws: { error in
            guard let e = error as? RunAnywhereError else { return false }
            return e.code == .insufficientStorage && e.message.contains(ByteFormatter.string(300_000)) && e.message.contains(ByteFormatter.string(100_000))
        }
        #expect(f.server.requests.isEmpty)
    }

    @Test("waits for another process holding the model's download lock")
    func crossProcessLock() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(50_000)
        try await f.register("locked-model", body: body)
        let folder = f.sdk.models.storageRoot.appendingPathComponent("downloads/locked-model")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fd = open(folder.appendingPathComponent(".lock").path, O_RDWR | O_CREAT, 0o644)
        #expect(flock(fd, LOCK_EX) == 0)
        let download = Task { try await collect(try await f.sdk.models.download(id: "locked-model")) }
        try await Task.sleep(nanoseconds: 600_000_000)
        #expect(f.server.requests.isEmpty)
        flock(fd, LOCK_UN)
        close(fd)
        let events = try await download.value
        #expect(events.last?.completedModel?.isDownloaded == true)
    }
}
