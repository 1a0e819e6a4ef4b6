import Foundation
import RunAnywhereCore
import Synchronization

/// A server that speaks the OpenAI HTTP API as a backend: `BackendID.remote(endpoint.name)`.
///
/// `import RunAnywhere` registers one for each ``RemoteEndpoint`` in ``RunAnywhereConfiguration/remoteEndpoints``
/// (and none otherwise); it can also be passed to `RunAnywhereSDK(configuration:backends:)` or
/// `models.registerBackend(_:)`. It serves the language models its endpoint lists (``RemoteEndpoint/models``):
/// `load` checks that the server answers and has the model (`GET /v1/models`), and every generate call streams one
/// request. It is chosen only when a load pins it, for a model that exists only on the server, or by the
/// configuration's ``RemoteRouting``.
///
/// ```swift
/// let loaded = try await RunAnywhere.models.load(id: "qwen2.5-7b",
///     options: LoadOptions(backendPreferences: [BackendPreference(backend: .remote("default"), required: true)]))
/// ```
public final class RemoteBackend: RemoteModelServing, CustomStringConvertible {
    private let state: Mutex<RemoteEndpoint>
    /// Why the endpoint cannot be used (a bad URL or name), checked once when the backend is made.
    private let configurationProblem: String?

    /// A backend for `endpoint`.
    public init(endpoint: RemoteEndpoint) {
        state = Mutex(endpoint)
        do {
            try endpoint.validate()
            configurationProblem = nil
        } catch let error as RunAnywhereError {
            configurationProblem = error.message
        } catch {
            configurationProblem = "\(error)"
        }
    }

    /// The endpoint, with the models it serves now.
    public var endpoint: RemoteEndpoint { state.withLock { $0 } }

    /// `.remote(endpoint.name)`.
    public var id: BackendID { .remote(endpoint.name) }

    /// False: it runs nothing on the device and needs no files.
    public var runsOnDevice: Bool { false }

    /// The endpoint, with its API key redacted.
    public var description: String { "RemoteBackend(\(endpoint))" }

    /// Adds (or replaces) a model it serves.
    public func serve(_ model: RemoteModel) {
        state.withLock { e in
            e.models.removeAll { $0.id == model.id }
            e.models.append(model)
        }
    }

    /// Nil for a language model its endpoint lists; else why not (or what is wrong with the endpoint's configuration).
    public func cannotServe(_ model: ModelInfo) -> String? {
        if let configurationProblem { return configurationProblem }
        let e = endpoint
        guard model.category == .language else { return "it serves language models, not \(model.category.rawValue)" }
        guard e.serverModel(for: model.id) != nil else {
            return "the remote endpoint '\(e.name)' does not list '\(model.id)' (add a RemoteModel to RemoteEndpoint.models or call models.registerRemoteModel)"
        }
        return nil
    }

    /// Nothing is held on the device: the estimate is zero bytes.
    public func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        BackendMemoryEstimate(totalBytes: 0, weightsBytes: 0, workingBytes: 0,
                              contextLength: contextLength ?? model.contextLength ?? 0, maximumContextLength: nil)
    }

    /// Checks that the server answers and has the model, then hands back a session for it.
    /// - Throws: `.networkUnavailable` (unreachable, timed out), `.authenticationRequired` (401/403),
    ///   `.modelNotFound` (the server does not list the model).
    public func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        let e = endpoint
        let id = request.model.id
        guard let serverModel = e.serverModel(for: id) else {
            throw RunAnywhereError(.backendUnavailable, "The remote endpoint '\(e.name)' does not serve '\(id)'.", modelId: id)
        }
        let client = RemoteClient(endpoint: e)
        let available = try client.serverModels()
        guard available.contains(serverModel) else {
            let listed = available.prefix(10).map { "'\($0)'" }.joined(separator: ", ")
            throw RunAnywhereError(.modelNotFound, "\(client.place("models")) has no model '\(serverModel)' (for '\(id)'); it serves \(listed.isEmpty ? "none" : listed). Name one of those (RemoteModel.serverModel, --server-model).", modelId: id)
        }
        return RemoteSession(client: client, modelId: id, serverModel: serverModel)
    }

    /// The ids of the server's `/v1/models`, for listing (`runanywhere models list --remote`).
    /// - Throws: the same errors as ``load(_:)``.
    public func serverModels() async throws -> [String] {
        let client = RemoteClient(endpoint: endpoint)
        return try await Task.detached { try client.serverModels() }.value
    }
}
