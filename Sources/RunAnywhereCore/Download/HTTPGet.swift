import CCurl
import Foundation

/// A small in-memory HTTP GET for catalogs and other documents (not model files): a thin wrapper over
/// ``CurlTransfer``, so there is one libcurl code path (redirect rules, protocol limits, error mapping).
enum HTTPGet {
    /// Collects a body up to a limit.
    private final class DataSink: TransferSink {
        var data = Data()
        let limit: Int
        let url: URL

        init(limit: Int, url: URL) {
            self.limit = limit
            self.url = url
        }

        func receive(head: HTTPResponseHead) throws -> Bool {
            guard (200..<300).contains(head.status) else {
                throw TransferError.permanent(RunAnywhereError(.downloadFailed, "\(url.absoluteString) answered HTTP \(head.status)."))
            }
            if let length = head.contentLength, length > Int64(limit) { throw overflow }
            return true
        }

        func receive(body: UnsafeRawBufferPointer) throws {
            guard data.count + body.count <= limit else { throw overflow }
            data.append(contentsOf: body)
        }

        private var overflow: RunAnywhereError {
            RunAnywhereError(.downloadFailed, "\(url.absoluteString) returned more than \(ByteFormatter.string(Int64(limit))).")
        }
    }

    /// Reads only the head of a GET.
    private final class HeadSink: TransferSink {
        var size: Int64?

        func receive(head: HTTPResponseHead) throws -> Bool {
            if (200..<300).contains(head.status) { size = head.linkedSize ?? head.contentLength }
            return false
        }

        func receive(body: UnsafeRawBufferPointer) throws {}
    }

    /// The size of the file at `url` as its server announces it (the head of a GET, following redirects; the body is
    /// not read), or nil when it does not say or cannot be reached within `timeoutSeconds`.
    static func size(of url: URL, authorization: String?, timeoutSeconds: Double) async -> Int64? {
        try? await BlockingWork.run(name: "RunAnywhere.httpSize") { flag in
            let sink = HeadSink()
            _ = try CurlTransfer.perform(HTTPRequest(url: url, authorization: authorization),
                                         options: TransferOptions(connectTimeout: timeoutSeconds, stallTimeout: timeoutSeconds),
                                         sink: sink, cancellation: flag)
            return sink.size
        } ?? nil
    }

    /// Fetches `url` (http/https only), following redirects, failing on HTTP errors or bodies over `maxBytes`.
    /// `timeoutSeconds` bounds a silence (no byte arriving), not the whole transfer.
    static func fetch(_ url: URL, maxBytes: Int = 16 << 20, timeoutSeconds: Int = 30) async throws -> Data {
        do {
            return try await BlockingWork.run(name: "RunAnywhere.httpGet") { flag in
                let sink = DataSink(limit: maxBytes, url: url)
                _ = try CurlTransfer.perform(HTTPRequest(url: url),
                                             options: TransferOptions(connectTimeout: 15, stallTimeout: Double(timeoutSeconds)),
                                             sink: sink, cancellation: flag)
                return sink.data
            }
        } catch let error as TransferError {
            throw error.runAnywhereError
        }
    }
}
