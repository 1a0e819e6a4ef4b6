import CCurl

/// Process-wide libcurl set-up.
enum CurlGlobal {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// Runs `curl_global_init` once; false when it failed.
    @discardableResult
    static func ensureInitialized() -> Bool { initialized }
}
