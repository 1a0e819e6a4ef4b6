@_exported import RunAnywhereCore
import RunAnywhereLlamaCpp
import RunAnywhereNative
import RunAnywhereRemote
import RunAnywhereSherpa
import Synchronization

/// The RunAnywhere SDK: what an app imports. It is the core (catalog, downloads, residency, services) with the
/// default backends registered: the native GGUF engine; llama.cpp for what the native engine cannot run, or when a
/// load asks for it; sherpa-onnx for speech (both libraries are opened at run time, when a model needs them).
///
/// ```swift
/// let result = try await RunAnywhere.llm.generate(prompt: "Hello", options: LlmOptions(model: "qwen3-0.6b"))
/// for try await event in try await RunAnywhere.models.download(id: "qwen3-0.6b") { … }
/// ```
public enum RunAnywhere {
    private static let current = Mutex<RunAnywhereSDK?>(nil)

    /// The SDK version.
    public static var version: String { RunAnywhereSDK.version }

    /// The backends an instance gets unless it is given others, in the order they are tried.
    public static func defaultBackends() -> [any InferenceBackend] {
        [NativeBackend(), LlamaCppBackend(), SherpaOnnxBackend()]
    }

    /// The default backends, and a ``RemoteBackend`` for each endpoint the configuration lists (none unless the app
    /// configured one: nothing leaves the device otherwise).
    public static func defaultBackends(for configuration: RunAnywhereConfiguration) -> [any InferenceBackend] {
        defaultBackends() + configuration.remoteEndpoints.map { RemoteBackend(endpoint: $0) }
    }

    /// The shared instance, created on first use with the default configuration.
    public static var shared: RunAnywhereSDK {
        current.withLock { sdk in
            if let sdk { return sdk }
            let made = RunAnywhereSDK()
            sdk = made
            return made
        }
    }

    /// Replaces the shared instance with one made from `configuration` (call before other use).
    public static func configure(_ configuration: RunAnywhereConfiguration) {
        current.withLock { $0 = RunAnywhereSDK(configuration: configuration) }
    }

    /// The model catalog and its residency: list, get, download, load, unload, state, delete, refresh.
    public static var models: ModelManager { shared.models }

    /// Text generation: `RunAnywhere.llm.generate(prompt:options:)`.
    public static var llm: LLMService { shared.llm }

    /// Speech to text: `RunAnywhere.stt.transcribe(audio:options:)`.
    public static var stt: STTService { shared.stt }

    /// Questions about images: `RunAnywhere.vlm.generate(prompt:images:options:)`.
    public static var vlm: VLMService { shared.vlm }

    /// Sets the Hugging Face token for gated or private repositories. Keep it in the Keychain, never in source.
    public static func setHfToken(_ token: String?) {
        // Setting the in-memory token cannot fail; persisting is opt-in through the instance API.
        try? shared.setHfToken(token, persist: false)
    }
}

extension RunAnywhereSDK {
    /// Creates an instance over `configuration.storageRoot` with the default backends and the configured remote ones
    /// (``RunAnywhere/defaultBackends(for:)``).
    public convenience init(configuration: RunAnywhereConfiguration = RunAnywhereConfiguration()) {
        self.init(configuration: configuration, backends: RunAnywhere.defaultBackends(for: configuration))
    }
}
