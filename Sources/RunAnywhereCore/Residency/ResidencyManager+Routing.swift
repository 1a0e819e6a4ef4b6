import Foundation

/// Which backend serves a load: the preferences, the on-device backends in order, and the remote endpoints the
/// configuration allows (``RemoteRouting``). A remote backend is chosen only when a load pins it, when the model
/// exists only on a server, or when the routing says so; without a configured endpoint none is registered.
extension ResidencyManager {
    struct Choice {
        let backend: any InferenceBackend
        var notes: [String]
        /// Whether a `required` preference named this backend (then nothing may replace it).
        var required = false
    }

    /// Picks the backend for a load, with notes saying which could not serve it and why.
    /// - Parameter refused: backends that already refused this model when they opened its files (``InferenceBackend/prepare(_:contextLength:)``
    ///   threw `.backendUnavailable`: a tensor type the engine cannot compute, say), with their reasons; they count as
    ///   unable to serve it.
    /// - Throws: `.backendUnavailable` when a required backend cannot serve the model, or none can.
    nonisolated func chooseBackend(_ model: ModelInfo, _ options: LoadOptions, refused: [BackendID: String] = [:]) throws -> Choice {
        var notes: [String] = []
        let serverOnly = model.source == .remote
        func why(_ backend: any InferenceBackend) -> String? {
            if serverOnly, backend.runsOnDevice { return "'\(model.id)' exists only on a remote server" }
            if let reason = refused[backend.id] { return reason }
            return backend.cannotServe(model)
        }
        // Backends in the order asked for.
        for pref in options.backendPreferences {
            guard let backend = backends.backend(pref.backend) else {
                let missing = pref.backend.isRemote
                    ? "no remote endpoint named '\(pref.backend.remoteName ?? "")' is configured (RunAnywhereConfiguration.remoteEndpoints)"
                    : "backend \(pref.backend.rawValue) is not available in this build"
                if pref.required { throw RunAnywhereError(.backendUnavailable, "Cannot load '\(model.id)': \(missing), and it is required.", modelId: model.id) }
                notes.append("\(missing); fell back")
                continue
            }
            if let reason = why(backend) {
                if pref.required { throw RunAnywhereError(.backendUnavailable, "Backend \(pref.backend.rawValue) cannot serve '\(model.id)': \(reason).", modelId: model.id) }
                notes.append("\(pref.backend.rawValue) cannot serve it (\(reason)); fell back")
                continue
            }
            if !backend.runsOnDevice { notes.append("sent to \(backend.id.rawValue) as asked (BackendPreference)") }
            return Choice(backend: backend, notes: notes, required: pref.required)
        }
        // Then the on-device backends in order; remote ones only for a model that exists only there.
        var reasons: [String] = []
        for backend in backends.ordered where backend.runsOnDevice != serverOnly {
            if let reason = why(backend) { reasons.append("\(backend.id.rawValue): \(reason)"); continue }
            if !reasons.isEmpty { notes.append("\(reasons.joined(separator: "; ")); \(backend.id.rawValue) serves it") }
            if serverOnly { notes.append("'\(model.id)' exists only on \(backend.id.rawValue)") }
            return Choice(backend: backend, notes: notes)
        }
        // Nothing on the device can run it: the routing may send it to its endpoint.
        if !serverOnly, routing.reroutes(.unsupportedOnDevice), let remote = backends.backend(.remote(routing.endpoint)),
           remote.cannotServe(model) == nil {
            notes.append("no on-device backend can run it (\(reasons.joined(separator: "; "))); sent to \(remote.id.rawValue) (RemoteRouting: unsupportedOnDevice)")
            return Choice(backend: remote, notes: notes)
        }
        throw RunAnywhereError(.backendUnavailable, "No backend can serve '\(model.id)' (\(model.framework.rawValue), \(model.format.rawValue)): \(reasons.isEmpty ? "no backend is registered" : reasons.joined(separator: "; ")).", modelId: model.id)
    }

    /// Whether a load of this model could go to a remote backend (so it needs no files on disk).
    nonisolated func mayServeRemotely(_ model: ModelInfo, _ options: LoadOptions?) -> Bool {
        if model.source == .remote { return true }
        if let first = options?.backendPreferences.first, first.backend.isRemote, backends.backend(first.backend) != nil { return true }
        // A model nothing on the device can run goes to the routing's endpoint without being downloaded.
        guard routing.reroutes(.unsupportedOnDevice), let remote = backends.backend(.remote(routing.endpoint)),
              remote.cannotServe(model) == nil else { return false }
        return backends.ordered.allSatisfy { !$0.runsOnDevice || $0.cannotServe(model) != nil }
    }

    /// The plan of a load that did not fit in memory, sent to the routing's endpoint instead, or nil when the
    /// routing does not allow it (not configured, a pinned backend, an endpoint that does not serve the model).
    func reroute(_ plan: Plan, _ model: ModelInfo, _ options: LoadOptions, why: String) throws -> Plan? {
        guard routing.reroutes(.insufficientMemory), plan.backend.runsOnDevice,
              !options.backendPreferences.contains(where: \.required),
              let remote = backends.backend(.remote(routing.endpoint)), remote.cannotServe(model) == nil else { return nil }
        let prepared = try remote.prepare(model, contextLength: options.contextLength)
        let note = ([plan.note].compactMap { $0 } + ["did not fit on the device (\(why)); sent to \(remote.id.rawValue) (RemoteRouting: insufficientMemory)"])
            .joined(separator: "; ")
        let key = LoadKey(backend: remote.id, contextLength: prepared.estimate.contextLength, threads: 0)
        return Plan(backend: remote, note: note, key: key, prepared: prepared)
    }
}

extension ResidencyManager {
    /// When the routing allows it (``RemoteRouting/Reason/busy``) and `model` is resident on the device with a call
    /// running, a session for it on the routing's endpoint (checked with the server, not made resident), and what to
    /// report of it; else nil.
    func busyDetour(_ model: ModelInfo) async throws -> (handle: any BackendModel, info: LoadedModel)? {
        guard routing.reroutes(.busy), let resident = residentState(model.id), resident.activeCalls > 0,
              backends.backend(resident.info.backend)?.runsOnDevice == true,
              let remote = backends.backend(.remote(routing.endpoint)), remote.cannotServe(model) == nil else { return nil }
        let prepared = try remote.prepare(model, contextLength: nil)
        let request = BackendLoadRequest(model: model, contextLength: prepared.estimate.contextLength, threads: 0)
        let start = monotonicSeconds()
        let handle = try await BlockingWork.run(name: "runanywhere-load") { _ in try prepared.load(request) }
        let note = "'\(model.id)' was busy with another call on \(resident.info.backend.rawValue); sent to \(remote.id.rawValue) (RemoteRouting: busy)"
        let info = LoadedModel(id: model.id, category: model.category, backend: remote.id, backendNote: note,
                               contextLength: request.contextLength, threads: 0, estimatedMemoryBytes: 0, memoryBytes: 0,
                               loadSeconds: monotonicSeconds() - start, loadedAt: Date(), lastUsedAt: Date())
        return (handle, info)
    }
}

extension BackendID {
    /// The endpoint name of a remote backend, else nil.
    public var remoteName: String? {
        if case .remote(let name) = self { return name }
        return nil
    }
}
