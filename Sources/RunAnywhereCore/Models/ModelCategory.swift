import Foundation

/// What kind of task a model performs (its modality).
public enum ModelCategory: String, Sendable, Hashable, Codable, CaseIterable {
    /// Text generation (LLMs).
    case language
    /// Speech to text.
    case speechRecognition
    /// Text to speech.
    case speechSynthesis
    /// Image + text understanding (VLMs).
    case vision
    /// Text or image embeddings.
    case embedding
    /// Voice activity detection.
    case voiceActivityDetection
    /// Image generation.
    case imageGeneration
}

/// What a model is packaged for: the file format family an engine must understand.
///
/// `.llamaCpp` means a GGUF model (the format llama.cpp defined). Which engine actually runs it
/// is a separate choice, see ``BackendID``: our own native engine serves `.llamaCpp` models.
public enum InferenceFramework: String, Sendable, Hashable, Codable, CaseIterable {
    /// GGUF files (llama.cpp's format).
    case llamaCpp
    /// ONNX models (sherpa-onnx style bundles).
    case onnx
    /// Core ML packages.
    case coreML
    /// MLX weights.
    case mlx
    /// TensorFlow Lite models.
    case tfLite
    /// Anything else.
    case other
}

/// The on-disk format of a model's main file.
public enum ModelFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// A GGUF file.
    case gguf
    /// An ONNX graph.
    case onnx
    /// ONNX Runtime's own format.
    case ort
    /// Safetensors weights.
    case safetensors
    /// A raw binary.
    case bin
    /// Not known.
    case unknown

    /// Guesses the format from a file name's extension.
    public init(fileName: String) {
        switch (fileName as NSString).pathExtension.lowercased() {
        case "gguf": self = .gguf
        case "onnx": self = .onnx
        case "ort": self = .ort
        case "safetensors": self = .safetensors
        case "bin": self = .bin
        default: self = .unknown
        }
    }
}

/// Where the registry learned of a model.
public enum ModelSource: String, Sendable, Hashable, Codable, CaseIterable {
    /// The curated catalog shipped with the SDK.
    case builtIn
    /// Registered by the app with `RunAnywhere.registerModel`.
    case registered
    /// Merged from a remote catalog by `refresh(includeRemoteCatalog: true)`.
    case remoteCatalog
    /// Found on disk by a rescan, with no other record of it.
    case discovered
    /// A GGUF file already on this machine, imported with `models.importLocal` (hard link, symbolic link or copy).
    /// Deleting it removes the link or copy and the registration, never the original file.
    case imported
    /// Served by a remote endpoint (``RemoteEndpoint``) and nowhere else: there is nothing to download.
    case remote
}
