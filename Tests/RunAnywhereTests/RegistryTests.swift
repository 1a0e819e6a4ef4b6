import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import RunAnywhereGGUF

/// A fresh SDK instance over its own temporary storage root.
func makeSDK(_ dir: TemporaryDirectory, remoteCatalog: URL? = nil) -> RunAnywhereSDK {
    RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url, remoteCatalogURL: remoteCatalog, environment: ["HOME": dir.path]))
}

/// Writes a tiny valid GGUF model and returns its size.
func writeTinyGGUF(to url: URL, spec: TinyModelSpec = TinyModelSpec()) throws -> Int64 {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try GGUFWriter.tinyModel(spec).write(to: url.path)
    return FileSystem.fileSize(url) ?? -1
}

@Suite("Registry")
struct RegistryTests {
    @Test("the built-in catalog lists every curated model with real Hugging Face resolve URLs")
    func builtInCatalog() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let models = try await makeSDK(dir).models.list()
        let ids = Set(models.map(\.id))
        for id in ["qwen3-0.6b", "llama-3.2-1b", "smollm2-135m", "smollm2-360m", "qwen2.5-0.5b", "qwen2.5-1.5b", "smolvlm-256m", "whisper-tiny-en"] {
            #expect(ids.contains(id), "catalog lacks \(id)")
        }
        let qwen = try #require(models.first { $0.id == "qwen3-0.6b" })
        #expect(qwen.artifact.files.first?.url.absoluteString == "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf")
        #expect(qwen.quantization == "Q8_0")
        #expect(qwen.source == .builtIn)
        #expect(!qwen.isDownloaded)
        let vlm = try #require(models.first { $0.id == "smolvlm-256m" })
        guard case .multiFile(let files) = vlm.artifact else { Issue.record("vision model is not multi-file"); return }
        #expect(files.map(\.role).contains(.projector))
        let asr = try #require(models.first { $0.id == "whisper-tiny-en" })
        guard case .archive(_, let structure) = asr.artifact else { Issue.record("speech model is not an archive"); return }
        #expect(structure.format == .tarBz2)
        #expect(asr.framework == .onnx && asr.category == .speechRecognition)
    }

    @Test("filters narrow by category, framework, download state and search text")
    func filters() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        let language = try await sdk.models.list(filter: ModelFilter(category: .language))
        #expect(!language.isEmpty && language.allSatisfy { $0.category == .language })
        let onnx = try await sdk.models.list(filter: ModelFilter(framework: .onnx))
        #expect(onnx.map(\.id) == ["whisper-tiny-en"])
        #expect(try await sdk.models.list(filter: ModelFilter(downloadedOnly: true)).isEmpty)
        let search = try await sdk.models.list(filter: ModelFilter(search: "SMOLLM2"))
        #expect(Set(search.map(\.id)) == ["smollm2-135m", "smollm2-360m"])
        let none = try await sdk.models.list(filter: ModelFilter(category: .embedding))
        #expect(none.isEmpty)
    }

    @Test("a registration made by one instance is seen by another on the same root, and survives it")
    func twoInstancesRoundTrip() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let a = makeSDK(dir)
        let b = makeSDK(dir)
        let info = try await a.registerModel(name: "Mine", url: "https://example.com/files/Tiny-Model.Q8_0.gguf", framework: .llamaCpp, modality: .language, sizeBytes: 1234)
        #expect(info.id == "tiny-model.q8_0")
        let seen = try #require(await b.models.get(id: info.id))
        #expect(seen.name == "Mine" && seen.source == .registered && seen.downloadSize == 1234)
        // Same URL again: the same id, the state kept.
        let again = try await b.registerModel(name: "Mine, renamed", url: "https://example.com/files/Tiny-Model.Q8_0.gguf", framework: .llamaCpp, modality: .language)
        #expect(again.id == info.id)
        #expect(await a.models.get(id: info.id)?.name == "Mine, renamed")
        // Another URL with the same file name gets a distinct, stable id.
        let other = try await a.registerModel(name: "Other", url: "https://mirror.example.org/Tiny-Model.Q8_0.gguf", framework: .llamaCpp, modality: .language)
        #expect(other.id != info.id && other.id.hasPrefix("tiny-model.q8_0-"))
        let c = makeSDK(dir)
        #expect(try await c.models.list().contains { $0.id == other.id })
    }

    @Test("re-registering keeps the download state; deleting removes files but keeps the registration")
    func reRegisterKeepsState() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        let info = try await sdk.registerModel(id: "keep-me", name: "Keep", url: "https://example.com/keep.gguf", framework: .llamaCpp, modality: .language)
        // Simulate a finished download: the file in place and the registry told.
        let folder = sdk.models.layout.modelDirectory(id: info.id, framework: .llamaCpp)
        let size = try writeTinyGGUF(to: folder.appendingPathComponent("keep.gguf"))
        try await sdk.models.registry.markDownloaded(info, files: [.init(relativePath: "keep.gguf", sizeBytes: size, sha256: nil)])
        #expect(await sdk.models.get(id: "keep-me")?.isDownloaded == true)
        _ = try await sdk.registerModel(id: "keep-me", name: "Keep 2", url: "https://example.com/keep.gguf", framework: .llamaCpp, modality: .language)
        let after = try #require(await sdk.models.get(id: "keep-me"))
        #expect(after.isDownloaded && after.name == "Keep 2")
        // What the GGUF header says joined the registry when it was marked downloaded.
        #expect(after.architecture == "llama" && after.contextLength == 512 && after.quantization == "F32")
        #expect((after.parameterCount ?? 0) > 0, "\(after)")
        #expect((after.memoryRequirement ?? 0) > Int64(size) / 2 && (after.memoryRequirement ?? 0) < Int64(size) * 10, "memory \(String(describing: after.memoryRequirement)) vs file \(size)")
        #expect(after.primaryFilePath?.lastPathComponent == "keep.gguf")
        try await sdk.models.delete(id: "keep-me")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("keep.gguf").path))
        let deleted = try #require(await sdk.models.get(id: "keep-me"))
        #expect(!deleted.isDownloaded)
    }

    @Test("files deleted outside the SDK are noticed, and pruneOrphans drops the entries with no files")
    func refreshAndPrune() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        let info = try await sdk.registerModel(id: "gone", name: "Gone", url: "https://example.com/gone.gguf", framework: .llamaCpp, modality: .language)
        let folder = sdk.models.layout.modelDirectory(id: info.id, framework: .llamaCpp)
        let file = folder.appendingPathComponent("gone.gguf")
        let size = try writeTinyGGUF(to: file)
        try await sdk.models.registry.markDownloaded(info, files: [.init(relativePath: "gone.gguf", sizeBytes: size, sha256: nil)])
        #expect(await sdk.models.get(id: "gone")?.isDownloaded == true)
        try FileManager.default.removeItem(at: file)
        #expect(await sdk.models.get(id: "gone")?.isDownloaded == false)
        let report = await sdk.models.refresh(rescanLocal: true)
        #expect(report.pruned.isEmpty)
        #expect(await sdk.models.get(id: "gone") != nil)
        let pruned = await sdk.models.refresh(rescanLocal: true, pruneOrphans: true)
        #expect(pruned.pruned == ["gone"])
        #expect(await sdk.models.get(id: "gone") == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.path))
        // Built-in models are never pruned.
        #expect(await sdk.models.get(id: "qwen3-0.6b") != nil)
    }

    @Test("a truncated or garbage manifest never crashes and never hides the other models; rescan rebuilds it")
    func corruptManifests() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        let good = try await sdk.registerModel(id: "good", name: "Good", url: "https://example.com/good.gguf", framework: .llamaCpp, modality: .language)
        // A catalog model on disk with a garbage manifest.
        let qwenDir = sdk.models.layout.modelDirectory(id: "qwen3-0.6b", framework: .llamaCpp)
        try FileManager.default.createDirectory(at: qwenDir, withIntermediateDirectories: true)
        try Data(repeating: 3, count: 64).write(to: qwenDir.appendingPathComponent("Qwen3-0.6B-Q8_0.gguf"))
        try Data("{\"schemaVersion\": 1, \"model\": {\"id\": \"qw".utf8).write(to: qwenDir.appendingPathComponent("manifest.json"))
        // A registered model whose manifest is binary garbage and which has a GGUF file.
        let strayDir = sdk.models.layout.modelDirectory(id: "stray", framework: .llamaCpp)
        try FileManager.default.createDirectory(at: strayDir, withIntermediateDirectories: true)
        try Data([0, 255, 13, 10, 0]).write(to: strayDir.appendingPathComponent("manifest.json"))
        try Data(repeating: 9, count: 32).write(to: strayDir.appendingPathComponent("stray.gguf"))
        // A garbage manifest with no files at all.
        let emptyDir = sdk.models.layout.modelDirectory(id: "empty", framework: .llamaCpp)
        try FileManager.default.createDirectory(at: emptyDir, withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: emptyDir.appendingPathComponent("manifest.json"))

        let before = try await sdk.models.list()
        #expect(before.contains { $0.id == good.id })
        #expect(before.contains { $0.id == "qwen3-0.6b" && !$0.isDownloaded })
        let report = await sdk.models.refresh(rescanLocal: true)
        #expect(Set(report.recovered) == ["qwen3-0.6b", "stray"])
        #expect(report.problems["empty"] != nil)
        let qwen = try #require(await sdk.models.get(id: "qwen3-0.6b"))
        #expect(qwen.isDownloaded && qwen.source == .builtIn)
        let stray = try #require(await sdk.models.get(id: "stray"))
        #expect(stray.source == .discovered && stray.isDownloaded && stray.format == .gguf)
        #expect(await sdk.models.get(id: good.id) != nil)
    }

    @Test("bad ids are rejected with a clear error and touch no file", arguments: [
        "../x", "a/b", "", String(repeating: "a", count: 300), "nul\u{0}byte", "..", ".hidden", "tab\there", "back\\slash",
    ])
    func badIDs(id: String) async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        #expect(await errorCode {
            try await sdk.registerModel(id: id, name: "x", url: "https://example.com/x.gguf", framework: .llamaCpp, modality: .language)
        } == .invalidConfiguration)
        do {
            try await sdk.models.delete(id: id)
            Issue.record("delete accepted id \(id.debugDescription)")
        } catch let error as RunAnywhereError {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.message.isEmpty)
        }
        #expect(await sdk.models.get(id: id) == nil)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        #expect(leftovers.allSatisfy { $0 == "models" })
        #expect(!FileManager.default.fileExists(atPath: dir.url.deletingLastPathComponent().appendingPathComponent("x").path))
    }

    @Test("a file that is not a valid GGUF is refused when marked downloaded, naming the problem")
    func invalidGGUF() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        let info = try await sdk.registerModel(id: "bad-gguf", name: "Bad", url: "https://example.com/bad.gguf", framework: .llamaCpp, modality: .language)
        let folder = sdk.models.layout.modelDirectory(id: info.id, framework: .llamaCpp)
        try Data("GGUF but not really".utf8).write(to: folder.appendingPathComponent("bad.gguf"))
        do {
            try await sdk.models.registry.markDownloaded(info, files: [.init(relativePath: "bad.gguf", sizeBytes: 19, sha256: nil)])
            Issue.record("a garbage GGUF was accepted")
        } catch let error as RunAnywhereError {
            #expect(error.code == .invalidModelFormat)
            #expect(error.message.contains("bad.gguf"))
        }
        #expect(await sdk.models.get(id: "bad-gguf")?.isDownloaded == false)
    }

    @Test("unknown ids give modelNotFound; unsafe URLs and file names are refused")
    func unknownAndUnsafe() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        #expect(await errorCode { try await sdk.models.delete(id: "no-such-model") } == .modelNotFound)
        for url in ["file:///etc/passwd", "ftp://example.com/m.gguf", "https://user:pw@example.com/m.gguf", "not a url"] {
            #expect(await errorCode {
                try await sdk.registerModel(name: "x", url: url, framework: .llamaCpp, modality: .language)
            } == .invalidConfiguration, "\(url)")
        }
        let evil = ModelFileDescriptor(url: URL(string: "https://example.com/a.gguf")!, fileName: "../../a.gguf")
        #expect(await errorCode {
            try await sdk.registerModel(multiFile: [evil], id: "evil", name: "Evil", framework: .llamaCpp, modality: .vision)
        } == .invalidConfiguration)
        #expect(await errorCode {
            try await sdk.registerModel(name: "x", url: "https://example.com/x.gguf", framework: .llamaCpp, modality: .language, sha256: "abc")
        } == .invalidConfiguration)
    }

    @Test("the three registration shapes derive what they can and persist it")
    func registrationShapes() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let sdk = makeSDK(dir)
        let archive = try await sdk.registerModel(archive: "https://example.com/asr/model.tar.gz", structure: ArchiveStructure(rootDirectory: "model", expectedFiles: ["enc.onnx"]), name: "ASR", framework: .onnx, modality: .speechRecognition)
        guard case .archive(_, let s) = archive.artifact else { Issue.record("not an archive"); return }
        #expect(s.format == .tarGz && archive.id == "model")
        #expect(await errorCode {
            try await sdk.registerModel(archive: "https://example.com/asr/model.rar", structure: ArchiveStructure(), name: "x", framework: .onnx, modality: .speechRecognition)
        } == .invalidConfiguration)
        let files = [
            ModelFileDescriptor(url: URL(string: "https://example.com/vlm/model.gguf")!, role: .model),
            ModelFileDescriptor(url: URL(string: "https://example.com/vlm/mmproj.gguf")!, role: .projector),
        ]
        let vlm = try await sdk.registerModel(multiFile: files, id: "my-vlm", name: "My VLM", framework: .llamaCpp, modality: .vision)
        #expect(vlm.artifact.files.count == 2 && vlm.format == .gguf)
        let reread = try #require(await makeSDK(dir).models.get(id: "my-vlm"))
        #expect(reread.artifact == vlm.artifact)
        #expect(reread.category == .vision)
    }

    @Test("the Hugging Face token comes from setHfToken, then HF_TOKEN, then the login file, and only goes to its hosts")
    func tokenResolution() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let layout = StorageLayout(root: dir.url)
        let hfFile = dir.url.appendingPathComponent(".cache/huggingface/token")
        try FileManager.default.createDirectory(at: hfFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("hf_fromfile\n".utf8).write(to: hfFile)
        let store = HFTokenStore(layout: layout, environment: ["HOME": dir.path], extraTrustedHosts: [])
        #expect(store.token == "hf_fromfile")
        let env = HFTokenStore(layout: layout, environment: ["HOME": dir.path, "HF_TOKEN": "hf_env"], extraTrustedHosts: [])
        #expect(env.token == "hf_env")
        try env.set("hf_explicit", persist: true)
        #expect(env.token == "hf_explicit")
        var st = stat()
        #expect(stat(layout.tokenFile.path, &st) == 0 && (st.st_mode & 0o777) == 0o600)
        #expect(env.authorizationHeader(for: URL(string: "https://huggingface.co/Qwen/x/resolve/main/a.gguf")!) == "Bearer hf_explicit")
        #expect(env.authorizationHeader(for: URL(string: "https://cdn-lfs.hf.co/a")!) == "Bearer hf_explicit")
        #expect(env.authorizationHeader(for: URL(string: "http://huggingface.co/a")!) == nil)
        #expect(env.authorizationHeader(for: URL(string: "https://huggingface.co.evil.com/a")!) == nil)
        #expect(env.authorizationHeader(for: URL(string: "https://example.com/a")!) == nil)
    }

    @Test("the storage root follows RUNANYWHERE_HOME, then XDG_DATA_HOME, then ~/.local/share")
    func storageRoot() {
        #expect(StorageLayout.defaultRoot(environment: ["RUNANYWHERE_HOME": "/data/ra", "HOME": "/h"]).path == "/data/ra")
        #expect(StorageLayout.defaultRoot(environment: ["XDG_DATA_HOME": "/xdg", "HOME": "/h"]).path == "/xdg/runanywhere")
        #expect(StorageLayout.defaultRoot(environment: ["HOME": "/h"]).path == "/h/.local/share/runanywhere")
    }

    @Test("removing a folder that another writer keeps filling succeeds (FileManager calls that race 'permission denied'); a real failure keeps its system error")
    func removeTreeRace() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ra-rmtree-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        final class Flag: @unchecked Sendable { let lock = NSLock(); var stop = false
            var value: Bool { lock.lock(); defer { lock.unlock() }; return stop } }
        for trial in 0..<20 {
            let dir = root.appendingPathComponent("t\(trial)/sub")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for i in 0..<100 { #expect(FileManager.default.createFile(atPath: dir.appendingPathComponent("f\(i)").path, contents: Data([1]))) }
            let flag = Flag()
            let writer = Thread {
                var i = 0
                while !flag.value && i < 3_000 {
                    i += 1
                    let fd = open(dir.appendingPathComponent("n\(i)").path, O_CREAT | O_WRONLY, 0o644)
                    if fd >= 0 { close(fd) }
                }
            }
            writer.start()
            try FileSystem.removeTree(root.appendingPathComponent("t\(trial)"))
            flag.lock.lock(); flag.stop = true; flag.lock.unlock()
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("t\(trial)").path))
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        #expect(left.isEmpty, "left behind: \(left)")
        #expect(FileSystem.isRemovalLeftover(".t3.removing-\(UUID().uuidString)", of: "t3"))
        #expect(!FileSystem.isRemovalLeftover(".t3.removing-x", of: "t3") && !FileSystem.isRemovalLeftover("t3", of: "t3"))
        // Absent is removed; a path through a file is a real error with its own number.
        try FileSystem.removeTree(root.appendingPathComponent("absent"))
        let file = root.appendingPathComponent("plain")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data([1])))
        #expect(throws: (any Error).self) { try FileSystem.removeTree(file.appendingPathComponent("below")) }
        do {
            try FileSystem.removeTree(file.appendingPathComponent("below"))
        } catch {
            let ns = error as NSError
            #expect(ns.domain == NSPOSIXErrorDomain && ns.code == Int(ENOTDIR), "\(ns)")
        }
        try FileSystem.removeTree(file)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}
