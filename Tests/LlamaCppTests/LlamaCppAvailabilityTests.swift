import Foundation
import RunAnywhere
import RunAnywhereLlamaCpp
import RunAnywhereTestSupport
import Testing

/// What happens where llama.cpp is not installed (runs everywhere: each test points the backend at a folder
/// without a usable llama.cpp).
@Suite("llama.cpp backend where llama.cpp is not installed")
struct LlamaCppAvailabilityTests {
    @Test("a library folder without libllama: the reason names the folder and the install script")
    func missingFolder() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let why = try #require(LlamaCppBackend(libraryDirectory: dir.url).unavailableReason)
        #expect(why.contains(dir.url.path) && why.contains("scripts/install-llamacpp.sh"), "\(why)")
    }

    @Test("RUNANYWHERE_LLAMACPP_LIB pointing at nothing is reported as such, not silently skipped")
    func environmentVariable() throws {
        let why = try #require(LlamaCppBackend(environment: ["RUNANYWHERE_LLAMACPP_LIB": "/nonexistent/llama"]).unavailableReason)
        #expect(why.contains("RUNANYWHERE_LLAMACPP_LIB") && why.contains("/nonexistent/llama"), "\(why)")
    }

    @Test("a libllama that is not a library: the reason says it could not be opened")
    func brokenLibrary() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        for name in ["ggml-base", "ggml-cpu", "ggml", "llama"] {
            try Data("not a shared library".utf8).write(to: dir.url.appendingPathComponent("lib\(name).so"))
        }
        let why = try #require(LlamaCppBackend(libraryDirectory: dir.url).unavailableReason)
        // Where another test already opened the real llama.cpp, this process refuses a second one before looking.
        #expect(why.contains("could not open") || why.contains("this process already uses llama.cpp from"), "\(why)")
    }

    @Test("the page's pinning example fails with an actionable .backendUnavailable; required: false falls back")
    func pinningWithoutLlamaCpp() async throws {
        let libs = try TemporaryDirectory(); defer { libs.remove() }
        let env = try await LlamaCppEnvironment(backend: LlamaCppBackend(libraryDirectory: libs.url)); defer { env.close() }
        let id = try await env.demo()
        let pinned = LoadOptions(backendPreferences: [BackendPreference(backend: .llamaCpp, required: true)])
        do {
            _ = try await env.sdk.models.load(id: id, options: pinned)
            Issue.record("loading with llama.cpp required succeeded without llama.cpp")
        } catch let error as RunAnywhereError {
            #expect(error.code == .backendUnavailable)
            #expect(error.message.contains("llamaCpp") && error.message.contains("scripts/install-llamacpp.sh"), "\(error.message)")
        }
        #expect(await env.sdk.models.state().loaded.isEmpty)

        let preferred = LoadOptions(backendPreferences: [BackendPreference(backend: .llamaCpp, required: false)])
        let loaded = try await env.sdk.models.load(id: id, options: preferred)
        #expect(loaded.backend == .native)
        #expect(loaded.backendNote?.contains("llamaCpp cannot serve it") == true, "\(loaded.backendNote ?? "no note")")

        let plain = try await env.sdk.models.load(id: id, options: LoadOptions(forceReload: true))
        #expect(plain.backend == .native && plain.backendNote == nil)
    }
}
