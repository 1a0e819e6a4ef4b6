import Foundation
import Glibc
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// Hostile archives, ids, file names, URLs, redirects, journals: each ends in a typed error (or a safe
/// download) and nothing lands outside the storage root.
@Suite("Hostile input")
struct HostileInputTests {
    // MARK: Archives

    @Test("a symlink whose target climbs out through another in-archive symlink is refused", arguments: [false, true])
    func symlinkChainEscape(linkFirst: Bool) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // `b -> .` is harmless alone and `c -> b/b/..` looks like it stays inside, but b/b/.. is the parent.
        var entries: [TestEntry] = [.symlink("b", target: "."), .symlink("c", target: "b/b/.."), .file("ok.bin", [1, 2, 3])]
        if linkFirst { entries.swapAt(0, 1) }
        let archive = dir.url.appendingPathComponent("chain.tar.gz")
        try writeArchive(entries, format: .tarGz, to: archive)
        let target = dir.url.appendingPathComponent("work/model")
        #expect {
            try ArchiveExtractor.extract(archive: archive, into: target, maxTotalBytes: 1_000_000)
        } throws: { ($0 as? RunAnywhereError)?.code == .extractionFailed && "\($0)".contains("'c'") }
        #expect(!fileExists(target))
    }

    @Test("a hostile archive model ends in extractionFailed, is not downloaded, and delete leaves nothing", arguments: [
        "dot-dot", "absolute", "symlink", "hardlink", "root-uplink", "bomb",
    ])
    func hostileArchiveModel(kind: String) async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let entries: [TestEntry]
        switch kind {
        case "dot-dot": entries = [.file("model/ok.bin", [1]), .file("model/../../../evil", Array("pwned".utf8))]
        case "absolute": entries = [.file("/tmp/runanywhere-hostile-abs", Array("pwned".utf8))]
        case "symlink": entries = [.symlink("model", target: "../../.."), .file("model/evil", [1])]
        case "hardlink": entries = [.directory("model"), .hardlink("model/passwd", target: "../../../../../etc/passwd")]
        // Inside the archive, but once `model/` becomes the model folder, `..` is the folder of every model.
        case "root-uplink": entries = [.directory("model"), .file("model/w.bin", [1]), .symlink("model/up", target: "..")]
        default:  // 70 MB of zeros in a ~70 kB archive: over the cap of 50x the download (at least 64 MB)
            entries = [.directory("model"), .file("model/zeros.bin", [UInt8](repeating: 0, count: 70 << 20))]
        }
        let archive = f.dir.url.appendingPathComponent("hostile.tar.gz")
        try writeArchive(entries, format: .tarGz, to: archive)
        let bytes = [UInt8](try Data(contentsOf: archive))
        try FileManager.default.removeItem(at: archive)
        f.server.setRoute("/hostile.tar.gz", LoopbackRoute(body: bytes, etag: "\"h\""))
        _ = try await f.sdk.registerModel(archive: f.server.url("/hostile.tar.gz").absoluteString,
                                          structure: ArchiveStructure(rootDirectory: "model"), id: "hostile", name: "hostile",
                                          framework: .llamaCpp, modality: .language, sha256: try sha256Hex(bytes))
        await #expect {
            _ = try await collect(try await f.sdk.models.download(id: "hostile"))
        } throws: { ($0 as? RunAnywhereError)?.code == .extractionFailed }
        #expect(await f.sdk.models.get(id: "hostile")?.isDownloaded == false)
        #expect(!fileExists(URL(fileURLWithPath: "/tmp/runanywhere-hostile-abs")))
        #expect(!fileExists(f.dir.url.appendingPathComponent("evil")))
        let root = f.sdk.models.storageRoot
        #expect(!fileExists(root.deletingLastPathComponent().appendingPathComponent("evil")))
        try await f.sdk.models.delete(id: "hostile")
        let left = listTree(root).filter { !$0.hasSuffix("manifest.json") && !isDirectory(root.appendingPathComponent($0)) }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    // MARK: Ids, file names, URLs

    static let hostileIds = ["..", "../x", "a/b", "/etc", "a\u{0}b", "a\nb", "a\u{1b}[31m", ".hidden", "-rf", String(repeating: "a", count: 200), ""]

    @Test("hostile model ids get invalidConfiguration from every entry point and create nothing")
    func hostileIds() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let models = f.sdk.models
        for id in Self.hostileIds {
            func invalid(_ error: any Error) -> Bool {
                guard let e = error as? RunAnywhereError else { return false }
                return e.code == .invalidConfiguration || e.code == .modelNotFound
            }
            await #expect { _ = try await models.download(id: id) } throws: { invalid($0) }
            await #expect { try await models.delete(id: id) } throws: { invalid($0) }
            await #expect { _ = try await models.load(id: id) } throws: { invalid($0) }
            await #expect { try await models.unload(id: id) } throws: { invalid($0) }
            await #expect {
                try await f.sdk.registerModel(id: id, name: "x", url: f.server.url("/x.bin").absoluteString, framework: .llamaCpp, modality: .language)
            } throws: { ($0 as? RunAnywhereError)?.code == .invalidConfiguration }
            #expect(await models.get(id: id) == nil)
            #expect(await models.isResumable(id: id) == false)
        }
        let tree = listTree(models.storageRoot)
        #expect(tree.allSatisfy { !$0.contains("..") && !$0.contains("\u{0}") }, "\(tree)")
        #expect(!fileExists(models.storageRoot.deletingLastPathComponent().appendingPathComponent("x")))
    }

    @Test("file names that are paths out, control characters, or the downloader's own working names are refused", arguments: [
        ["../w.bin"], ["/abs.bin"], ["a/../../w.bin"], ["w\u{0}.bin"], ["w\n.bin"], ["w.bin", "w.bin.partial"],
        ["w.bin", "w.bin.journal"], ["w.bin", "w.bin.verified"], [".lock"], ["manifest.json"],
    ])
    func hostileFileNames(names: [String]) async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let descriptors = names.enumerated().map { i, name in
            ModelFileDescriptor(url: f.server.url("/f\(i).bin"), fileName: name)
        }
        await #expect {
            try await f.sdk.registerModel(multiFile: descriptors, id: "names", name: "names", framework: .llamaCpp, modality: .language)
        } throws: { ($0 as? RunAnywhereError)?.code == .invalidConfiguration }
        #expect(await f.sdk.models.get(id: "names") == nil)
    }

    @Test("file:// and ftp:// URLs, and URLs with credentials, are refused at registration without echoing the password", arguments: [
        "file:///etc/passwd", "ftp://127.0.0.1/model.gguf", "http://user:s3cr3t-pw@127.0.0.1/model.gguf",
        "https://user:s3cr3t-pw@huggingface.co/model.gguf", "gopher://127.0.0.1/model.gguf", "model.gguf",
    ])
    func unsupportedURLs(url: String) async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        await #expect {
            try await f.sdk.registerModel(id: "bad-url", name: "x", url: url, framework: .llamaCpp, modality: .language)
        } throws: { error in
            guard let e = error as? RunAnywhereError else { return false }
            return e.code == .invalidConfiguration && !"\(e)".contains("s3cr3t-pw")
        }
        #expect(await f.sdk.models.get(id: "bad-url") == nil)
    }

    @Test("redirects to file://, ftp:// or a URL with credentials end in a typed error; nothing is fetched or registered", arguments: [
        "file:///etc/passwd", "ftp://127.0.0.1/x", "http://user:s3cr3t-pw@localhost:PORT/creds.bin",
    ])
    func hostileRedirects(location: String) async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(10_000)
        f.server.setRoute("/creds.bin", LoopbackRoute(body: body))
        try await f.register("redir", body: body) { $0.plan = [.redirect(to: location.replacingOccurrences(of: "PORT", with: "\(f.server.port)"))] }
        await #expect {
            _ = try await collect(try await f.sdk.models.download(id: "redir"))
        } throws: { error in
            guard let e = error as? RunAnywhereError else { return false }
            return e.code == .downloadFailed && !"\(e)".contains("s3cr3t-pw")
        }
        #expect(f.server.requests(to: "/creds.bin").isEmpty, "followed a redirect carrying credentials")
        #expect(await f.sdk.models.get(id: "redir")?.isDownloaded == false)
    }

    // MARK: Journals and records on disk

    @Test("a truncated or garbage journal or verified-record never crashes: the download starts over and verifies", arguments: [
        "journal-garbage", "journal-truncated", "journal-lies", "verified-garbage", "verified-lies",
    ])
    func garbageJournals(kind: String) async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(150_000, seed: 5)
        try await f.register("journal", body: body)
        let downloads = f.sdk.models.storageRoot.appendingPathComponent("downloads/journal")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let url = f.server.url("/journal.bin").absoluteString
        switch kind {
        case "journal-garbage":
            try Data(testBytes(300, seed: 9)).write(to: downloads.appendingPathComponent("journal.bin.journal"))
            try Data(testBytes(50_000, seed: 10)).write(to: downloads.appendingPathComponent("journal.bin.partial"))
        case "journal-truncated":
            let json = #"{"url":"\#(url)","etag":"\"journal-v1\"","totalBytes":150000,"bytesWritten":50000"#
            try Data(json.utf8).write(to: downloads.appendingPathComponent("journal.bin.journal"))
            try Data(testBytes(50_000, seed: 10)).write(to: downloads.appendingPathComponent("journal.bin.partial"))
        case "journal-lies":  // claims more bytes than the partial holds, with wrong bytes
            let json = #"{"url":"\#(url)","etag":"\"journal-v1\"","totalBytes":150000,"bytesWritten":140000}"#
            try Data(json.utf8).write(to: downloads.appendingPathComponent("journal.bin.journal"))
            try Data(testBytes(60_000, seed: 10)).write(to: downloads.appendingPathComponent("journal.bin.partial"))
        case "verified-garbage":
            try Data("{\"url\": 12".utf8).write(to: downloads.appendingPathComponent("journal.bin.verified"))
            try Data(testBytes(150_000, seed: 10)).write(to: downloads.appendingPathComponent("journal.bin"))
        default:  // a record naming the right URL and size over wrong bytes
            let json = #"{"url":"\#(url)","size":150000,"sha256":"\#(String(repeating: "0", count: 64))"}"#
            try Data(json.utf8).write(to: downloads.appendingPathComponent("journal.bin.verified"))
            try Data(testBytes(150_000, seed: 10)).write(to: downloads.appendingPathComponent("journal.bin"))
        }
        let events = try await collect(try await f.sdk.models.download(id: "journal"))
        let model = try #require(events.last?.completedModel)
        #expect(fileBytes(try #require(model.primaryFilePath)) == body)
    }
}

func isDirectory(_ url: URL) -> Bool {
    var flag: ObjCBool = false
    return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
}

@Suite("Interrupted installs")
struct InterruptedInstallTests {
    @Test("delete removes the unpacking folders a killed archive install left beside the model folder, and only those")
    func staleUnpackingFolders() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        let body = testBytes(1000)
        try await f.register("arch", body: body)
        try await f.register("arch.extract-x", body: body)
        let parent = f.sdk.models.storageRoot.appendingPathComponent("models/llamaCpp")
        let uuid = UUID().uuidString, other = UUID().uuidString
        let stale = [".arch.extract-\(uuid)", "..arch.extract-\(uuid).extracting-\(other)"]
        let kept = [".arch.extract-x.extract-\(other)", ".archive.extract-\(uuid)"]
        for name in stale + kept {
            try FileManager.default.createDirectory(at: parent.appendingPathComponent(name).appendingPathComponent("model"),
                                                    withIntermediateDirectories: true)
            try Data([1, 2, 3]).write(to: parent.appendingPathComponent(name).appendingPathComponent("model/w.bin"))
        }
        try await f.sdk.models.delete(id: "arch")
        for name in stale { #expect(!fileExists(parent.appendingPathComponent(name)), "\(name) was left") }
        for name in kept { #expect(fileExists(parent.appendingPathComponent(name)), "\(name) belongs to another model") }
    }
}
