import Foundation

/// An inference engine. A backend serves one or more ``InferenceFramework``s.
public enum BackendID: String, Sendable, Hashable, Codable, CaseIterable {
    /// RunAnywhere's own GGUF engine (Swift + C kernels); serves `.llamaCpp` models.
    case native
    /// The real llama.cpp library.
    case llamaCpp
    /// ONNX Runtime.
    case onnx
}

/// One entry of an ordered backend preference.
public struct BackendPreference: Sendable, Hashable, Codable {
    /// The backend wanted.
    public var backend: BackendID
    /// With `true`, loading fails instead of falling back to another backend.
    public var required: Bool

    /// Prefers (or requires) a backend.
    public init(backend: BackendID, required: Bool = false) {
        self.backend = backend
        self.required = required
    }
}

/// Where computation may run.
public enum AcceleratorPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Let the SDK choose (CPU when no accelerator is usable).
    case automatic
    /// CPU only.
    case cpuOnly
    /// Use a GPU when one is usable, else the CPU.
    case preferGpu
    /// Fail unless a GPU is usable.
    case requireGpu
}

/// How to load a model. Every field is honoured or rejected with `.invalidConfiguration`; none is ignored.
public struct LoadOptions: Sendable, Hashable, Codable {
    /// Ordered preference; each can be `required`.
    public var backendPreferences: [BackendPreference]
    /// Accelerator policy.
    public var accelerator: AcceleratorPolicy?
    /// Context window to allocate, in tokens. A larger window costs memory whether used or not.
    public var contextLength: Int?
    /// CPU threads.
    public var threads: Int?
    /// Reload even if already resident.
    public var forceReload: Bool
    /// Pin to one framework: loading a model packaged for another fails.
    public var framework: InferenceFramework?
    /// Request GPU execution (`true` fails where no GPU is usable; `false` keeps to the CPU).
    public var useGpu: Bool?

    /// Creates load options; every argument has a sensible default.
    public init(backendPreferences: [BackendPreference] = [], accelerator: AcceleratorPolicy? = nil,
                contextLength: Int? = nil, threads: Int? = nil, forceReload: Bool = false,
                framework: InferenceFramework? = nil, useGpu: Bool? = nil) {
        self.backendPreferences = backendPreferences
        self.accelerator = accelerator
        self.contextLength = contextLength
        self.threads = threads
        self.forceReload = forceReload
        self.framework = framework
        self.useGpu = useGpu
    }
}

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
