import CCurl
import Foundation

/// A small in-memory HTTP GET through libcurl, for catalogs and other documents (not model files).
enum HTTPGet {
    private final class Sink {
        var data = Data()
        let limit: Int
        var overflow = false
        init(limit: Int) { self.limit = limit }
    }

    /// Fetches `url` (http/https only), following redirects, failing on HTTP errors or bodies over `maxBytes`.
    static func fetch(_ url: URL, maxBytes: Int = 16 << 20, timeoutSeconds: Int = 30) async throws -> Data {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw RunAnywhereError(.invalidConfiguration, "Unsupported URL '\(url.absoluteString)': only http and https are allowed.")
        }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try perform(url, maxBytes: maxBytes, timeoutSeconds: timeoutSeconds) })
            }
        }
    }

    private static func perform(_ url: URL, maxBytes: Int, timeoutSeconds: Int) throws -> Data {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_easy_init() else {
            throw RunAnywhereError(.downloadFailed, "libcurl could not create a handle for \(url.absoluteString).")
        }
        defer { curl_easy_cleanup(handle) }
        let sink = Sink(limit: maxBytes)
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }
        _ = ra_curl_setopt_string(handle, CURLOPT_URL, url.absoluteString)
        _ = ra_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ra_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        _ = ra_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        _ = ra_curl_setopt_long(handle, CURLOPT_MAXREDIRS, 10)
        _ = ra_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ra_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 15)
        _ = ra_curl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds)
        _ = ra_curl_setopt_string(handle, CURLOPT_USERAGENT, RunAnywhere.userAgent)
        _ = ra_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, box.toOpaque())
        _ = ra_curl_setopt_write_cb(handle) { ptr, size, count, user in
            guard let user, let ptr else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
            let n = size * count
            if sink.data.count + n > sink.limit {
                sink.overflow = true
                return 0
            }
            sink.data.append(UnsafeRawPointer(ptr).assumingMemoryBound(to: UInt8.self), count: n)
            return n
        }
        let rc = curl_easy_perform(handle)
        if sink.overflow {
            throw RunAnywhereError(.downloadFailed, "\(url.absoluteString) returned more than \(ByteFormatter.string(Int64(maxBytes))).")
        }
        guard rc == CURLE_OK else {
            throw CurlGlobal.error(for: rc, url: url)
        }
        var status = 0
        _ = ra_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        guard (200..<300).contains(status) else {
            if status == 401 || status == 403 {
                throw RunAnywhereError(.authenticationRequired, "\(url.absoluteString) answered HTTP \(status): credentials are required.")
            }
            throw RunAnywhereError(.downloadFailed, "\(url.absoluteString) answered HTTP \(status).")
        }
        return sink.data
    }
}

/// Process-wide libcurl set-up and error mapping.
enum CurlGlobal {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// Runs `curl_global_init` once.
    static func ensureInitialized() { _ = initialized }

    /// Maps a libcurl result code to the SDK's error.
    static func error(for code: CURLcode, url: URL) -> RunAnywhereError {
        let text = String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return RunAnywhereError(.networkUnavailable, "Cannot resolve \(url.host ?? url.absoluteString) (\(text)). Check the network connection.")
        case CURLE_COULDNT_CONNECT:
            return RunAnywhereError(.networkUnavailable, "Cannot connect to \(url.host ?? url.absoluteString) (\(text)). Check the network connection.")
        default:
            return RunAnywhereError(.downloadFailed, "Request to \(url.absoluteString) failed: \(text).")
        }
    }
}
