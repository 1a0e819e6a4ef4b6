import Foundation

/// How an SDK instance is set up. The defaults suit an app; tests and tools isolate a storage root.
public struct RunAnywhereConfiguration: Sendable {
    /// Where models, partial downloads and the registry live.
    public var storageRoot: URL
    /// A remote catalog (same JSON as the built-in one) merged by `refresh(includeRemoteCatalog: true)`.
    public var remoteCatalogURL: URL?
    /// At most this many bytes of resident models (nil: only what the system has available).
    public var memoryBudgetBytes: Int64?
    /// At most this many resident models; the least recently used one is evicted (nil: no limit).
    public var maxResidentModels: Int?
    /// Hosts besides huggingface.co/hf.co that may receive the Hugging Face token (for tests and mirrors).
    public var trustedTokenHosts: Set<String>
    /// A Hugging Face mirror (as huggingface_hub's `HF_ENDPOINT`, e.g. `https://hf-mirror.com` or a local one):
    /// downloads from `https://huggingface.co/…` and `https://hf.co/…` go there instead, same paths, and the token
    /// goes with them. Defaults to the `HF_ENDPOINT` environment variable.
    public var huggingFaceEndpoint: URL?
    /// Environment consulted for `HF_TOKEN`, `HF_HOME` and `HOME`.
    public var environment: [String: String]
    /// OpenAI-compatible servers this app may send requests to (`import RunAnywhere` registers a backend
    /// `.remote(name)` for each). Empty (the default): nothing ever leaves the device.
    public var remoteEndpoints: [RemoteEndpoint]
    /// When a request that could run on the device goes to a remote endpoint instead (default: never).
    public var remoteRouting: RemoteRouting

    /// Creates a configuration. With no `storageRoot`, uses `$RUNANYWHERE_HOME`, else
    /// `$XDG_DATA_HOME/runanywhere`, else `~/.local/share/runanywhere`.
    public init(storageRoot: URL? = nil, remoteCatalogURL: URL? = nil, memoryBudgetBytes: Int64? = nil,
                maxResidentModels: Int? = nil, trustedTokenHosts: Set<String> = [], huggingFaceEndpoint: URL? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment,
                remoteEndpoints: [RemoteEndpoint] = [], remoteRouting: RemoteRouting = .never) {
        self.storageRoot = storageRoot ?? StorageLayout.defaultRoot(environment: environment)
        self.remoteCatalogURL = remoteCatalogURL ?? environment["RUNANYWHERE_CATALOG_URL"].flatMap(URL.init(string:))
        self.memoryBudgetBytes = memoryBudgetBytes
        self.maxResidentModels = maxResidentModels
        self.trustedTokenHosts = Set(trustedTokenHosts.map { $0.lowercased() })
        self.huggingFaceEndpoint = huggingFaceEndpoint
            ?? environment["HF_ENDPOINT"].flatMap { $0.isEmpty ? nil : (URL(string: $0) ?? URL(fileURLWithPath: $0)) }
        self.environment = environment
        self.remoteEndpoints = remoteEndpoints
        self.remoteRouting = remoteRouting
    }
}

/// One independent SDK instance: a registry, downloads and resident models over one storage root.
///
/// Apps use the shared instance through ``RunAnywhere``; tests and tools create their own.
public final class RunAnywhereSDK: Sendable {
    /// The configuration this instance was made with.
    public let configuration: RunAnywhereConfiguration
    /// The model catalog and its residency.
    public let models: ModelManager
    /// Text generation.
    public let llm: LLMService
    /// Speech to text.
    public let stt: STTService
    /// Questions about images.
    public let vlm: VLMService

    let tokens: HFTokenStore

    /// The SDK version.
    public static let version = "0.1.0"

    static var userAgent: String { "runanywhere-swift/\(version)" }

    /// Creates an instance over `configuration.storageRoot` with these backends, tried in this order when a load
    /// names no backend. (`import RunAnywhere` adds `init(configuration:)`, which passes the default backends.)
    public init(configuration: RunAnywhereConfiguration, backends: [any InferenceBackend]) {
        self.configuration = configuration
        let layout = StorageLayout(root: configuration.storageRoot)
        tokens = HFTokenStore(layout: layout, environment: configuration.environment, extraTrustedHosts: configuration.trustedTokenHosts,
                              endpoint: configuration.huggingFaceEndpoint)
        models = ModelManager(configuration: configuration, layout: layout, tokens: tokens, backends: backends)
        llm = LLMService(models: models)
        stt = STTService(models: models)
        vlm = VLMService(llm: llm)
    }

    /// Sets the Hugging Face token used for gated or private repositories (nil clears it).
    ///
    /// The token is sent only to huggingface.co and hf.co over https, never to a host a redirect leads to.
    /// With `persist: true` it is also stored under the storage root with mode 0600.
    public func setHfToken(_ token: String?, persist: Bool = false) throws {
        try tokens.set(token, persist: persist)
    }
}
