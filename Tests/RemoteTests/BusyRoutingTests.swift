import Foundation
import RunAnywhere
import RunAnywhereRemote
import RunAnywhereTestSupport
import Synchronization
import Testing

/// An on-device backend whose generation waits at a gate, so a test can hold a model busy.
final class GatedBackend: InferenceBackend, @unchecked Sendable {
    let id = BackendID.native
    let entered = Atomic<Int>(0)
    let open = Atomic<Bool>(false)

    func cannotServe(_ model: ModelInfo) -> String? { nil }

    func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        BackendMemoryEstimate(totalBytes: 1024, weightsBytes: 0, workingBytes: 1024, contextLength: contextLength ?? 64, maximumContextLength: nil)
    }

    func load(_ request: BackendLoadRequest) throws -> any BackendModel { Gated(backend: self) }

    final class Gated: TextGenerationModel, @unchecked Sendable {
        let backend: GatedBackend
        init(backend: GatedBackend) { self.backend = backend }
        var memoryBytes: Int64 { 1024 }

        func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
            backend.entered.add(1, ordering: .sequentiallyConsistent)
            while !backend.open.load(ordering: .sequentiallyConsistent), shouldContinue() { usleep(5_000) }
            onText("local")
            return BackendGenerationStats(promptTokens: 1, outputTokens: 1, promptSeconds: 0.001, decodeSeconds: 0.001, finishReason: .endOfGeneration)
        }
    }
}

@Suite("Remote backend: routing a busy model")
struct BusyRoutingTests {
    @Test("with RemoteRouting .busy a call on a model busy on the device goes to the endpoint; without it, it waits its turn")
    func busy() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        for routed in [true, false] {
            let gate = GatedBackend()
            let dir = try TemporaryDirectory(prefix: "runanywhere-busy")
            let mirror = try ModelMirror()
            defer { mirror.stop(); dir.remove() }
            let endpoint = RemoteEndpoint(baseURL: fake.baseURL, models: [RemoteModel(id: "demo-forest", serverModel: FakeOpenAIServer.model)])
            let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url, environment: [:], remoteEndpoints: [endpoint],
                                                                             remoteRouting: routed ? RemoteRouting(when: [.busy]) : .never),
                                     backends: [gate, RemoteBackend(endpoint: endpoint)])
            let info = try await mirror.registerDemoModel(.forest, with: sdk)
            for try await _ in try await sdk.models.download(id: info.id) {}
            let before = fake.server.acceptedConnectionCount
            let first = Task { try await sdk.llm.generate(prompt: "a", options: LlmOptions(model: info.id, maxTokens: 4)) }
            while gate.entered.load(ordering: .sequentiallyConsistent) == 0 { try await Task.sleep(nanoseconds: 5_000_000) }
            let second = Task { try await sdk.llm.generate(prompt: "b", options: LlmOptions(model: info.id, maxTokens: 4)) }
            if routed {
                // Without the detour this would wait for the gate, which opens only below: give up after 10 s.
                let r = try await withTimeout(seconds: 10) { try await second.value }.get()
                #expect(r.backend == .remote(RemoteEndpoint.defaultName))
                #expect(r.text == "Hello, world")
                #expect(r.backendNote?.contains("busy") == true)
                #expect(gate.entered.load(ordering: .sequentiallyConsistent) == 1)
            } else {
                try await Task.sleep(nanoseconds: 300_000_000)
                #expect(fake.server.acceptedConnectionCount == before)
            }
            gate.open.store(true, ordering: .sequentiallyConsistent)
            #expect(try await first.value.text == "local")
            if !routed {
                #expect(try await second.value.backend == .native)
                #expect(fake.server.acceptedConnectionCount == before)
            }
        }
    }
}
