import Foundation
import Synchronization

/// The backends of one SDK instance, in the order they are tried; shared by the registry (which asks them to
/// inspect downloaded files) and the residency (which asks them to load).
final class BackendSet: Sendable {
    private let state: Mutex<(byID: [BackendID: any InferenceBackend], order: [BackendID])>

    init(_ backends: [any InferenceBackend]) {
        var byID: [BackendID: any InferenceBackend] = [:]
        var order: [BackendID] = []
        for b in backends where byID[b.id] == nil {
            byID[b.id] = b
            order.append(b.id)
        }
        state = Mutex((byID, order))
    }

    /// Adds a backend after the others, or replaces the one of the same id in its place.
    func register(_ backend: any InferenceBackend) {
        state.withLock { s in
            if s.byID[backend.id] == nil { s.order.append(backend.id) }
            s.byID[backend.id] = backend
        }
    }

    /// The backend of this id, if registered.
    func backend(_ id: BackendID) -> (any InferenceBackend)? { state.withLock { $0.byID[id] } }

    /// Every backend, in order.
    var ordered: [any InferenceBackend] { state.withLock { s in s.order.compactMap { s.byID[$0] } } }

    /// What the first backend that knows the files' format says of a downloaded model (nil: none knows it).
    func inspect(_ model: ModelInfo) throws -> ModelInfo? {
        for backend in ordered {
            if let described = try backend.inspect(model) { return described }
        }
        return nil
    }
}
