import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport

/// The Swift snippets of the public documentation page, as written, so the API cannot drift from the spec.
/// They use the process-wide `RunAnywhere` instance, so this suite runs serially on its own storage root.
@Suite("Spec snippets", .serialized)
struct SpecSnippetTests {
    let dir: TemporaryDirectory

    init() throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-spec")
        RunAnywhere.configure(RunAnywhereConfiguration(storageRoot: dir.url, environment: ["HOME": dir.path]))
    }

    @Test("What is available: list, filter, get")
    func whatIsAvailable() async throws {
        defer { dir.remove() }
        let models = try await RunAnywhere.models.list()
        #expect(!models.isEmpty)

        let language = try await RunAnywhere.models.list(filter: ModelFilter(category: .language))
        #expect(language.allSatisfy { $0.category == .language })

        var printed: String?
        if let model = await RunAnywhere.models.get(id: "qwen3-0.6b") {
            printed = model.name
        }
        #expect(printed == "Qwen3 0.6B")
    }

    @Test("Registering your own model: single file, archive, multi-file; gated repositories")
    func registering() async throws {
        defer { dir.remove() }
        let info = try await RunAnywhere.registerModel(
            name: "My model",
            url: "https://example.com/model.gguf",
            framework: .llamaCpp,
            modality: .language
        )
        #expect(info.id == "model" && info.source == .registered)

        let structure = ArchiveStructure(rootDirectory: "model", expectedFiles: ["encoder.onnx", "decoder.onnx"])
        let archived = try await RunAnywhere.registerModel(
            archive: "https://example.com/model.tar.gz",
            structure: structure,
            name: "My model",
            framework: .onnx,
            modality: .speechRecognition
        )
        #expect(archived.framework == .onnx && archived.id != info.id)

        let descriptors = [
            ModelFileDescriptor(url: URL(string: "https://example.com/vlm.gguf")!, role: .model),
            ModelFileDescriptor(url: URL(string: "https://example.com/mmproj.gguf")!, role: .projector),
        ]
        let vlm = try await RunAnywhere.registerModel(
            multiFile: descriptors,
            id: "my-vlm",
            name: "My VLM",
            framework: .llamaCpp,
            modality: .vision
        )
        #expect(vlm.id == "my-vlm" && vlm.artifact.files.count == 2)

        let token = "hf_example"
        RunAnywhere.setHfToken(token)
        #expect(RunAnywhere.shared.tokens.authorizationHeader(for: URL(string: "https://huggingface.co/a/b/resolve/main/c.gguf")!) == "Bearer hf_example")
        RunAnywhere.setHfToken(nil)
    }

    @Test("Refreshing the registry, and deleting")
    func refreshingAndDeleting() async throws {
        defer { dir.remove() }
        _ = try await RunAnywhere.registerModel(name: "Doomed", url: "https://example.com/doomed.gguf", framework: .llamaCpp, modality: .language)
        await RunAnywhere.models.refresh(rescanLocal: true)
        try await RunAnywhere.models.delete(id: "doomed")
        #expect(await RunAnywhere.models.get(id: "doomed")?.isDownloaded == false)
        let report = await RunAnywhere.models.refresh(rescanLocal: true, includeRemoteCatalog: false, pruneOrphans: true)
        #expect(report.pruned == ["doomed"])
    }
}
