import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport

/// An SDK over a temporary root with the demo models published on a loopback mirror.
struct DemoEnvironment {
    let dir: TemporaryDirectory
    let mirror: ModelMirror
    let sdk: RunAnywhereSDK

    init(configuration: (URL) -> RunAnywhereConfiguration = { RunAnywhereConfiguration(storageRoot: $0, environment: [:]) }) throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-residency")
        mirror = try ModelMirror()
        sdk = RunAnywhereSDK(configuration: configuration(dir.url))
    }

    /// Registers (and optionally downloads) a demo model; returns its id.
    @discardableResult
    func demo(_ variant: DemoModel.Variant, download: Bool = true) async throws -> String {
        let info = try await mirror.registerDemoModel(variant, with: sdk)
        if download {
            for try await _ in try await sdk.models.download(id: info.id) {}
        }
        return info.id
    }

    func close() {
        mirror.stop()
        dir.remove()
    }
}

@Suite("Residency")
struct ResidencyTests {
    @Test("load returns what serves the model, and state() shows it")
    func loadAndState() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let loaded = try await env.sdk.models.load(id: id)
        #expect(loaded.id == id && loaded.backend == .native && loaded.backendNote == nil)
        #expect(loaded.contextLength == 2048)   // the model's maximum, under the 4096 default cap
        #expect(loaded.threads >= 1 && loaded.memoryBytes > 0 && loaded.estimatedMemoryBytes > 0 && loaded.loadSeconds >= 0)
        let state = await env.sdk.models.state()
        #expect(state.loaded.map(\.id) == [id])
        #expect(state.isLoaded(id) && state.memoryInUseBytes == loaded.memoryBytes)
        #expect(state.storageUsedBytes > 0 && (state.storageFreeBytes ?? 0) > 0)
    }

    @Test("loading again with the same options is free; other options or forceReload load again")
    func reloadRules() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let a = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 256, threads: 1))
        let b = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 256, threads: 1))
        #expect(a.loadedAt == b.loadedAt)
        let c = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 512, threads: 1))
        #expect(c.loadedAt > a.loadedAt && c.contextLength == 512)
        let d = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 512, threads: 1, forceReload: true))
        #expect(d.loadedAt > c.loadedAt)
        #expect(await env.sdk.models.state().loaded.count == 1)
    }

    @Test("every LoadOptions field is honoured or refused with a clear error")
    func optionHandling() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let models = env.sdk.models
        let refused: [(LoadOptions, RunAnywhereError.Code)] = [
            (LoadOptions(framework: .onnx), .invalidConfiguration),
            (LoadOptions(accelerator: .requireGpu), .backendUnavailable),
            (LoadOptions(accelerator: .cpuOnly, useGpu: true), .invalidConfiguration),
            (LoadOptions(backendPreferences: [BackendPreference(backend: .onnx, required: true)]), .backendUnavailable),
            (LoadOptions(threads: 0), .invalidConfiguration),
            (LoadOptions(threads: 100_000), .invalidConfiguration),
            (LoadOptions(contextLength: 8), .invalidConfiguration),
            (LoadOptions(contextLength: 1_000_000), .invalidConfiguration),
        ]
        for (options, code) in refused {
            #expect(await errorCode { try await models.load(id: id, options: options) } == code, "\(options)")
        }
        #expect(await models.state().loaded.isEmpty, "a refused load must leave nothing resident")

        // (.llamaCpp, which may or may not be installed here, has tests of its own: LlamaCppAvailabilityTests.)
        let fellBack = try await models.load(id: id, options: LoadOptions(backendPreferences: [BackendPreference(backend: .onnx, required: false)]))
        #expect(fellBack.backend == .native)
        #expect(fellBack.backendNote?.contains("onnx") == true)
        let gpu = try await models.load(id: id, options: LoadOptions(forceReload: true, useGpu: true))
        #expect(gpu.backendNote?.contains("GPU") == true)
        let pinned = try await models.load(id: id, options: LoadOptions(threads: 1, framework: .llamaCpp))
        #expect(pinned.threads == 1)

        #expect(await errorCode { try await models.load(id: "no-such-model") } == .modelNotFound)
        let notOnDisk = try await env.demo(.sea, download: false)
        #expect(await errorCode { try await models.load(id: notOnDisk) } == .modelNotDownloaded)
        #expect(await errorCode { try await models.load(id: "qwen3-0.6b") } == .modelNotDownloaded)
    }

    @Test("a memory budget smaller than the model gives insufficientMemory before anything is loaded")
    func memoryBudget() async throws {
        let env = try DemoEnvironment { RunAnywhereConfiguration(storageRoot: $0, memoryBudgetBytes: 100_000, environment: [:]) }
        defer { env.close() }
        let id = try await env.demo(.forest)
        do {
            try await env.sdk.models.load(id: id)
            Issue.record("loaded over the budget")
        } catch let error as RunAnywhereError {
            #expect(error.code == .insufficientMemory)
            #expect(error.message.contains("100 kB"), "the message names what is available: \(error.message)")
            #expect(error.modelId == id)
        }
        #expect(await env.sdk.models.state().loaded.isEmpty)
    }

    @Test("a load that fails leaves what was resident as it was")
    func failedLoadKeepsState() async throws {
        // Learn the estimates at two context lengths, then set a budget between them.
        let probe = try DemoEnvironment(); defer { probe.close() }
        let pid = try await probe.demo(.forest)
        let small = try await probe.sdk.models.load(id: pid, options: LoadOptions(contextLength: 256)).estimatedMemoryBytes
        let large = try await probe.sdk.models.load(id: pid, options: LoadOptions(contextLength: 2048)).estimatedMemoryBytes
        #expect(large > small)
        let env = try DemoEnvironment { RunAnywhereConfiguration(storageRoot: $0, memoryBudgetBytes: (small + large) / 2, environment: [:]) }
        defer { env.close() }
        let id = try await env.demo(.forest)
        let first = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 256))
        #expect(await errorCode { try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 2048)) } == .insufficientMemory)
        let state = await env.sdk.models.state()
        #expect(state.loaded.count == 1 && state.loaded.first?.contextLength == 256 && state.loaded.first?.loadedAt == first.loadedAt)
        let r = try await env.sdk.llm.generate(prompt: "Once upon a time", options: LlmOptions(model: id, maxTokens: 3))
        #expect(r.outputTokens > 0, "the model that was resident still answers")
    }

    @Test("concurrent loads of one model share one load")
    func coalescedLoads() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let models = env.sdk.models
        async let a = models.load(id: id, options: LoadOptions(contextLength: 512))
        async let b = models.load(id: id, options: LoadOptions(contextLength: 512))
        async let c = models.load(id: id, options: LoadOptions(contextLength: 512))
        let (x, y, z) = try await (a, b, c)
        #expect(x.loadedAt == y.loadedAt && y.loadedAt == z.loadedAt)
        #expect(await models.state().loaded.count == 1)
    }

    @Test("unload is idempotent; unloadAll(category:) only touches that category; delete unloads first")
    func unloading() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let a = try await env.demo(.forest)
        let b = try await env.demo(.sea)
        let models = env.sdk.models
        try await models.load(id: a)
        try await models.load(id: b)
        try await models.unload(id: a)
        try await models.unload(id: a)
        #expect(await models.state().loaded.map(\.id) == [b])
        try await models.unloadAll(category: .speechRecognition)
        #expect(await models.state().loaded.map(\.id) == [b])
        try await models.unloadAll(category: .language)
        #expect(await models.state().loaded.isEmpty)
        try await models.load(id: a)
        try await models.delete(id: a)
        #expect(await models.state().loaded.isEmpty)
        #expect(await models.get(id: a)?.isDownloaded == false)
        try await models.load(id: b)
        try await models.unloadAll()
        #expect(await models.state().loaded.isEmpty)
    }

    @Test("with maxResidentModels, loading evicts the least recently used model, never one that is generating")
    func lruEviction() async throws {
        let env = try DemoEnvironment { RunAnywhereConfiguration(storageRoot: $0, maxResidentModels: 1, environment: [:]) }
        defer { env.close() }
        let a = try await env.demo(.forest)
        let b = try await env.demo(.sea)
        let models = env.sdk.models
        try await models.load(id: a)
        try await models.load(id: b)
        #expect(await models.state().loaded.map(\.id) == [b])
        try await models.load(id: a)
        #expect(await models.state().loaded.map(\.id) == [a])

        // A model in the middle of generating is not evicted: a gated backend holds its call open.
        let gate = GatedBackend()
        await models.registerBackend(gate)
        let url = env.mirror.publish("gated.bin", data: Data(repeating: 1, count: 1000))
        let gated = try await env.sdk.registerModel(id: "gated", name: "Gated", url: url.absoluteString, framework: .other, modality: .language)
        for try await _ in try await models.download(id: gated.id) {}
        let loadedGated = try await models.load(id: gated.id)
        #expect(loadedGated.backend == .onnx)
        #expect(await models.state().loaded.map(\.id) == [gated.id])
        let llm = env.sdk.llm
        let call = Task { try await llm.generate(prompt: "hi", options: LlmOptions(model: gated.id)) }
        await gate.waitUntilGenerating()
        try await models.load(id: a)
        #expect(Set(await models.state().loaded.map(\.id)) == [a, gated.id], "the generating model must stay resident")
        gate.open()
        let result = try await call.value
        #expect(result.text == "done" && result.backend == .onnx)
        // Once its call ended, the limit holds again: the least recently used idle model went.
        #expect(await models.state().loaded.map(\.id) == [gated.id])
    }
}

/// A backend registered from outside the SDK (as a third-party engine would be) whose generation
/// waits until the test opens it. It serves only `.other`-framework models.
final class GatedBackend: InferenceBackend, @unchecked Sendable {
    let id = BackendID.onnx
    private let started = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)

    func cannotServe(_ model: ModelInfo) -> String? { model.framework == .other ? nil : "only serves .other" }
    func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        BackendMemoryEstimate(totalBytes: 1000, weightsBytes: 1000, workingBytes: 0, contextLength: contextLength ?? 128, maximumContextLength: nil)
    }
    func load(_ request: BackendLoadRequest) throws -> any BackendModel { Model(backend: self) }
    func open() { gate.signal() }
    func waitUntilGenerating() async {
        await withCheckedContinuation { c in DispatchQueue.global().async { self.started.wait(); c.resume() } }
    }

    final class Model: TextGenerationModel, @unchecked Sendable {
        let backend: GatedBackend
        init(backend: GatedBackend) { self.backend = backend }
        var memoryBytes: Int64 { 1000 }
        func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
            backend.started.signal()
            backend.gate.wait()
            onText("done")
            return BackendGenerationStats(promptTokens: 1, outputTokens: 1, promptSeconds: 0.001, decodeSeconds: 0.001, finishReason: .maxTokens)
        }
    }
}
