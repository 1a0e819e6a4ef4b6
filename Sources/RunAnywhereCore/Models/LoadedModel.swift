import Foundation

/// A model resident in memory.
public struct LoadedModel: Sendable, Hashable, Codable {
    /// The model's id.
    public var id: String
    /// Its category.
    public var category: ModelCategory
    /// The backend serving it.
    public var backend: BackendID
    /// Why this backend serves it when it is not the first preference or the first backend in order (which ones
    /// could not serve the model, and why), else nil.
    public var backendNote: String?
    /// Context window allocated, in tokens.
    public var contextLength: Int
    /// CPU threads in use.
    public var threads: Int
    /// Memory the SDK estimated before loading, bytes.
    public var estimatedMemoryBytes: Int64
    /// Memory the backend actually holds (KV cache, scratch, touched weights), bytes.
    public var memoryBytes: Int64
    /// How long loading took, seconds.
    public var loadSeconds: Double
    /// When it was loaded.
    public var loadedAt: Date
    /// When it last served a request.
    public var lastUsedAt: Date
}

/// What is resident right now, and how the storage stands.
public struct ModelsState: Sendable, Hashable, Codable {
    /// Resident models, most recently used first.
    public var loaded: [LoadedModel]
    /// Sum of the resident models' memory, bytes.
    public var memoryInUseBytes: Int64
    /// Bytes of model files on disk under the storage root.
    public var storageUsedBytes: Int64
    /// Free bytes on the storage root's volume.
    public var storageFreeBytes: Int64?

    /// Whether a model is resident.
    public func isLoaded(_ id: String) -> Bool { loaded.contains { $0.id == id } }
}
