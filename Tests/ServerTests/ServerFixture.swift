import Foundation
import Testing
import RunAnywhere
import RunAnywhereNative
import RunAnywhereServer
import RunAnywhereTestSupport

/// A server started in-process on a free loopback port over an SDK of its own (a temporary storage root), with the
/// project's demo story model downloaded from a loopback mirror (`demo-forest`, and `demo-chat` with a chat template), and stories260K too when RUNANYWHERE_TESTDATA is set.
struct ServerFixture {
    let dir: TemporaryDirectory
    let mirror: ModelMirror
    let sdk: RunAnywhereSDK
    let server: OpenAIServer
    let paced: PacedBackend?

    /// The shared reference models, when the environment names them.
    static var testData: URL? {
        ProcessInfo.processInfo.environment["RUNANYWHERE_TESTDATA"].map { URL(fileURLWithPath: $0) }
    }

    /// - Parameters:
    ///   - pace: seconds to wait after each piece of text (to keep a generation running while a test acts on it).
    ///   - stories: also register stories260K from RUNANYWHERE_TESTDATA (the caller skips when it is absent).
    ///   - memoryBudget: the SDK's memory budget for resident models (a tiny one makes every load fail).
    init(configuration: ServerConfiguration = ServerConfiguration(port: 0), pace: Double? = nil, stories: Bool = false,
         memoryBudget: Int64? = nil) async throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-serve")
        mirror = try ModelMirror()
        let config = RunAnywhereConfiguration(storageRoot: dir.url, memoryBudgetBytes: memoryBudget, environment: [:])
        paced = pace.map { PacedBackend(delay: $0) }
        sdk = paced.map { RunAnywhereSDK(configuration: config, backends: [$0]) } ?? RunAnywhereSDK(configuration: config)
        try await Self.download(try await mirror.registerDemoModel(.forest, with: sdk).id, sdk)
        // The same story model with a ChatML template, so that system prompts and history are rendered.
        let chatURL = mirror.publish("demo-chat.gguf", data: DemoModel.chatData(.forest))
        try await Self.download(try await sdk.registerModel(id: "demo-chat", name: "Demo chat", url: chatURL.absoluteString,
                                                            framework: .llamaCpp, modality: .language).id, sdk)
        if stories, let base = Self.testData {
            let data = try Data(contentsOf: base.appendingPathComponent("models/stories260K.gguf"))
            let url = mirror.publish("stories260K.gguf", data: data)
            let info = try await sdk.registerModel(id: "stories260k", name: "Stories 260K", url: url.absoluteString,
                                                   framework: .llamaCpp, modality: .language)
            try await Self.download(info.id, sdk)
        }
        server = try OpenAIServer(sdk: sdk, configuration: configuration)
    }

    static func download(_ id: String, _ sdk: RunAnywhereSDK) async throws {
        for try await _ in try await sdk.models.download(id: id) {}
    }

    /// `http://127.0.0.1:PORT` + `path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }

    func close() async {
        await server.stop(grace: .seconds(2))
        mirror.stop()
        dir.remove()
    }
}

/// The native engine, pausing after each piece of text it produces: a real model whose generation lasts long enough
/// for a test to disconnect, queue or shut down while it runs. Counts the pieces produced.
final class PacedBackend: InferenceBackend, @unchecked Sendable {
    private let inner = NativeBackend()
    let delay: Double
    private let lock = NSLock()
    private var produced = 0

    init(delay: Double) { self.delay = delay }

    /// Pieces of text produced so far, by every generation.
    var piecesProduced: Int { lock.withLock { produced } }

    var id: BackendID { inner.id }
    func cannotServe(_ model: ModelInfo) -> String? { inner.cannotServe(model) }
    func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate { try inner.estimate(model, contextLength: contextLength) }
    func inspect(_ model: ModelInfo) throws -> ModelInfo? { try inner.inspect(model) }
    func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        guard let model = try inner.prepare(request.model, contextLength: request.contextLength).load(request) as? any TextGenerationModel else {
            throw RunAnywhereError(.invalidModelFormat, "not a text model")
        }
        return PacedModel(inner: model, backend: self)
    }

    fileprivate func count() { lock.withLock { produced += 1 } }
}

private final class PacedModel: TextGenerationModel {
    let inner: any TextGenerationModel
    let backend: PacedBackend
    init(inner: any TextGenerationModel, backend: PacedBackend) {
        self.inner = inner
        self.backend = backend
    }
    var memoryBytes: Int64 { inner.memoryBytes }
    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        try inner.generate(request, onText: { piece in
            backend.count()
            onText(piece)
            Thread.sleep(forTimeInterval: backend.delay)
        }, shouldContinue: shouldContinue)
    }
}

/// Runs `body` with a fresh server, and shuts it down and removes its files afterwards, whether `body` threw or not.
func withServer(_ configuration: ServerConfiguration = ServerConfiguration(port: 0), pace: Double? = nil, stories: Bool = false,
                memoryBudget: Int64? = nil, _ body: (ServerFixture) async throws -> Void) async throws {
    let fixture = try await ServerFixture(configuration: configuration, pace: pace, stories: stories, memoryBudget: memoryBudget)
    do {
        try await body(fixture)
    } catch {
        await fixture.close()
        throw error
    }
    await fixture.close()
}
