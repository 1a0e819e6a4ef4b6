import Foundation
import RunAnywhere

/// What a request asks for, once its method, path and body have been checked.
enum APIRequest: Sendable, Hashable {
    /// `GET /health`.
    case health
    /// `GET /v1/models`.
    case listModels
    /// `GET /v1/models/{id}`.
    case model(id: String)
    /// `POST /v1/chat/completions` or `POST /v1/completions`.
    case generate(CompletionJob)
}

/// One completion to run: the prompt, the SDK options it maps to, and how to answer.
struct CompletionJob: Sendable, Hashable {
    /// Which endpoint asked, which decides the response's shape.
    enum Kind: Sendable, Hashable {
        /// `/v1/chat/completions`: messages in, an assistant message out (the model's chat template applies).
        case chat
        /// `/v1/completions`: a prompt continued as written.
        case text
    }

    /// Which endpoint asked.
    var kind: Kind
    /// The prompt (the last user message, for chat).
    var prompt: String
    /// The SDK options: model, limits, sampling, stop sequences, system prompt and history.
    var options: LlmOptions
    /// Answer with server-sent events.
    var stream: Bool
    /// Add a last event with the usage block (`stream_options.include_usage`).
    var includeUsage: Bool

    /// The model named by the request.
    var model: String { options.model ?? "" }
}

/// The endpoints: path, method, and what the body must hold.
enum RequestParser {
    /// Reads a request. A pure function of its inputs: every input gives a request or a typed ``APIError``.
    static func parse(method: String, path rawPath: String, body: [UInt8]) -> Result<APIRequest, APIError> {
        let path = Self.path(rawPath)
        guard let allowed = allowedMethod(path) else { return .failure(.unknownPath(method, path)) }
        guard method == allowed || (allowed == "GET" && method == "HEAD") else {
            return .failure(.wrongMethod(method, path, allowed: allowed))
        }
        switch path {
        case "/health", "/v1/health":
            return .success(.health)
        case "/v1/models":
            return .success(.listModels)
        case "/v1/chat/completions", "/v1/completions":
            return Result { () throws(APIError) in
                let fields = try object(body)
                return .generate(try job(path == "/v1/chat/completions" ? .chat : .text, fields))
            }
        default:
            let id = String(path.dropFirst(modelPrefix.count))
            return .success(.model(id: id.removingPercentEncoding ?? id))
        }
    }

    private static let modelPrefix = "/v1/models/"

    /// The path without its query string.
    static func path(_ raw: String) -> String {
        raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? raw
    }

    /// The method `path` takes, or nil when no endpoint has that path.
    static func allowedMethod(_ path: String) -> String? {
        switch path {
        case "/health", "/v1/health", "/v1/models": return "GET"
        case "/v1/chat/completions", "/v1/completions": return "POST"
        default: return path.hasPrefix(modelPrefix) && path.count > modelPrefix.count ? "GET" : nil
        }
    }

    /// The body as a JSON object.
    static func object(_ body: [UInt8]) throws(APIError) -> Fields {
        guard !body.isEmpty else { throw .invalid("The request has no body: send a JSON object.") }
        let value: JSONValue
        do {
            value = try JSONValue.decode(body)
        } catch {
            throw .invalid(error.message + " Send a JSON object (Content-Type: application/json).", code: "invalid_json")
        }
        guard case .object(let fields) = value else { throw .invalid("The body must be a JSON object.", code: "invalid_json") }
        return Fields(fields)
    }

    /// The job of a completion request.
    static func job(_ kind: CompletionJob.Kind, _ f: Fields) throws(APIError) -> CompletionJob {
        let model = try f.string("model", required: true) ?? ""
        guard !model.isEmpty else { throw .invalid("`model` must name a model (GET /v1/models lists them).", param: "model") }
        var options = LlmOptions(model: model)
        options.trimsHistoryToFit = false   // as OpenAI: a conversation longer than the context is an error, never cut
        let prompt: String
        switch kind {
        case .chat:
            let conversation = try Conversation(f)
            prompt = conversation.prompt
            options.systemPrompt = conversation.systemPrompt
            options.history = conversation.history
        case .text:
            prompt = try textPrompt(f)
            options.rawPrompt = true
            if try f.bool("echo") == true { throw .invalid("`echo` is not supported.", param: "echo") }
        }
        let newLimit = try f.int("max_completion_tokens", in: 1...1_000_000), oldLimit = try f.int("max_tokens", in: 1...1_000_000)
        if let n = newLimit ?? oldLimit { options.maxTokens = n }
        if let t = try f.number("temperature", in: 0...2) { options.temperature = t }
        if let p = try f.number("top_p", in: 0...1) {
            guard p > 0 else { throw .invalid("`top_p` must be greater than 0.", param: "top_p") }
            options.topP = p
        }
        if let k = try f.int("top_k", in: 0...1_000_000) { options.topK = k }
        if let m = try f.number("min_p", in: 0...0.999) { options.minP = m }
        if let r = try f.number("repeat_penalty", in: 0.01...10) { options.repetitionPenalty = r }
        if let seed = try f.int("seed", in: Int64.min...Int64.max) { options.seed = UInt64(bitPattern: Int64(seed)) }
        options.stopSequences = try stops(f)
        _ = try f.number("presence_penalty", in: -2...2)     // accepted as OpenAI clients send it; not applied
        _ = try f.number("frequency_penalty", in: -2...2)
        if let n = try f.int("n", in: 1...128), n != 1 { throw .invalid("Only `n: 1` is supported.", param: "n") }
        if let logprobs = f["logprobs"], logprobs != .null, logprobs != .bool(false), logprobs != .int(0) {
            throw .invalid("`logprobs` is not supported.", param: "logprobs")
        }
        if let tools = f["tools"], tools != .null, tools != .array([]) { throw .invalid("`tools` are not supported.", param: "tools") }
        if let format = f["response_format"], format != .null, format["type"] != .string("text") {
            throw .invalid("Only `response_format: {\"type\": \"text\"}` is supported.", param: "response_format")
        }
        let stream = try f.bool("stream") ?? false
        var includeUsage = false
        if let streamOptions = f["stream_options"], streamOptions != .null {
            guard case .object(let o) = streamOptions else { throw .invalid("`stream_options` must be an object.", param: "stream_options") }
            includeUsage = try Fields(o, prefix: "stream_options.").bool("include_usage") ?? false
        }
        return CompletionJob(kind: kind, prompt: prompt, options: options, stream: stream, includeUsage: includeUsage)
    }

    /// `prompt` of `/v1/completions`: a string, or an array holding one string.
    static func textPrompt(_ f: Fields) throws(APIError) -> String {
        switch f["prompt"] {
        case .string(let s)?:
            return s
        case .array(let items)? where items.count == 1:
            if case .string(let s) = items[0] { return s }
            throw .invalid("`prompt` must be a string (token arrays are not supported).", param: "prompt")
        case .array?:
            throw .invalid("`prompt` must be one string: several prompts in one request are not supported.", param: "prompt")
        case nil, .null?:
            throw .invalid("`prompt` is required.", param: "prompt")
        default:
            throw .invalid("`prompt` must be a string.", param: "prompt")
        }
    }

    /// `stop`: absent, null, a string, or an array of up to 4 non-empty strings.
    static func stops(_ f: Fields) throws(APIError) -> [String] {
        let found: [String]
        switch f["stop"] {
        case nil, .null?: return []
        case .string(let s)?: found = [s]
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw .invalid("`stop` must be a string or an array of strings.", param: "stop") }
                strings.append(s)
            }
            found = strings
        default: throw .invalid("`stop` must be a string or an array of strings.", param: "stop")
        }
        guard found.count <= 4 else { throw .invalid("`stop` holds at most 4 sequences.", param: "stop") }
        guard !found.contains("") else { throw .invalid("`stop` sequences must not be empty.", param: "stop") }
        return found
    }
}
