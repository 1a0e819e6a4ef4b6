import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An import environment whose SDK looks for other tools' models in fake stores under its folder.
func discoveryEnvironment(stores: FakeModelStores? = nil) throws -> (ImportEnvironment, FakeModelStores) {
    var made: FakeModelStores?
    let env = try ImportEnvironment { base in
        let s = try stores ?? FakeModelStores(base: base)
        made = s
        return s.environment(home: base.appendingPathComponent("home"))
    }
    return (env, try #require(made))
}

@Suite("Local discovery")
struct LocalDiscoveryTests {
    @Test("GGUFs in a Hugging Face cache and an Ollama store are found, imported by hard link, run, and delete leaves the blobs byte-identical")
    func findImportRunDelete() async throws {
        let (env, stores) = try discoveryEnvironment(); defer { env.close() }
        let forest = DemoModel.gguf(.forest).data()
        let sea = DemoModel.gguf(.sea).data()
        let snapshot = try stores.addHuggingFace(repository: "someone/Forest-GGUF", file: "Forest-Q8_0.gguf", data: forest)
        let manifest = try stores.addOllama(model: "sea", tag: "tiny", data: sea)

        let discovery = await env.sdk.models.discoverLocal()
        #expect(discovery.skipped.isEmpty, "\(discovery.skipped)")
        #expect(discovery.searched.allSatisfy { $0.exists })
        let hf = try #require(discovery.models.first { $0.source == .huggingFace })
        let ol = try #require(discovery.models.first { $0.source == .ollama })
        #expect(hf.name == "someone/Forest-GGUF/Forest-Q8_0.gguf" && hf.suggestedId == "forest-q8_0" && hf.sizeBytes == Int64(forest.count))
        #expect(hf.referencePath == snapshot && hf.path.path.hasSuffix("/blobs/" + FakeModelStores.sha256(forest)))
        #expect(hf.claimedSHA256 == FakeModelStores.sha256(forest) && hf.importedAs == nil && hf.catalogModelId == nil)
        #expect(ol.name == "sea:tiny" && ol.suggestedId == "sea-tiny" && ol.referencePath == manifest && ol.sizeBytes == Int64(sea.count))
        #expect(ol.path.lastPathComponent == "sha256-" + FakeModelStores.sha256(sea))

        var blobs: [URL: String] = [:]
        for found in [hf, ol] {
            let imported = try await env.sdk.models.importLocal(found)
            #expect(imported.placement == .hardLink && imported.model.id == found.suggestedId && imported.model.source == .imported)
            #expect(fileIdentity(try #require(imported.model.primaryFilePath)) == fileIdentity(found.path))
            let text = try await env.greedy(imported.model.id)
            #expect(!text.isEmpty, "\(found.name) runs")
            blobs[found.path] = fileSHA256(found.path)
        }
        let again = await env.sdk.models.discoverLocal()
        #expect(Set(again.models.compactMap(\.importedAs)) == ["forest-q8_0", "sea-tiny"], "discovery says what is imported")
        for id in ["forest-q8_0", "sea-tiny"] { try await env.sdk.models.delete(id: id) }
        for (blob, sha) in blobs { #expect(fileSHA256(blob) == sha, "\(blob.path) is byte-identical after delete") }
        #expect(fileSHA256(snapshot) == FakeModelStores.sha256(forest), "the snapshot link still resolves")
        #expect(env.leftovers().isEmpty, "\(env.leftovers())")
    }

    @Test("stories260K from an Ollama store continues “Once upon a time” as llama.cpp does",
          .enabled(if: SharedTestData.root != nil, Comment(rawValue: SharedTestData.missingReason)))
    func sharedModelFromOllama() async throws {
        let (env, stores) = try discoveryEnvironment(); defer { env.close() }
        let data = try Data(contentsOf: URL(fileURLWithPath: try #require(SharedTestData.root)).appendingPathComponent("models/stories260K.gguf"))
        try stores.addOllama(model: "stories", tag: "260k", data: data)
        try stores.addHuggingFace(repository: "karpathy/tinyllamas", file: "stories260K.gguf", data: data)
        let discovery = await env.sdk.models.discoverLocal()
        #expect(discovery.models.count == 2, "two stores, two copies of the bytes: \(discovery.models.map(\.name))")
        let found = try #require(discovery.models.first { $0.source == .ollama })
        let imported = try await env.sdk.models.importLocal(found)
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time",
                                               options: LlmOptions(model: imported.model.id, maxTokens: 24, temperature: 0, rawPrompt: true))
        #expect(r.text.hasPrefix(", there was a little girl named Lily."), "\(r.text)")
    }

    @Test("hostile stores: link loops, dangling links, bad digests, path traversal, non-GGUF blobs and false sizes are skipped with reasons")
    func hostileStores() async throws {
        let (env, stores) = try discoveryEnvironment(); defer { env.close() }
        let fm = FileManager.default
        let forest = DemoModel.gguf(.forest).data()
        try stores.addHuggingFace(repository: "good/Forest", file: "Forest.gguf", data: forest)
        try stores.addOllama(model: "good", tag: "latest", data: DemoModel.gguf(.sea).data())
        // Hugging Face: a link to itself, a link to a missing blob, a blob that is not GGUF, a projector, a split part.
        let snapshots = stores.repositoryFolder("bad/Repo").appendingPathComponent("snapshots/rev", isDirectory: true)
        try fm.createDirectory(at: snapshots, withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: snapshots.appendingPathComponent("loop.gguf").path, withDestinationPath: "loop.gguf")
        try fm.createSymbolicLink(atPath: snapshots.appendingPathComponent("dangling.gguf").path, withDestinationPath: "../../blobs/missing")
        try fm.createSymbolicLink(atPath: snapshots.appendingPathComponent("dir-loop").path, withDestinationPath: ".")
        try stores.addHuggingFace(repository: "bad/Text", file: "text.gguf", data: Data("<html>rate limited</html>".utf8))
        try stores.addHuggingFace(repository: "bad/Vision", file: "mmproj-model-f16.gguf", data: forest)
        try stores.addHuggingFace(repository: "bad/Split", file: "Big-Q4_K_M-00001-of-00003.gguf", data: forest)
        // Ollama: a bad digest, a traversal, a non-GGUF blob, a size far beyond the blob's, no model layer, not JSON.
        try stores.addOllama(model: "badhex", data: nil, digest: "sha256:zz")
        try stores.addOllama(model: "traversal", data: nil, digest: "sha256:../../../../etc/passwd")
        try stores.addOllama(model: "dotdot", data: nil, digest: "../" + String(repeating: "a", count: 64))
        try stores.addOllama(model: "nongguf", data: Data(repeating: 0x42, count: 4096))
        try stores.addOllama(model: "huge", data: DemoModel.gguf(.forest).data() + Data([1]), size: 1 << 60)
        try stores.addOllama(model: "missingblob", data: nil, digest: "sha256:" + String(repeating: "e", count: 64))
        try stores.writeOllamaManifest(model: "nolayer", tag: "latest", contents: Data(#"{"layers":[]}"#.utf8))
        try stores.writeOllamaManifest(model: "garbage", tag: "latest", contents: Data([0xFF, 0x00, 0x7B]))
        try stores.writeOllamaManifest(model: "big", tag: "latest", contents: Data(repeating: 0x20, count: 2 << 20))

        let discovery = await env.sdk.models.discoverLocal()
        #expect(Set(discovery.models.map(\.name)) == ["good/Forest/Forest.gguf", "good:latest"])
        func reason(_ fragment: String) -> String? {
            discovery.skipped.first { $0.path.path.contains(fragment) }?.reason
        }
        let expectations: [(String, String)] = [
            ("loop.gguf", "loop"), ("dangling.gguf", "does not exist"), ("text.gguf", "not a GGUF"), ("mmproj", "projector"),
            ("00001-of-00003", "split"), ("/badhex/", "digest"), ("/traversal/", "digest"), ("/dotdot/", "digest"),
            ("/nongguf/", "not a GGUF"), ("/huge/", "says the model is"), ("/missingblob/", "does not exist"),
            ("/nolayer/", "no model layer"), ("/garbage/", "not the JSON"), ("/big/", "larger than"),
        ]
        for (fragment, words) in expectations {
            let why = reason(fragment)
            #expect(why?.contains(words) == true, "\(fragment): \(why ?? "not skipped")")
        }
    }

    @Test("a catalog model found in the cache counts as downloaded only when its SHA-256 is the catalog's; no request is made")
    func catalogModelVerified() async throws {
        let (env, stores) = try discoveryEnvironment(); defer { env.close() }
        let forest = DemoModel.gguf(.forest).data()
        let sha = FakeModelStores.sha256(forest)
        // Two storage roots with a remote catalog (as cached by an earlier refresh) whose URL points at a closed port.
        let catalog = #"{"version":1,"models":[{"id":"tiny-forest","name":"Tiny forest","category":"language","framework":"llamaCpp","format":"gguf","files":[{"url":"http://127.0.0.1:1/tiny/Tiny-Forest.gguf","fileName":"Tiny-Forest.gguf","sizeBytes":\#(forest.count),"sha256":"\#(sha)"}]}]}"#
        let roots = [env.root, env.dir.url.appendingPathComponent("root2")]
        for root in roots {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("catalog"), withIntermediateDirectories: true)
            try Data(catalog.utf8).write(to: root.appendingPathComponent("catalog/remote.json"))
        }
        let environment = stores.environment(home: env.dir.url.appendingPathComponent("home"))
        let first = ImportEnvironment.sdk(root: roots[0], environment: environment)
        let second = ImportEnvironment.sdk(root: roots[1], environment: environment)

        // Same name and size, other bytes (the last weight byte differs), in a blob named by their own hash: not the
        // catalog's file, and the discovery says so without reading it.
        var altered = forest
        altered[altered.count - 1] ^= 0x01
        try stores.addHuggingFace(repository: "someone/Tiny", file: "Tiny-Forest.gguf", data: altered)
        let other = try #require(await first.models.discoverLocal().models.first)
        #expect(other.catalogModelId == nil && other.suggestedId == "tiny-forest-hf")
        // The same bytes in a blob that claims the catalog's hash: matched, then refused once hashed.
        try FileManager.default.removeItem(at: stores.repositoryFolder("someone/Tiny"))
        try stores.addHuggingFace(repository: "someone/Tiny", file: "Tiny-Forest.gguf", data: altered, blobName: sha)
        let lying = try #require(await first.models.discoverLocal().models.first)
        #expect(lying.catalogModelId == "tiny-forest" && lying.suggestedId == "tiny-forest")
        #expect(await errorCode { try await first.models.importLocal(lying) } == .checksumMismatch)
        #expect(await errorCode { try await first.models.importLocal(lying, id: "lying-forest") } == .checksumMismatch)
        #expect(await first.models.get(id: "tiny-forest")?.isDownloaded == false)
        #expect(env.leftovers() == ["catalog/remote.json"], "\(env.leftovers())")

        // The right bytes: the catalog model is downloaded, and generating with it needs no download.
        try FileManager.default.removeItem(at: stores.repositoryFolder("someone/Tiny"))
        try stores.addHuggingFace(repository: "someone/Tiny", file: "Tiny-Forest.gguf", data: forest)
        let right = try #require(await second.models.discoverLocal().models.first)
        let imported = try await second.models.importLocal(right)
        #expect(imported.model.id == "tiny-forest" && imported.model.source == .remoteCatalog && imported.model.isDownloaded)
        let text = try await second.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: "tiny-forest", maxTokens: 4, temperature: 0)).text
        #expect(text.hasPrefix(" the") || text.hasPrefix(" there"), "\(text)")
        try await second.models.delete(id: "tiny-forest")
        #expect(fileSHA256(right.path) == sha)
        #expect(await second.models.get(id: "tiny-forest")?.isDownloaded == false, "a catalog model stays listed, not downloaded")
    }

    @Test("a built-in catalog file found in its own Hugging Face repository is not taken for the catalog model: the catalog has no SHA-256 to check it against")
    func builtInCatalogWithoutChecksum() async throws {
        let (env, stores) = try discoveryEnvironment(); defer { env.close() }
        let repository = "bartowski/SmolLM2-135M-Instruct-GGUF", file = "SmolLM2-135M-Instruct-Q8_0.gguf"
        try stores.addHuggingFace(repository: repository, file: file, data: DemoModel.gguf(.forest).data())
        #expect(await env.sdk.models.get(id: "smollm2-135m")?.artifact.files.first?.sha256 == nil, "the premise: no checksum in the catalog")
        let found = try #require(await env.sdk.models.discoverLocal().models.first)
        #expect(found.catalogModelId == nil && found.suggestedId == "smollm2-135m-instruct-q8_0")
        let imported = try await env.sdk.models.importLocal(found)
        #expect(imported.model.id == "smollm2-135m-instruct-q8_0" && imported.model.source == .imported)
        #expect(await env.sdk.models.get(id: "smollm2-135m")?.isDownloaded == false)
        #expect(await errorCode { try await env.sdk.models.importLocal(found, id: "smollm2-135m") } == .invalidConfiguration,
                "nor can it be imported under the catalog model's id")
    }

    @Test("on another file system a discovered file is linked symbolically; when the other tool removes it the model is not downloaded",
          .enabled(if: SmallFilesystem.isAvailable, "needs root to mount a small tmpfs"))
    func symlinkAcrossFileSystems() async throws {
        let small = try SmallFilesystem(bytes: 16 << 20); defer { small.remove() }
        let stores = try FakeModelStores(base: small.url)
        let (env, _) = try discoveryEnvironment(stores: stores); defer { env.close() }
        try stores.addOllama(model: "forest", data: DemoModel.gguf(.forest).data())
        let found = try #require(await env.sdk.models.discoverLocal().models.first)
        let imported = try await env.sdk.models.importLocal(found)
        #expect(imported.placement == .symlink)
        let text = try await env.greedy(imported.model.id)
        #expect(!text.isEmpty)
        let sha = fileSHA256(found.path)
        try await env.sdk.models.delete(id: imported.model.id)
        #expect(fileSHA256(found.path) == sha, "the blob is byte-identical after delete")
        let again = try await env.sdk.models.importLocal(try #require(await env.sdk.models.discoverLocal().models.first))
        try FileManager.default.removeItem(at: found.path)  // `ollama rm`
        #expect(await env.sdk.models.get(id: again.model.id)?.isDownloaded == false)
        #expect(await errorCode { try await env.greedy(again.model.id) } == .modelNotDownloaded)
    }
}

extension ImportEnvironment {
    /// Another SDK instance over `root` with this environment.
    static func sdk(root: URL, environment: [String: String]) -> RunAnywhereSDK {
        RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: root, environment: environment))
    }
}
