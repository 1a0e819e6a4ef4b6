import Foundation

/// An inference engine. A backend serves one or more ``InferenceFramework``s.
///
/// The on-device backends are `.native`, `.llamaCpp` and `.onnx`; `.remote(name)` is a server that speaks the OpenAI
/// HTTP API, configured by the app (``RunAnywhereConfiguration/remoteEndpoints``) under that name. As text (`rawValue`,
/// JSON, the CLI's `--backend`) a remote backend is `remote` (the endpoint named `default`) or `remote:NAME`.
public enum BackendID: Sendable, Hashable, Codable, CaseIterable, RawRepresentable, CustomStringConvertible {
    /// RunAnywhere's own GGUF engine (Swift + C kernels); serves `.llamaCpp` models.
    case native
    /// The real llama.cpp library.
    case llamaCpp
    /// ONNX Runtime.
    case onnx
    /// A server speaking the OpenAI HTTP API (vLLM, llama.cpp's server, Ollama, `runanywhere serve`), by the name of
    /// its ``RemoteEndpoint``. Nothing is sent off the device unless the app configured that endpoint.
    case remote(String)

    /// The on-device backends (a remote backend has a name of the app's choosing, so it is not listed).
    public static var allCases: [BackendID] { [.native, .llamaCpp, .onnx] }

    /// `native`, `llamaCpp`, `onnx`, `remote` (the endpoint named `default`) or `remote:NAME`.
    public var rawValue: String {
        switch self {
        case .native: "native"
        case .llamaCpp: "llamaCpp"
        case .onnx: "onnx"
        case .remote(let name): name == RemoteEndpoint.defaultName ? "remote" : "remote:\(name)"
        }
    }

    /// Parses ``rawValue``; nil for anything else.
    public init?(rawValue: String) {
        switch rawValue {
        case "native": self = .native
        case "llamaCpp": self = .llamaCpp
        case "onnx": self = .onnx
        case "remote": self = .remote(RemoteEndpoint.defaultName)
        default:
            guard rawValue.hasPrefix("remote:"), rawValue.count > 7 else { return nil }
            self = .remote(String(rawValue.dropFirst(7)))
        }
    }

    /// Whether this backend runs off the device (a remote server).
    public var isRemote: Bool {
        if case .remote = self { return true }
        return false
    }

    /// ``rawValue``.
    public var description: String { rawValue }

    /// Decodes ``rawValue`` from a single string.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = BackendID(rawValue: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown backend '\(text)'"))
        }
        self = id
    }

    /// Encodes ``rawValue`` as a single string.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
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
