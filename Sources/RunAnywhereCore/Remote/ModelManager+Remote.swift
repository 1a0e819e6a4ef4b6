import Foundation

extension ModelManager {
    /// Adds a model that a configured remote endpoint serves: a new id appears in `list()` with `source: .remote`
    /// (nothing to download); a catalog id is then also servable by that endpoint (pin it with
    /// `BackendPreference(backend: .remote(endpoint))`, or let ``RemoteRouting`` send it there).
    ///
    /// ```swift
    /// try await RunAnywhere.models.registerRemoteModel(RemoteModel(id: "llama-70b", serverModel: "meta-llama/Llama-3.3-70B-Instruct"))
    /// ```
    /// - Throws: `.invalidConfiguration` for a bad id, or when no endpoint of that name is configured.
    @discardableResult
    public func registerRemoteModel(_ model: RemoteModel, endpoint: String = RemoteEndpoint.defaultName) async throws -> ModelInfo {
        try ModelID.validate(model.id)
        guard !model.serverModel.isEmpty else {
            throw RunAnywhereError(.invalidConfiguration, "RemoteModel '\(model.id)' needs the server's model name (serverModel).", modelId: model.id)
        }
        guard let backend = residency.backends.backend(.remote(endpoint)) as? any RemoteModelServing else {
            throw RunAnywhereError(.invalidConfiguration, "No remote endpoint named '\(endpoint)' is configured: add a RemoteEndpoint to RunAnywhereConfiguration.remoteEndpoints first.", modelId: model.id)
        }
        backend.serve(model)
        await registry.setServed([Self.servedInfo(model, endpoint: backend.endpoint)])
        return try await require(model.id)
    }

    /// How the registry lists a model that exists only on a remote endpoint.
    static func servedInfo(_ model: RemoteModel, endpoint: RemoteEndpoint) -> ModelInfo {
        ModelInfo(id: model.id, name: model.name ?? model.serverModel, category: model.category, framework: .other,
                  format: .unknown, artifact: .multiFile([]), contextLength: model.contextLength,
                  summary: "Served by the remote endpoint '\(endpoint.name)' (\(endpoint.redactedURL)) as '\(model.serverModel)'.",
                  source: .remote)
    }
}
