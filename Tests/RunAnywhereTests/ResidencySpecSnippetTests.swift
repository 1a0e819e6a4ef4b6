import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereLlamaCpp
import RunAnywhereTestSupport
import Testing

/// Inside this file `RunAnywhere` names a stand-in bound, per task, to a test's own SDK instance, so the
/// page's loading, switching, unloading, state and deleting snippets run as written against real models
/// (the project's demo models on a loopback mirror) without touching the process-wide instance.
private enum RunAnywhere {
    @TaskLocal static var instance = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
        storageRoot: FileManager.default.temporaryDirectory.appendingPathComponent("runanywhere-unbound")))
    static var models: ModelManager { instance.models }
    static var llm: LLMService { instance.llm }
}

/// "Switching models", as on the page (minus `@Observable`, whose module is not available here).
@MainActor
private final class ModelSwitcher {
    private(set) var current: String?

    func use(_ id: String) async throws {
        if let current, current != id {
            try await RunAnywhere.models.unload(id: current)
        }
        _ = try await RunAnywhere.models.load(id: id)
        current = id
    }
}

/// "A complete picker", as on the page (minus `@Observable`).
@MainActor
private final class ModelPicker {
    var models: [ModelInfo] = []
    var downloading: String?
    var fraction: Double = 0

    func load() async throws {
        models = try await RunAnywhere.models.list(filter: ModelFilter(category: .language))
    }

    func download(_ id: String) async throws {
        downloading = id
        fraction = 0
        defer { downloading = nil }

        for try await event in try await RunAnywhere.models.download(id: id) {
            if case .progress(let p) = event {
                fraction = Double(p.fraction ?? 0)
            }
        }

        try await load()
    }

    func use(_ id: String) async throws {
        try await RunAnywhere.models.unloadAll(category: .language)
        _ = try await RunAnywhere.models.load(id: id)
    }

    func delete(_ id: String) async throws {
        try await RunAnywhere.models.delete(id: id)
        try await load()
    }
}

@Suite("Spec snippets: loading, switching, unloading, state, deleting")
struct ResidencySpecSnippetTests {
    /// The page's ids ("qwen3-0.6b", "llama-3.2-1b") are Hugging Face downloads; here two demo models stand in.
    @Test("Loading, with and without options; What is resident right now")
    func loading() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        try await RunAnywhere.$instance.withValue(env.sdk) {
            let loaded = try await RunAnywhere.models.load(id: id)
            #expect(loaded.id == id)

            let withOptions = try await RunAnywhere.models.load(
                id: id,
                options: LoadOptions(contextLength: 1024, threads: 2)
            )
            #expect(withOptions.contextLength == 1024 && withOptions.threads == 2)

            let pinned = LoadOptions(
                backendPreferences: [BackendPreference(backend: .llamaCpp, required: true)]
            )
            // "What you want when you are measuring one engine specifically": llama.cpp or a clear failure.
            if LlamaCppBackend().unavailableReason == nil {
                #expect(try await RunAnywhere.models.load(id: id, options: pinned).backend == .llamaCpp)
                try await RunAnywhere.models.load(id: id, options: LoadOptions(forceReload: true))
            } else {
                #expect(await errorCode { try await RunAnywhere.models.load(id: id, options: pinned) } == .backendUnavailable)
            }

            let state = await RunAnywhere.models.state()
            #expect(state.loaded.map(\.id) == [id])
        }
    }

    @Test("Switching models: load the new one, unload the old one; or per call")
    func switching() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let a = try await env.demo(.forest)
        let b = try await env.demo(.sea)
        try await RunAnywhere.$instance.withValue(env.sdk) {
            let switcher = ModelSwitcher()
            try await switcher.use(a)
            try await switcher.use(b)
            #expect(await switcher.current == b)
            #expect(await RunAnywhere.models.state().loaded.map(\.id) == [b])

            let p = "Once upon a time"
            let first = try await RunAnywhere.llm.generate(prompt: p, options: LlmOptions(model: a))
            let second = try await RunAnywhere.llm.generate(prompt: p, options: LlmOptions(model: b))
            #expect(first.modelId == a && second.modelId == b)
        }
    }

    @Test("Unloading and Deleting")
    func unloadingAndDeleting() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let a = try await env.demo(.forest)
        let b = try await env.demo(.sea)
        try await RunAnywhere.$instance.withValue(env.sdk) {
            _ = try await RunAnywhere.models.load(id: a)
            _ = try await RunAnywhere.models.load(id: b)
            try await RunAnywhere.models.unload(id: a)
            #expect(await RunAnywhere.models.get(id: a)?.isDownloaded == true, "unloading leaves the file on disk")
            try await RunAnywhere.models.unloadAll(category: .language)
            try await RunAnywhere.models.unloadAll()
            #expect(await RunAnywhere.models.state().loaded.isEmpty)

            _ = try await RunAnywhere.models.load(id: a)
            try await RunAnywhere.models.delete(id: a)
            #expect(await RunAnywhere.models.state().loaded.isEmpty, "delete unloads first")
            #expect(await RunAnywhere.models.get(id: a)?.isDownloaded == false)
        }
    }

    @Test("A complete picker")
    func picker() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let a = try await env.demo(.forest, download: false)
        let b = try await env.demo(.sea)
        try await RunAnywhere.$instance.withValue(env.sdk) {
            let picker = ModelPicker()
            try await picker.load()
            #expect(await picker.models.contains { $0.id == a && !$0.isDownloaded })
            try await picker.download(a)
            #expect(await picker.models.contains { $0.id == a && $0.isDownloaded })
            #expect(await picker.downloading == nil)
            #expect(await picker.fraction == 1)
            try await picker.use(a)
            try await picker.use(b)
            #expect(await RunAnywhere.models.state().loaded.map(\.id) == [b])
            try await picker.delete(a)
            #expect(await picker.models.contains { $0.id == a && !$0.isDownloaded })
        }
    }
}
