import Foundation
import RunAnywhere
import RunAnywhereRemote
import RunAnywhereTestSupport
import Testing

/// Routing, privacy and the catalog, against a scripted OpenAI server on loopback.
@Suite("Remote backend: routing, privacy and catalog")
struct RemoteRoutingTests {
    static let key = "sk-secret-\(UUID().uuidString.prefix(12))"

    func endpoint(_ fake: FakeOpenAIServer, models: [RemoteModel], key: String? = RemoteRoutingTests.key) -> RemoteEndpoint {
        RemoteEndpoint(baseURL: fake.baseURL, apiKey: key, models: models, connectTimeoutSeconds: 2, readTimeoutSeconds: 5)
    }

    /// Generating with the demo model fails with the memory error, and the fake server saw no connection.
    func expectMemoryErrorWithoutConnection(_ env: RemoteEnvironment, _ id: String, _ fake: FakeOpenAIServer) async throws {
        let error = await #expect(throws: RunAnywhereError.self) {
            _ = try await env.sdk.llm.generate(prompt: "Once", options: LlmOptions(model: id, maxTokens: 4, temperature: 0))
        }
        #expect(error?.code == .insufficientMemory)
        #expect(fake.server.acceptedConnectionCount == 0)
    }

    @Test("with no remote endpoint configured, a model that does not fit fails on the device and nothing is sent")
    func privacyByDefault() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        // The routing asks for fallbacks and the environment names the server: neither configures an endpoint.
        let env = try RemoteEnvironment(routing: RemoteRouting(when: [.insufficientMemory, .unsupportedOnDevice]), memoryBudget: 4096,
                                        environment: ["RUNANYWHERE_REMOTE_URL": fake.baseURL.absoluteString])
        defer { env.close() }
        let id = try await env.demo()
        try await expectMemoryErrorWithoutConnection(env, id, fake)
        // Pinning a remote backend that is not configured says so, and still sends nothing.
        let pinned = await #expect(throws: RunAnywhereError.self) {
            _ = try await env.sdk.models.load(id: id, options: LoadOptions(backendPreferences: [BackendPreference(backend: .remote("default"), required: true)]))
        }
        #expect(pinned?.code == .backendUnavailable)
        #expect(pinned?.message.contains("remoteEndpoints") == true)
        #expect(fake.server.acceptedConnectionCount == 0)
    }

    @Test("a configured endpoint without a routing policy is not used for a model that does not fit")
    func endpointWithoutPolicyIsNotUsed() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        let env = try RemoteEnvironment(endpoints: [endpoint(fake, models: [RemoteModel(id: "demo-forest", serverModel: FakeOpenAIServer.model)])],
                                        memoryBudget: 4096)
        defer { env.close() }
        let id = try await env.demo()
        try await expectMemoryErrorWithoutConnection(env, id, fake)
    }

    @Test("the routing sends a model that does not fit to the endpoint, and says so in the result and in state()")
    func memoryFallback() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        let env = try RemoteEnvironment(endpoints: [endpoint(fake, models: [RemoteModel(id: "demo-forest", serverModel: FakeOpenAIServer.model)])],
                                        routing: RemoteRouting(when: [.insufficientMemory]), memoryBudget: 4096)
        defer { env.close() }
        let id = try await env.demo()
        let result = try await env.sdk.llm.generate(prompt: "Once", options: LlmOptions(model: id, maxTokens: 4, temperature: 0))
        #expect(result.text == "Hello, world")
        #expect(result.backend == .remote("default"))
        #expect(result.promptTokens == 7)
        #expect(result.outputTokens == 3)
        #expect(result.finishReason == .endOfGeneration)
        #expect(result.backendNote?.contains("did not fit") == true)
        #expect(result.backendNote?.contains("insufficientMemory") == true)
        let loaded = try #require(await env.sdk.models.state().loaded.first)
        #expect(loaded.backend == .remote("default"))
        #expect(loaded.memoryBytes == 0)
        #expect(loaded.backendNote?.contains("did not fit") == true)
        // The key went as a bearer token, to this server only; the body named the server's model.
        let post = try #require(fake.server.requests(to: "/v1/chat/completions").first)
        #expect(post.method == "POST")
        #expect(post.header("Authorization") == "Bearer \(Self.key)")
        // Nothing under the storage root (manifests, registry) holds the key.
        let files = FileManager.default.enumerator(at: env.dir.url, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        #expect(files.contains { $0.lastPathComponent == "manifest.json" })
        for file in files {
            let bytes = (try? Data(contentsOf: file)) ?? Data()
            #expect(bytes.range(of: Data(Self.key.utf8)) == nil, "\(file.path) holds the API key")
        }
    }

    @Test("the routing sends a model no on-device backend can run to the endpoint, without downloading it; without the routing it is not sent")
    func unsupportedOnDevice() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        let mapped = [RemoteModel(id: "mlx-model", serverModel: FakeOpenAIServer.model)]
        for routed in [false, true] {
            let env = try RemoteEnvironment(endpoints: [endpoint(fake, models: mapped)],
                                            routing: routed ? RemoteRouting(when: [.unsupportedOnDevice]) : .never)
            defer { env.close() }
            let url = env.mirror.publish("weights.safetensors", data: Data(repeating: 7, count: 4096))
            _ = try await env.sdk.registerModel(id: "mlx-model", name: "MLX model", url: url.absoluteString, framework: .mlx, modality: .language)
            let options = LlmOptions(model: "mlx-model", maxTokens: 4)
            if routed {
                let result = try await env.sdk.llm.generate(prompt: "Hi", options: options)
                #expect(result.backend == .remote("default"))
                #expect(result.backendNote?.contains("unsupportedOnDevice") == true)
                #expect(env.mirror.server.requests(to: "/weights.safetensors").isEmpty)   // not downloaded
            } else {
                let error = await #expect(throws: RunAnywhereError.self) { _ = try await env.sdk.llm.generate(prompt: "Hi", options: options) }
                #expect(error?.code == .backendUnavailable)
                #expect(fake.server.acceptedConnectionCount == 0)
            }
        }
    }

    @Test("a model only the server has is listed as remote, cannot be downloaded, and generates there")
    func remoteOnlyModel() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        let env = try RemoteEnvironment(endpoints: [endpoint(fake, models: [RemoteModel(id: "big", serverModel: FakeOpenAIServer.model, name: "Big model")])])
        defer { env.close() }
        let listed = try #require(try await env.sdk.models.list(filter: ModelFilter(category: .language)).first { $0.id == "big" })
        #expect(listed.source == .remote)
        #expect(listed.category == .language)
        #expect(listed.name == "Big model")
        #expect(listed.isDownloaded == false)
        let download = await #expect(throws: RunAnywhereError.self) { _ = try await env.sdk.models.download(id: "big") }
        #expect(download?.code == .invalidConfiguration)
        #expect(download?.message.contains("remote") == true)
        let result = try await env.sdk.llm.generate(prompt: "Hi", options: LlmOptions(model: "big", maxTokens: 8, temperature: 0))
        #expect(result.text == "Hello, world")
        #expect(result.backendNote?.contains("only on remote") == true)
        // Registered later, by call.
        _ = try await env.sdk.models.registerRemoteModel(RemoteModel(id: "bigger", serverModel: FakeOpenAIServer.model, category: .language))
        #expect(await env.sdk.models.get(id: "bigger")?.source == .remote)
        let again = try await env.sdk.llm.generate(prompt: "Hi", options: LlmOptions(model: "bigger", maxTokens: 8))
        #expect(again.backend == .remote("default"))
        let unknown = await #expect(throws: RunAnywhereError.self) {
            _ = try await env.sdk.models.registerRemoteModel(RemoteModel(id: "x", serverModel: "y"), endpoint: "nowhere")
        }
        #expect(unknown?.code == .invalidConfiguration)
    }

    @Test("the API key never shows in descriptions, dumps or errors")
    func keyIsRedacted() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        let e = endpoint(fake, models: [RemoteModel(id: "big", serverModel: FakeOpenAIServer.model)])
        var dumped = ""
        dump(e, to: &dumped)
        for text in [e.description, e.debugDescription, dumped, "\(RemoteBackend(endpoint: e))"] {
            #expect(!text.contains(Self.key))
            #expect(text.contains("<redacted>"))
        }
        // A server that echoes the key in its error document.
        fake.setError(status: 401, message: "invalid key \(Self.key)")
        let env = try RemoteEnvironment(endpoints: [e])
        defer { env.close() }
        let error = await #expect(throws: RunAnywhereError.self) {
            _ = try await env.sdk.llm.generate(prompt: "Hi", options: LlmOptions(model: "big", maxTokens: 4))
        }
        #expect(error?.code == .authenticationRequired)
        #expect(error?.message.contains(Self.key) == false)
        #expect(error?.description.contains(Self.key) == false)
    }

    @Test("server errors keep the server's message: 429 busy, 500 failed, a malformed stream is a typed error")
    func serverErrors() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        let env = try RemoteEnvironment(endpoints: [endpoint(fake, models: [RemoteModel(id: "big", serverModel: FakeOpenAIServer.model)])])
        defer { env.close() }
        let options = LlmOptions(model: "big", maxTokens: 4)
        fake.setError(status: 429, message: "too many requests, slow down", headers: [LoopbackHeader("Retry-After", "3")])
        let busy = await #expect(throws: RunAnywhereError.self) { _ = try await env.sdk.llm.generate(prompt: "Hi", options: options) }
        #expect(busy?.code == .backendUnavailable)
        #expect(busy?.message.contains("too many requests, slow down") == true)
        #expect(busy?.message.contains("3") == true)
        fake.setError(status: 500, message: "CUDA out of memory")
        let failed = await #expect(throws: RunAnywhereError.self) { _ = try await env.sdk.llm.generate(prompt: "Hi", options: options) }
        #expect(failed?.code == .generationFailed)
        #expect(failed?.message.contains("CUDA out of memory") == true)
        fake.setRaw("data: {\"choices\": [{\"delta\": {\"content\": \"ok\"}}]}\n\ndata: {not json\n\n")
        let malformed = await #expect(throws: RunAnywhereError.self) { _ = try await env.sdk.llm.generate(prompt: "Hi", options: options) }
        #expect(malformed?.code == .generationFailed)
        #expect(malformed?.message.contains("malformed") == true)
        fake.setRaw("data: {\"choices\": [{\"delta\": {\"content\": \"cut\"}}]}\n\n")
        let cut = await #expect(throws: RunAnywhereError.self) { _ = try await env.sdk.llm.generate(prompt: "Hi", options: options) }
        #expect(cut?.code == .generationFailed)
        #expect(cut?.message.contains("before finishing") == true)
    }

    @Test("a server that stalls mid-stream ends in a timeout error within the read timeout, and is not retried")
    func stallMidStream() async throws {
        let fake = try FakeOpenAIServer()
        defer { fake.stop() }
        fake.setStream(pieces: ["Hello", " there"], plan: [.stallAfter(bytes: 60, seconds: 20)])
        var e = endpoint(fake, models: [RemoteModel(id: "big", serverModel: FakeOpenAIServer.model)])
        e.readTimeoutSeconds = 1
        let env = try RemoteEnvironment(endpoints: [e])
        defer { env.close() }
        let start = monotonicSeconds()
        let error = await #expect(throws: RunAnywhereError.self) {
            _ = try await env.sdk.llm.generate(prompt: "Hi", options: LlmOptions(model: "big", maxTokens: 4))
        }
        #expect(error?.code == .networkUnavailable)
        #expect(error?.message.contains("timed out") == true)
        #expect(monotonicSeconds() - start < 8)   // 1 s read timeout; the server stalls 20 s
        #expect(fake.server.requests(to: "/v1/chat/completions").count == 1)
    }

    @Test("BackendID keeps the page's spellings and writes remote backends as remote or remote:NAME")
    func backendIDText() throws {
        #expect(BackendID.allCases == [.native, .llamaCpp, .onnx])
        #expect(BackendID(rawValue: "llamaCpp") == .llamaCpp)
        #expect(BackendID(rawValue: "remote") == .remote("default"))
        #expect(BackendID(rawValue: "remote:lab") == .remote("lab"))
        #expect(BackendID.remote("lab").rawValue == "remote:lab")
        #expect(BackendID(rawValue: "remote:") == nil)
        let json = try JSONEncoder().encode([BackendPreference(backend: .llamaCpp, required: true), BackendPreference(backend: .remote("lab"))])
        #expect(String(decoding: json, as: UTF8.self).contains("\"remote:lab\""))
        #expect(try JSONDecoder().decode([BackendPreference].self, from: json)[1].backend == .remote("lab"))
    }
}
