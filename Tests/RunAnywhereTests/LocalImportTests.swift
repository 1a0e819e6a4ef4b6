import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A temporary folder with a storage root (`root/`) and room for files to import, and an SDK over that root.
struct ImportEnvironment {
    let dir: TemporaryDirectory
    let sdk: RunAnywhereSDK

    init(environment: (URL) throws -> [String: String] = { ["HOME": $0.appendingPathComponent("home").path] }) throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-import")
        sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
            storageRoot: dir.url.appendingPathComponent("root"), remoteCatalogURL: URL(string: "http://127.0.0.1:1/catalog.json"),
            environment: try environment(dir.url)))
    }

    var root: URL { dir.url.appendingPathComponent("root") }

    /// Writes the forest demo model (a tiny GGUF whose greedy text is known) at `relativePath`; returns its URL and bytes.
    func writeForest(_ relativePath: String) throws -> (URL, Data) {
        let url = dir.url.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return (url, try DemoModel.write(.forest, to: url))
    }

    /// Files and links under the storage root other than folders (what an import would leave behind).
    func leftovers() -> [String] {
        guard let e = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var out: [String] = []
        while let path = e.nextObject() as? String {
            if LocalStoreScan.kind(root.appendingPathComponent(path)) != S_IFDIR { out.append(path) }
        }
        return out
    }

    /// Greedy text for "Once upon a time" from the model `id`.
    func greedy(_ id: String, tokens: Int = 4) async throws -> String {
        try await sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: tokens, temperature: 0)).text
    }

    func close() { dir.remove() }
}

/// The SHA-256 of the file at `url` (nil when it cannot be read).
func fileSHA256(_ url: URL) -> String? {
    (try? Data(contentsOf: url)).map(FakeModelStores.sha256)
}

/// (device, inode) of the file at `url`, symbolic links followed.
func fileIdentity(_ url: URL) -> [UInt64] {
    var st = stat()
    return stat(url.path, &st) == 0 ? [UInt64(truncatingIfNeeded: st.st_dev), UInt64(truncatingIfNeeded: st.st_ino)] : []
}

/// Collects progress reports from another thread.
final class ProgressLog: Sendable {
    private let log = Mutex<[LocalImportProgress]>([])
    var entries: [LocalImportProgress] { log.withLock { $0 } }
    var handler: @Sendable (LocalImportProgress) -> Void { { p in self.log.withLock { $0.append(p) } } }
}

@Suite("Local import")
struct LocalImportTests {
    @Test("a GGUF on the storage root's file system is imported by hard link, with its SHA-256 in the manifest, and runs",
          arguments: [LocalImport.Placement.hardLink, .symlink, .copy])
    func importsAndRuns(placement: LocalImport.Placement) async throws {
        let env = try ImportEnvironment(); defer { env.close() }
        let (original, bytes) = try env.writeForest("mine/Forest-Story.Q8.gguf")
        let sha = FakeModelStores.sha256(bytes)
        let log = ProgressLog()
        let placements: [LocalImport.Placement] = placement == .hardLink ? [.hardLink, .copy] : [placement]
        let imported = try await env.sdk.models.importLocal(file: original, placements: placements, onProgress: log.handler)
        #expect(imported.placement == placement)
        #expect(imported.model.id == "forest-story.q8" && imported.model.source == .imported && imported.model.isDownloaded)
        #expect(imported.sha256 == sha && imported.model.sha256 == sha)
        #expect(imported.model.architecture == "llama", "the header was read")
        let stored = try #require(imported.model.primaryFilePath)
        let manifest = try String(contentsOf: stored.deletingLastPathComponent().appendingPathComponent("manifest.json"), encoding: .utf8)
        #expect(manifest.contains(sha))
        switch placement {
        case .hardLink: #expect(fileIdentity(stored) == fileIdentity(original) && LocalStoreScan.kind(stored) == S_IFREG)
        case .symlink: #expect(LocalStoreScan.kind(stored) == S_IFLNK && (try? FileManager.default.destinationOfSymbolicLink(atPath: stored.path)) == original.path)
        case .copy: #expect(fileIdentity(stored) != fileIdentity(original) && fileSHA256(stored) == sha)
        }
        let last = try #require(log.entries.last)
        #expect(last.phase == (placement == .copy ? .copying : .hashing))
        #expect(last.progress.bytesDone == Int64(bytes.count) && last.progress.fraction == 1)

        let text = try await env.greedy(imported.model.id)
        #expect(text.hasPrefix(" the") || text.hasPrefix(" there"), "\(text)")
        // A second SDK on the same root sees it, and importing the same file again changes nothing.
        let again = try await ImportEnvironment.sdk(root: env.root).models.importLocal(file: original, placements: placements)
        #expect(again.wasAlreadyImported && again.placement == placement && again.sha256 == sha)

        try await env.sdk.models.delete(id: imported.model.id)
        #expect(fileSHA256(original) == sha, "the original is byte-identical after delete")
        #expect(await env.sdk.models.get(id: imported.model.id) == nil, "an imported model's registration goes with its file")
        #expect(env.leftovers().isEmpty, "\(env.leftovers())")
    }

    @Test("a file that is missing, a folder, a link loop, not GGUF or malformed is refused with a typed error and nothing is left behind")
    func refusals() async throws {
        let env = try ImportEnvironment(); defer { env.close() }
        let fm = FileManager.default
        let d = env.dir.url
        try fm.createDirectory(at: d.appendingPathComponent("folder.gguf"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: d.appendingPathComponent("loop-a.gguf").path, withDestinationPath: d.appendingPathComponent("loop-b.gguf").path)
        try fm.createSymbolicLink(atPath: d.appendingPathComponent("loop-b.gguf").path, withDestinationPath: d.appendingPathComponent("loop-a.gguf").path)
        try fm.createSymbolicLink(atPath: d.appendingPathComponent("dangling.gguf").path, withDestinationPath: d.appendingPathComponent("gone").path)
        try Data("just some text, long enough to be read".utf8).write(to: d.appendingPathComponent("notes.gguf"))
        let (_, forest) = try env.writeForest("forest.gguf")
        try forest.prefix(200).write(to: d.appendingPathComponent("truncated.gguf"))
        // A header that claims 2^40 tensors in a 24-byte file.
        var huge = Data("GGUF".utf8)
        withUnsafeBytes(of: UInt32(3).littleEndian) { huge.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(1 << 40).littleEndian) { huge.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(0).littleEndian) { huge.append(contentsOf: $0) }
        try huge.write(to: d.appendingPathComponent("huge.gguf"))

        let cases: [(String, String?, RunAnywhereError.Code)] = [
            ("missing.gguf", nil, .invalidConfiguration), ("folder.gguf", nil, .invalidConfiguration),
            ("loop-a.gguf", nil, .invalidConfiguration), ("dangling.gguf", nil, .invalidConfiguration),
            ("notes.gguf", nil, .invalidModelFormat), ("truncated.gguf", nil, .invalidModelFormat), ("huge.gguf", nil, .invalidModelFormat),
            ("forest.gguf", "../escape", .invalidConfiguration), ("forest.gguf", "qwen3-0.6b", .invalidConfiguration),
        ]
        for (name, id, code) in cases {
            let got = await errorCode { try await env.sdk.models.importLocal(file: d.appendingPathComponent(name), id: id) }
            #expect(got == code, "\(name) as \(id ?? "its own id"): \(String(describing: got))")
        }
        #expect(try await env.sdk.models.list().allSatisfy { $0.source != .imported && !$0.isDownloaded })
        #expect(env.leftovers().isEmpty, "\(env.leftovers())")
        #expect(await env.sdk.models.get(id: "qwen3-0.6b")?.isDownloaded == false, "the catalog model is untouched")
    }

    @Test("an id taken by another imported file is refused; an imported model whose file went away says so instead of downloading")
    func takenAndGone() async throws {
        let env = try ImportEnvironment(); defer { env.close() }
        let (a, _) = try env.writeForest("a/model.gguf")
        let (b, _) = try env.writeForest("b/model.gguf")
        let first = try await env.sdk.models.importLocal(file: a, placements: [.symlink])
        #expect(await errorCode { try await env.sdk.models.importLocal(file: b) } == .invalidConfiguration)
        let second = try await env.sdk.models.importLocal(file: b, id: "model-b")
        #expect(second.model.id == "model-b" && second.placement == .hardLink)

        try FileManager.default.removeItem(at: a)  // the other tool deletes its file
        let gone = try #require(await env.sdk.models.get(id: first.model.id))
        #expect(!gone.isDownloaded)
        #expect(await errorCode { try await env.greedy(first.model.id) } == .modelNotDownloaded)
        // The same bytes come back: the link works again, and importing again confirms it by the hash.
        _ = try env.writeForest("a/model.gguf")
        let back = try await env.sdk.models.importLocal(file: a, placements: [.symlink])
        #expect(back.model.id == first.model.id && back.model.isDownloaded && back.wasAlreadyImported)
        // Other bytes of the same size at the same path: the import hashes them and records the new SHA-256.
        var altered = try Data(contentsOf: a)
        altered[altered.count - 1] ^= 0x01
        try altered.write(to: a)
        let changed = try await env.sdk.models.importLocal(file: a, placements: [.symlink])
        #expect(!changed.wasAlreadyImported && changed.sha256 == FakeModelStores.sha256(altered) && changed.sha256 != first.sha256)
        #expect(await env.sdk.models.get(id: first.model.id)?.sha256 == changed.sha256)
    }

    @Test("concurrent imports into one root do not interleave: the same file twice is imported once, two files for one id give one model")
    func concurrentImports() async throws {
        let env = try ImportEnvironment(); defer { env.close() }
        let (a, _) = try env.writeForest("a/model.gguf")
        let (b, _) = try env.writeForest("b/model.gguf")
        let sdk = env.sdk
        async let first = sdk.models.importLocal(file: a, placements: [.copy])
        async let second = sdk.models.importLocal(file: a, placements: [.copy])
        let results = try await [first, second]
        #expect(results.filter(\.wasAlreadyImported).count == 1 && Set(results.map(\.model.id)) == ["model"])
        async let third = errorCode { try await sdk.models.importLocal(file: b, id: "other", placements: [.copy]) }
        async let fourth = errorCode { try await sdk.models.importLocal(file: a, id: "other", placements: [.copy]) }
        let codes = await [third, fourth]
        #expect(codes.filter { $0 == nil }.count == 1 && codes.contains(.invalidConfiguration), "\(codes)")
    }

    @Test("a copy cancelled midway ends with .cancelled and leaves nothing behind")
    func cancelledCopy() async throws {
        let env = try ImportEnvironment(); defer { env.close() }
        let (original, _) = try env.writeForest("big/Forest-Padded.gguf")
        // 256 MiB of trailing zeros (a hole: nothing is written here), so that the copy takes many 4 MiB chunks.
        let fd = open(original.path, O_WRONLY)
        #expect(fd >= 0 && ftruncate(fd, 256 << 20) == 0)
        close(fd)
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        let sdk = env.sdk
        let task = Task {
            defer { signal.finish() }
            return try await sdk.models.importLocal(file: original, placements: [.copy]) { _ in signal.yield() }
        }
        for await _ in started { break }
        task.cancel()
        #expect(await errorCode { try await task.value } == .cancelled)
        #expect(env.leftovers().isEmpty, "\(env.leftovers())")
        #expect(await env.sdk.models.get(id: "forest-padded") == nil)
    }

    @Test("across file systems the default is a copy with progress; a disk too small is insufficientStorage with nothing left",
          .enabled(if: SmallFilesystem.isAvailable, "needs root to mount a small tmpfs"))
    func crossFileSystemAndDiskFull() async throws {
        let env = try ImportEnvironment(); defer { env.close() }
        let elsewhere = try SmallFilesystem(bytes: 8 << 20); defer { elsewhere.remove() }
        let source = elsewhere.url.appendingPathComponent("Other-FS.gguf")
        let bytes = try DemoModel.write(.forest, to: source)
        let log = ProgressLog()
        let imported = try await env.sdk.models.importLocal(file: source, onProgress: log.handler)
        #expect(imported.placement == .copy && log.entries.last?.phase == .copying && log.entries.last?.progress.bytesDone == Int64(bytes.count))
        let text = try await env.greedy(imported.model.id)
        #expect(!text.isEmpty)
        try await env.sdk.models.delete(id: imported.model.id)
        #expect(fileSHA256(source) == FakeModelStores.sha256(bytes))

        let small = try SmallFilesystem(bytes: bytes.count / 2); defer { small.remove() }
        let cramped = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: small.url, environment: ["HOME": env.dir.path]))
        #expect(await errorCode { try await cramped.models.importLocal(file: source) } == .insufficientStorage)
        #expect(await errorCode { try await cramped.models.importLocal(file: source, placements: [.hardLink]) } == .storageFailure,
                "a hard link alone cannot cross file systems")
        let left = FileManager.default.enumerator(atPath: small.path)?.allObjects.compactMap { $0 as? String }
            .filter { LocalStoreScan.kind(small.url.appendingPathComponent($0)) != S_IFDIR } ?? []
        #expect(left.isEmpty, "\(left)")
        #expect(await cramped.models.get(id: "other-fs") == nil)
    }
}

extension ImportEnvironment {
    /// Another SDK instance over `root`.
    static func sdk(root: URL) -> RunAnywhereSDK {
        RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: root, environment: ["HOME": root.path]))
    }
}
