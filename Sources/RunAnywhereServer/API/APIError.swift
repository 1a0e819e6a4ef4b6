import Foundation
import RunAnywhere

/// An error as the OpenAI API reports it: an HTTP status and `{"error":{"message","type","param","code"}}`.
public struct APIError: Error, Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// What went wrong and what to do, for a person.
    public var message: String
    /// OpenAI's error type (`invalid_request_error`, `authentication_error`, `rate_limit_error`, `server_error`).
    public var type: String
    /// The request field at fault, when one is.
    public var param: String?
    /// A stable code for programs (`model_not_found`, `invalid_api_key`, …).
    public var code: String?

    /// Creates an error.
    public init(status: Int, message: String, type: String, param: String? = nil, code: String? = nil) {
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
    }

    /// 400: the request is not what the endpoint reads.
    static func invalid(_ message: String, param: String? = nil, code: String? = "invalid_request") -> APIError {
        APIError(status: 400, message: message, type: "invalid_request_error", param: param, code: code)
    }

    /// 404: no such path.
    static func unknownPath(_ method: String, _ path: String) -> APIError {
        APIError(status: 404, message: "No endpoint \(method) \(path). This server offers GET /health, GET /v1/models, POST /v1/chat/completions and POST /v1/completions.",
                 type: "invalid_request_error", code: "unknown_url")
    }

    /// 404: no such model, or not on disk.
    static func unknownModel(_ id: String, reason: String) -> APIError {
        APIError(status: 404, message: reason, type: "invalid_request_error", param: "model", code: "model_not_found")
    }

    /// 405: the path exists with another method.
    static func wrongMethod(_ method: String, _ path: String, allowed: String) -> APIError {
        APIError(status: 405, message: "\(path) takes \(allowed), not \(method).", type: "invalid_request_error", code: "method_not_allowed")
    }

    /// 401: no key, or the wrong one.
    static let unauthorized = APIError(status: 401, message: "Missing or wrong API key: send the key the server was started with (--api-key) as `Authorization: Bearer KEY`.",
                                       type: "authentication_error", code: "invalid_api_key")

    /// 413: the body is over the limit.
    static func tooLarge(limit: Int) -> APIError {
        APIError(status: 413, message: "The request body is larger than this server's limit of \(limit) bytes.",
                 type: "invalid_request_error", code: "request_too_large")
    }

    /// 429: the model's queue is full.
    static func queueFull(model: String, depth: Int) -> APIError {
        APIError(status: 429, message: "Model '\(model)' already has \(depth) requests waiting; retry later (the server's --queue-depth sets how many may wait).",
                 type: "rate_limit_error", code: "queue_full")
    }

    /// 503: the server is shutting down.
    static let shuttingDown = APIError(status: 503, message: "The server is shutting down.", type: "server_error", code: "shutting_down")

    /// The response body.
    var json: JSONValue {
        ["error": ["message": .string(message), "type": .string(type),
                   "param": param.map(JSONValue.string) ?? .null, "code": code.map(JSONValue.string) ?? .null]]
    }

    /// The error a failed generation is reported as: a missing model is 404, a model that cannot be loaded 503,
    /// options out of range or a prompt too long for the context 400, anything else 500.
    static func from(_ error: any Error, model: String) -> APIError {
        guard let e = error as? RunAnywhereError else {
            return APIError(status: 500, message: "Generation failed: \(error)", type: "server_error", code: "generation_failed")
        }
        switch e.code {
        case .modelNotFound, .modelNotDownloaded:
            return unknownModel(model, reason: e.message)
        case .invalidConfiguration:
            return invalid(e.message, code: e.message.contains("context window") ? "context_length_exceeded" : "invalid_request")
        case .insufficientMemory, .backendUnavailable, .invalidModelFormat, .insufficientStorage, .storageFailure,
             .checksumMismatch, .modelNotLoaded:
            return APIError(status: 503, message: "Model '\(model)' could not be loaded: \(e.message)", type: "server_error", code: "model_load_failed")
        case .cancelled:
            return APIError(status: 499, message: e.message, type: "server_error", code: "cancelled")
        default:
            return APIError(status: 500, message: e.message, type: "server_error", code: "generation_failed")
        }
    }
}
