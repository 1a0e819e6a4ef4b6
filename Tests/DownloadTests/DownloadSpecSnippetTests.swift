import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// Inside this file `RunAnywhere` names a stand-in bound, per task, to a test's own SDK instance, so the
/// documentation's download snippets run verbatim against a loopback server without touching the
/// process-wide instance that other suites configure.
private enum RunAnywhere {
    @TaskLocal static var instance = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
        storageRoot: FileManager.default.temporaryDirectory.appendingPathComponent("runanywhere-unbound")))

    static var models: ModelManager { instance.models }

    static func setHfToken(_ token: String?) { try? instance.setHfToken(token) }

    static func registerModel(name: String, url: String, framework: InferenceFramework, modality: ModelCategory) async throws -> ModelInfo {
        try await instance.registerModel(name: name, url: url, framework: framework, modality: modality)
    }
}

/// "Downloading, with progress" and "Resuming", as written on the page except that the page's literal id
/// ("qwen3-0.6b", a built-in model fetched from Hugging Face) is a parameter here.
private final class DownloadScreen: @unchecked Sendable {
    let id: String
    init(id: String) { self.id = id }

    var fraction: Double = 0
    var speed: Double?
    var eta: Double?
    var isReady = false
    var sawResumable = false

    func download() async throws {
        for try await event in try await RunAnywhere.models.download(id: id) {
            switch event {
            case .progress(let progress):
                self.fraction = progress.fraction ?? 0
                self.speed = progress.bytesPerSecond
                self.eta = progress.etaSeconds
            case .completed:
                self.isReady = true
            default:
                break
            }
        }
    }

    func resumeCheck() async {
        if await RunAnywhere.models.isResumable(id: id) {
            // calling download again continues from where it stopped
            sawResumable = true
        }
    }
}

@Suite("Spec snippets: downloading")
struct DownloadSpecSnippetTests {
    @Test("the download loop and isResumable run against a loopback server")
    func snippets() async throws {
        let f = try SDKFixture()
        defer { f.cleanUp() }
        // A real (tiny, random-weight) GGUF, so the registry can read its header once it is installed.
        let body = [UInt8](GGUFWriter.tinyModel(TinyModelSpec()).data())
        f.server.setRoute("/Qwen3-0.6B.gguf", LoopbackRoute(body: body, etag: "\"q\"", bandwidthBytesPerSecond: 4_000_000,
                                                             plan: [.dropAfter(bytes: body.count / 3)]))
        try await RunAnywhere.$instance.withValue(f.sdk) {
            let local = try await RunAnywhere.registerModel(name: "Qwen3 0.6B (local)", url: f.server.url("/Qwen3-0.6B.gguf").absoluteString,
                                                            framework: .llamaCpp, modality: .language)
            let screen = DownloadScreen(id: local.id)
            // Interrupt the first attempt for good (one attempt allowed), so the resume check has something to see.
            f.sdk.models.downloads.policy.maxAttempts = 1
            await #expect(throws: RunAnywhereError.self) { try await screen.download() }
            #expect(!screen.isReady)
            f.sdk.models.downloads.policy = fastPolicy()
            await screen.resumeCheck()
            #expect(screen.sawResumable)
            screen.sawResumable = false

            // "calling download again continues from where it stopped" (the picker snippet, which downloads the
            // same way, runs as written in RunAnywhereTests' residency snippets).
            try await screen.download()
            #expect(screen.isReady && screen.fraction == 1)
            #expect(f.server.requests.last?.header("Range") != nil)
            let listed = try await RunAnywhere.models.list(filter: ModelFilter(category: .language))
            #expect(listed.contains { $0.id == local.id && $0.isDownloaded && $0.architecture == "llama" })

            await screen.resumeCheck()
            #expect(!screen.sawResumable)
            screen.isReady = false
            try await screen.download()   // already downloaded: completes at once
            #expect(screen.isReady)
            try await RunAnywhere.models.delete(id: local.id)
            #expect(await RunAnywhere.models.get(id: local.id)?.isDownloaded == false)
        }
    }
}
