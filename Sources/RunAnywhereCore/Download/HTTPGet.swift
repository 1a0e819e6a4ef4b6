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
