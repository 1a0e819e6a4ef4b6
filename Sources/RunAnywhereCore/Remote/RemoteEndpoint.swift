import Foundation

/// A server that speaks the OpenAI HTTP API (`/v1/chat/completions`, `/v1/completions`, `/v1/models`): vLLM,
/// llama.cpp's server, Ollama, LM Studio, `runanywhere serve`. Configured by the app in
/// ``RunAnywhereConfiguration/remoteEndpoints``; `import RunAnywhere` then registers a backend `.remote(name)` for it.
/// Without one, nothing is ever sent off the device.
///
/// The API key is sent only as `Authorization: Bearer …` to this server; it is never logged, never written to a
/// manifest, and shown as `<redacted>` in descriptions and errors.
///
/// ```swift
/// let lab = RemoteEndpoint(baseURL: URL(string: "http://10.0.0.5:8000")!, apiKey: key,
///                          models: [RemoteModel(id: "qwen2.5-7b", serverModel: "Qwen/Qwen2.5-7B-Instruct")])
/// RunAnywhere.configure(RunAnywhereConfiguration(remoteEndpoints: [lab]))
/// ```
public struct RemoteEndpoint: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The name of an endpoint made without one: its backend is `.remote("default")`, `remote` on the CLI.
    public static let defaultName = "default"

    /// The name its backend goes by: `BackendID.remote(name)`.
    public var name: String
    /// Where the server is: `http://host:port` or `http://host:port/v1` (requests go to `<base>/v1/...`).
    public var baseURL: URL
    /// Sent as `Authorization: Bearer <key>` to this server only; nil sends none.
    public var apiKey: String?
    /// Models this server serves, by our id (a catalog id maps that model to the server; a new id adds a model that
    /// exists only on the server).
    public var models: [RemoteModel]
    /// Seconds allowed to connect (each attempt).
    public var connectTimeoutSeconds: Double
    /// A response that sends nothing for this many seconds fails (`.networkUnavailable`, saying it timed out).
    public var readTimeoutSeconds: Double
    /// Extra attempts after a connection that could not be made (nothing was sent, so repeating is safe). A request
    /// that reached the server is never repeated.
    public var connectRetries: Int
    /// Also send the sampling fields the OpenAI API lacks but llama.cpp's server and vLLM read: `top_k`, `min_p`,
    /// `repeat_penalty` / `repetition_penalty` (default true; set false for servers that reject unknown fields).
    public var sendsSamplingExtensions: Bool

    /// Creates an endpoint.
    public init(name: String = RemoteEndpoint.defaultName, baseURL: URL, apiKey: String? = nil, models: [RemoteModel] = [],
                connectTimeoutSeconds: Double = 5, readTimeoutSeconds: Double = 60, connectRetries: Int = 2,
                sendsSamplingExtensions: Bool = true) {
        self.name = name
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.models = models
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.readTimeoutSeconds = readTimeoutSeconds
        self.connectRetries = connectRetries
        self.sendsSamplingExtensions = sendsSamplingExtensions
    }

    /// `<base>/v1/<path>`, whether or not `baseURL` already ends in `/v1`.
    public func url(_ path: String) -> URL {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        if !base.hasSuffix("/v1") { base += "/v1" }
        return URL(string: base + "/" + path) ?? baseURL.appendingPathComponent("v1").appendingPathComponent(path)
    }

    /// The server's name for a model of ours, when this endpoint serves it.
    public func serverModel(for id: String) -> String? { models.first { $0.id == id }?.serverModel }

    /// Throws `.invalidConfiguration` when the URL is not http(s), carries credentials, or a name or timeout is bad.
    public func validate() throws {
        func bad(_ what: String) -> RunAnywhereError { RunAnywhereError(.invalidConfiguration, "Remote endpoint '\(name)': \(what)") }
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0 == ":" }) else { throw bad("the name must be non-empty, without spaces or ':'.") }
        guard baseURL.isHTTPOrHTTPS, baseURL.host != nil else { throw bad("the URL \(redactedURL) is not an http or https URL.") }
        guard baseURL.user == nil, baseURL.password == nil else { throw bad("put the API key in RemoteEndpoint.apiKey, not in the URL.") }
        guard connectTimeoutSeconds > 0, readTimeoutSeconds > 0 else { throw bad("timeouts must be positive.") }
        guard connectRetries >= 0 else { throw bad("connectRetries must be ≥ 0.") }
        for m in models {
            try ModelID.validate(m.id)
            guard !m.serverModel.isEmpty else { throw bad("model '\(m.id)' has an empty server model name.") }
        }
    }

    /// The URL for messages (never with credentials).
    var redactedURL: String { CurlTransfer.withoutCredentials(baseURL.absoluteString) }

    /// Name, URL, whether a key is set (never the key) and how many models.
    public var description: String {
        "RemoteEndpoint(\(name), \(redactedURL), apiKey: \(apiKey == nil ? "none" : "<redacted>"), \(models.count) models)"
    }

    /// The same as ``description``: the key stays redacted.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: every field but the key, which is `<redacted>`.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "baseURL": redactedURL, "apiKey": apiKey == nil ? "none" : "<redacted>",
                                "models": models, "connectTimeoutSeconds": connectTimeoutSeconds,
                                "readTimeoutSeconds": readTimeoutSeconds, "connectRetries": connectRetries,
                                "sendsSamplingExtensions": sendsSamplingExtensions])
    }
}

/// A model a remote endpoint serves: our id and the server's name for it.
public struct RemoteModel: Sendable, Hashable, Codable {
    /// Our id (`models.list()`, `LlmOptions(model:)`).
    public var id: String
    /// The server's name (`model` in its requests, an `id` of its `/v1/models`).
    public var serverModel: String
    /// Display name (default: the server's name).
    public var name: String?
    /// What it does (default `.language`).
    public var category: ModelCategory
    /// Its context window on the server, when known.
    public var contextLength: Int?

    /// Describes a model served remotely.
    public init(id: String, serverModel: String, name: String? = nil, category: ModelCategory = .language, contextLength: Int? = nil) {
        self.id = id
        self.serverModel = serverModel
        self.name = name
        self.category = category
        self.contextLength = contextLength
    }
}

/// When a request that could run on the device is sent to a remote endpoint instead. The default sends nothing.
///
/// A load pinned to a backend (`BackendPreference(backend:required: true)`) is never rerouted; a model that exists
/// only on a server always goes there. Whichever way it goes, `LoadedModel.backendNote` and
/// `GenerationResult.backendNote` say which backend served it and why.
public struct RemoteRouting: Sendable, Hashable {
    /// Why a request may leave the device.
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
        /// The model does not fit the memory check (`.insufficientMemory` on the device).
        case insufficientMemory
        /// No on-device backend can run the model (architecture, format or category).
        case unsupportedOnDevice
        /// The model is resident on the device and busy with another call: this call goes to the endpoint instead of
        /// waiting its turn (text generation).
        case busy
    }

    /// The endpoint that takes rerouted requests (``RemoteEndpoint/name``).
    public var endpoint: String
    /// The reasons that reroute; empty never reroutes.
    public var reasons: Set<Reason>

    /// Reroutes to `endpoint` for these reasons.
    public init(endpoint: String = RemoteEndpoint.defaultName, when reasons: Set<Reason>) {
        self.endpoint = endpoint
        self.reasons = reasons
    }

    /// Never reroutes (the default).
    public static let never = RemoteRouting(when: [])

    /// Whether `reason` sends requests to the endpoint.
    public func reroutes(_ reason: Reason) -> Bool { reasons.contains(reason) }
}

/// A backend for a ``RemoteEndpoint`` that can learn models after it was made
/// (``ModelManager/registerRemoteModel(_:endpoint:)``). `RunAnywhereRemote.RemoteBackend` is one.
public protocol RemoteModelServing: InferenceBackend {
    /// The endpoint it talks to.
    var endpoint: RemoteEndpoint { get }
    /// Adds (or replaces) a model it serves.
    func serve(_ model: RemoteModel)
}
