import Foundation
import RunAnywhere
import RunAnywhereRemote

/// The CLI's remote endpoint: `--remote-url` / `RUNANYWHERE_REMOTE_URL`, `--api-key` / `RUNANYWHERE_REMOTE_API_KEY`
/// (prefer the variable: a flag shows in the process list), `--server-model` for the server's name of the model.
/// Nothing is sent anywhere unless a command is given one of these.
enum RemoteOptions {
    static let valued: Set<String> = ["remote-url", "api-key", "server-model", "remote-timeout"]

    static let help = """
          --remote-url URL     an OpenAI-compatible server (vLLM, llama.cpp's server, Ollama, runanywhere serve);
                               default $RUNANYWHERE_REMOTE_URL
          --api-key KEY        its API key (default $RUNANYWHERE_REMOTE_API_KEY; the variable keeps it out of `ps`)
          --server-model NAME  the server's name for the model (default: the ID; see `models list --remote`)
          --remote-timeout S   seconds of silence before a request fails (default 60)
        """

    /// The endpoint the arguments and environment name, or nil when none is named.
    static func endpoint(_ args: Arguments, serving id: String? = nil) throws -> RemoteEndpoint? {
        let env = ProcessInfo.processInfo.environment
        guard let text = args.option("remote-url") ?? env["RUNANYWHERE_REMOTE_URL"], !text.isEmpty else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw UsageError("--remote-url / RUNANYWHERE_REMOTE_URL must be an http or https URL (got '\(text)')")
        }
        let key = args.option("api-key") ?? env["RUNANYWHERE_REMOTE_API_KEY"]
        var endpoint = RemoteEndpoint(baseURL: url, apiKey: key?.isEmpty == false ? key : nil)
        if let t = try args.double("remote-timeout", in: 0.1...86_400) { endpoint.readTimeoutSeconds = t }
        if let id {
            endpoint.models = [RemoteModel(id: id, serverModel: args.option("server-model") ?? id)]
        }
        try endpoint.validate()
        return endpoint
    }

    /// When the options pin the remote backend (`--backend remote`), configures the shared SDK with the endpoint
    /// serving `id` (call before any other use of `RunAnywhere`) and returns true.
    static func configureIfPinned(_ args: Arguments, id: String, options: LlmOptions) throws -> Bool {
        guard options.loadOptions?.backendPreferences.first?.backend.isRemote == true else { return false }
        let endpoint = try require(args, serving: id)
        RunAnywhere.configure(RunAnywhereConfiguration(remoteEndpoints: [endpoint]))
        return true
    }

    /// The endpoint or a usage error saying how to name one.
    static func require(_ args: Arguments, serving id: String? = nil) throws -> RemoteEndpoint {
        guard let e = try endpoint(args, serving: id) else {
            throw UsageError("no remote server: pass --remote-url URL or set RUNANYWHERE_REMOTE_URL")
        }
        return e
    }
}
