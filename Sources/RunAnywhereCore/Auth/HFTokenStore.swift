import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Holds the Hugging Face token and decides which hosts may receive it.
///
/// Resolution order: the token set with `RunAnywhere.setHfToken`, then the `HF_TOKEN` environment
/// variable, then `<storage root>/token` (written only when the app asks to persist), then
/// `$HF_HOME/token` or `~/.cache/huggingface/token` (huggingface_hub's login file).
/// The token is never logged, never written into a manifest, and sent only to its own hosts.
final class HFTokenStore: Sendable {
    private let explicit = Mutex<String?>(nil)
    private let environment: [String: String]
    private let layout: StorageLayout
    /// Extra hosts that may receive the token (tests point this at their loopback server).
    let extraTrustedHosts: Set<String>
    /// The Hugging Face mirror downloads go to instead of huggingface.co (`HF_ENDPOINT`).
    let endpoint: URL?

    init(layout: StorageLayout, environment: [String: String], extraTrustedHosts: Set<String>, endpoint: URL? = nil) {
        self.layout = layout
        self.environment = environment
        self.endpoint = endpoint
        var trusted = extraTrustedHosts
        // The mirror the user chose stands in for huggingface.co, token included (as huggingface_hub does).
        if let host = endpoint?.host?.lowercased() {
            trusted.insert(endpoint?.port.map { "\(host):\($0)" } ?? host)
        }
        self.extraTrustedHosts = trusted
    }

    /// Why the configured mirror cannot be used (not an http(s) URL with a host), or nil. Downloads check it first.
    var endpointProblem: RunAnywhereError? {
        guard let endpoint else { return nil }
        guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https", endpoint.host != nil,
              URLComponents(url: endpoint, resolvingAgainstBaseURL: false) != nil else {
            return RunAnywhereError(.invalidConfiguration, "HF_ENDPOINT (\(endpoint.absoluteString)) must be an http or https URL such as https://hf-mirror.com.")
        }
        return nil
    }

    /// Where `url` is fetched from: with a usable mirror, a `huggingface.co` or `hf.co` URL becomes the same path on
    /// the mirror (below the mirror's own path, if it has one); other URLs are left alone.
    func resolve(_ url: URL) -> URL {
        guard endpointProblem == nil, let endpoint, let host = url.host?.lowercased(), host == "huggingface.co" || host == "hf.co",
              var mirror = URLComponents(url: endpoint, resolvingAgainstBaseURL: false),
              let original = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        let base = mirror.percentEncodedPath.hasSuffix("/") ? String(mirror.percentEncodedPath.dropLast()) : mirror.percentEncodedPath
        mirror.percentEncodedPath = base + original.percentEncodedPath
        mirror.percentEncodedQuery = original.percentEncodedQuery
        return mirror.url ?? url
    }

    /// Sets (or clears with nil) the token; `persist` also stores it at `<root>/token` with mode 0600.
    func set(_ token: String?, persist: Bool) throws {
        let cleaned = token?.trimmingCharacters(in: .whitespacesAndNewlines)
        let value = (cleaned?.isEmpty ?? true) ? nil : cleaned
        explicit.withLock { $0 = value }
        if persist {
            if let value {
                try FileSystem.writeAtomically(Data(value.utf8), to: layout.tokenFile, mode: 0o600)
                chmod(layout.tokenFile.path, 0o600)
            } else {
                try? FileManager.default.removeItem(at: layout.tokenFile)
            }
        }
    }

    /// The token in force, or nil.
    var token: String? {
        if let t = explicit.withLock({ $0 }) { return t }
        if let t = environment["HF_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines), !t.isEmpty { return t }
        var files = [layout.tokenFile]
        if let hfHome = environment["HF_HOME"], !hfHome.isEmpty {
            files.append(URL(fileURLWithPath: hfHome).appendingPathComponent("token"))
        } else if let home = environment["HOME"], !home.isEmpty {
            files.append(URL(fileURLWithPath: home).appendingPathComponent(".cache/huggingface/token"))
        }
        for f in files {
            if let data = try? Data(contentsOf: f), let s = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty {
                return s
            }
        }
        return nil
    }

    /// Whether the token may be sent to this URL: https to huggingface.co / hf.co (or their subdomains),
    /// or a host the configuration trusts explicitly.
    func mayReceiveToken(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if extraTrustedHosts.contains(host) || extraTrustedHosts.contains("\(host):\(url.port ?? -1)") { return true }
        guard url.scheme?.lowercased() == "https" else { return false }
        return host == "huggingface.co" || host.hasSuffix(".huggingface.co") || host == "hf.co" || host.hasSuffix(".hf.co")
    }

    /// The Authorization header for `url`, when a token exists and the host may receive it.
    func authorizationHeader(for url: URL) -> String? {
        guard mayReceiveToken(url), let t = token else { return nil }
        return "Bearer \(t)"
    }
}
