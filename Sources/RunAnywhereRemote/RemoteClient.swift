import Foundation
import RunAnywhereCore

/// HTTP to one ``RemoteEndpoint`` on the core's libcurl transfer: JSON requests, streamed responses, the API key
/// only in `Authorization`, repeats only of requests that never reached the server, and the endpoint's failures as
/// ``RunAnywhereError``s a person can act on.
struct RemoteClient: Sendable {
    let endpoint: RemoteEndpoint

    /// Receives one response: its head, then (2xx) the body bytes, or (errors) up to 16 KiB of the error document.
    final class ResponseSink: TransferSink {
        var head: HTTPResponseHead?
        var errorBody: [UInt8] = []
        let onBody: (HTTPResponseHead, UnsafeRawBufferPointer) throws -> Void

        init(onBody: @escaping (HTTPResponseHead, UnsafeRawBufferPointer) throws -> Void) { self.onBody = onBody }

        func receive(head: HTTPResponseHead) throws -> Bool {
            self.head = head
            return true
        }

        func receive(body: UnsafeRawBufferPointer) throws {
            guard let head else { return }
            if (200..<300).contains(head.status) {
                try onBody(head, body)
            } else {
                errorBody.append(contentsOf: body.prefix(max(0, 16_384 - errorBody.count)))
            }
        }
    }

    /// Performs one request (a GET, or a POST of `body`), handing a 2xx body to `onBody` as it arrives. A request
    /// whose connection could not be made is tried again up to `connectRetries` times; one that reached the server never.
    /// - Throws: ``RunAnywhereError`` (see ``failure(_:report:path:modelId:)``), or what `onBody` throws.
    func perform(_ path: String, body: Data? = nil, modelId: String?, cancellation: CancellationFlag = CancellationFlag(),
                 shouldContinue: (() -> Bool)? = nil,
                 onBody: @escaping (HTTPResponseHead, UnsafeRawBufferPointer) throws -> Void) throws -> HTTPResponseHead {
        try endpoint.validate()
        let request = HTTPRequest(url: endpoint.url(path),
                                  headers: ["Accept": body == nil ? "application/json" : "text/event-stream, application/json"],
                                  authorization: endpoint.apiKey.map { "Bearer \($0)" }, body: body)
        let options = TransferOptions(connectTimeout: endpoint.connectTimeoutSeconds, stallTimeout: endpoint.readTimeoutSeconds,
                                      maxRedirects: body == nil ? 3 : 0, deliversErrorResponses: true)
        var attempt = 0
        while true {
            let sink = ResponseSink(onBody: onBody)
            let report = TransferReport()
            do {
                _ = try CurlTransfer.perform(request, options: options, sink: sink, cancellation: cancellation,
                                             shouldContinue: shouldContinue, report: report)
                guard let head = sink.head else {
                    throw RunAnywhereError(.generationFailed, "\(place(path)) answered without an HTTP response.", modelId: modelId)
                }
                if !(200..<300).contains(head.status) { throw httpError(head, body: sink.errorBody, path: path, modelId: modelId) }
                return head
            } catch let error as TransferError {
                // Only a request that never reached the server is repeated: nothing was sent, nothing was generated.
                if case .transient = error, !report.connected, !report.stalled, sink.head == nil, attempt < endpoint.connectRetries,
                   !cancellation.isCancelled {
                    attempt += 1
                    Thread.sleep(forTimeInterval: min(1.0, 0.1 * Double(1 << attempt)))
                    continue
                }
                throw failure(error, report: report, path: path, modelId: modelId, attempts: attempt + 1)
            }
        }
    }

    /// Performs a GET and returns its JSON body (at most 8 MiB).
    func getJSON(_ path: String, modelId: String?) throws -> Any {
        var data = Data()
        _ = try perform(path, modelId: modelId) { _, bytes in
            guard data.count + bytes.count <= 8 << 20 else {
                throw RunAnywhereError(.generationFailed, "\(place(path)) answered with more than 8 MiB.", modelId: modelId)
            }
            data.append(contentsOf: bytes)
        }
        do {
            return try JSONSerialization.jsonObject(with: data)
        } catch {
            throw RunAnywhereError(.generationFailed, "\(place(path)) answered with something that is not JSON: \(String(decoding: data.prefix(200), as: UTF8.self))", modelId: modelId)
        }
    }

    /// The ids of the server's `/v1/models`.
    func serverModels() throws -> [String] {
        let json = try getJSON("models", modelId: nil)
        guard let list = (json as? [String: Any])?["data"] as? [[String: Any]] else {
            throw RunAnywhereError(.generationFailed, "\(place("models")) did not answer with an OpenAI model list ({\"data\": [{\"id\": …}]}).")
        }
        return list.compactMap { $0["id"] as? String }
    }

    /// "The remote endpoint 'name' (url/v1/path)" ("the …" inside a sentence), for messages; never with the key.
    func place(_ path: String, inSentence: Bool = false) -> String {
        "\(inSentence ? "the" : "The") remote endpoint '\(endpoint.name)' (\(CurlTransfer.withoutCredentials(endpoint.url(path).absoluteString)))"
    }

    // MARK: Errors

    /// A failed transfer as the error a person should see.
    func failure(_ error: TransferError, report: TransferReport, path: String, modelId: String?, attempts: Int) -> RunAnywhereError {
        switch error {
        case .cancelled:
            return .cancelled("The request to the remote endpoint '\(endpoint.name)'", modelId: modelId)
        case .permanent(let e):
            return RunAnywhereError(e.code == .downloadFailed ? .networkUnavailable : e.code, redact(e.message), modelId: modelId)
        case .transient(let reason, _):
            if report.stalled {
                return RunAnywhereError(.networkUnavailable, "\(place(path)) sent nothing for \(format(endpoint.readTimeoutSeconds)) s (RemoteEndpoint.readTimeoutSeconds); the request timed out\(report.connected ? " after reaching the server, so it was not repeated" : "").", modelId: modelId)
            }
            let why = redact(report.detail.isEmpty ? reason : report.detail)
            if !report.connected {
                return RunAnywhereError(.networkUnavailable, "Cannot reach \(place(path, inSentence: true)) after \(attempts) attempt\(attempts == 1 ? "" : "s") (\(why)). Check that the server is running and its URL (RemoteEndpoint.baseURL, RUNANYWHERE_REMOTE_URL or --remote-url).", modelId: modelId)
            }
            return RunAnywhereError(.networkUnavailable, "The connection to \(place(path, inSentence: true)) was lost before the response ended (\(why)); a request that reached the server is not repeated.", modelId: modelId)
        }
    }

    /// An HTTP error status with the server's own message.
    func httpError(_ head: HTTPResponseHead, body: [UInt8], path: String, modelId: String?) -> RunAnywhereError {
        let said = redact(Self.serverMessage(body))
        let serverSays = said.isEmpty ? "" : ": \(said)"
        let status = head.status
        switch status {
        case 401, 403:
            let hint = endpoint.apiKey == nil ? "it needs an API key (RemoteEndpoint.apiKey, RUNANYWHERE_REMOTE_API_KEY or --api-key)"
                                              : "the API key was refused; check RemoteEndpoint.apiKey (RUNANYWHERE_REMOTE_API_KEY or --api-key)"
            return RunAnywhereError(.authenticationRequired, "\(place(path)) answered HTTP \(status)\(serverSays): \(hint).", modelId: modelId)
        case 404:
            return RunAnywhereError(.modelNotFound, "\(place(path)) answered HTTP 404\(serverSays). The server does not have the model (or this API path); check the server's name for it (RemoteModel.serverModel, --server-model) against `runanywhere models list --remote`.", modelId: modelId)
        case 429, 503:
            let after = parseRetryAfter(head.header("retry-after")).map { "; it asks to retry after \(format($0)) s" } ?? ""
            return RunAnywhereError(.backendUnavailable, "\(place(path)) is busy (HTTP \(status)\(serverSays))\(after).", modelId: modelId)
        default:
            return RunAnywhereError(status >= 500 ? .generationFailed : .invalidConfiguration,
                                    "\(place(path)) answered HTTP \(status)\(serverSays).", modelId: modelId)
        }
    }

    /// The message of an OpenAI-style error document (`{"error": {"message": …}}`, `{"error": "…"}`,
    /// `{"detail": …}`), else the body's text; at most 300 characters.
    static func serverMessage(_ body: [UInt8]) -> String {
        var text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] {
            if let e = json["error"] as? [String: Any], let m = e["message"] as? String { text = m }
            else if let e = json["error"] as? String { text = e }
            else if let d = json["detail"] as? String { text = d }
            else if let m = json["message"] as? String { text = m }
        }
        return String(text.prefix(300))
    }

    /// `message` with the API key replaced, should a server or library ever echo it.
    func redact(_ message: String) -> String {
        guard let key = endpoint.apiKey, !key.isEmpty else { return message }
        return message.replacingOccurrences(of: key, with: "<redacted>")
    }

    private func format(_ seconds: Double) -> String { String(format: seconds < 10 ? "%.1f" : "%.0f", seconds) }
}
