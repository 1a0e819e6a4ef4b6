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
