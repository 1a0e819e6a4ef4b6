import Foundation
@testable import RunAnywhereCore
import Testing

/// `HF_ENDPOINT` (``RunAnywhereConfiguration/huggingFaceEndpoint``): Hugging Face downloads go to a mirror.
@Suite("Hugging Face mirror (HF_ENDPOINT)")
struct HFEndpointTests {
    static func store(_ endpoint: String?) -> HFTokenStore {
        HFTokenStore(layout: StorageLayout(root: URL(fileURLWithPath: "/nonexistent-root")), environment: ["HF_TOKEN": "hf_x"],
                     extraTrustedHosts: [], endpoint: endpoint.flatMap(URL.init(string:)))
    }

    static let file = URL(string: "https://huggingface.co/org/repo/resolve/main/model%20v2.gguf?download=true")!

    @Test("huggingface.co and hf.co URLs move to the mirror, below its path; others stay; the token follows")
    func rewrites() throws {
        let s = Self.store("https://hf-mirror.example/base/")
        #expect(s.resolve(Self.file).absoluteString == "https://hf-mirror.example/base/org/repo/resolve/main/model%20v2.gguf?download=true")
        #expect(s.resolve(URL(string: "https://hf.co/a/b")!).absoluteString == "https://hf-mirror.example/base/a/b")
        let other = URL(string: "https://example.com/org/repo/model.gguf")!
        #expect(s.resolve(other) == other)
        // Subdomains (the CDN a redirect leads to) are not rewritten.
        let cdn = URL(string: "https://cdn-lfs.huggingface.co/x")!
        #expect(s.resolve(cdn) == cdn)
        #expect(s.authorizationHeader(for: s.resolve(Self.file)) == "Bearer hf_x")
        #expect(s.authorizationHeader(for: other) == nil)
        let local = Self.store("http://127.0.0.1:8123")
        #expect(local.resolve(Self.file).absoluteString == "http://127.0.0.1:8123/org/repo/resolve/main/model%20v2.gguf?download=true")
        #expect(local.authorizationHeader(for: local.resolve(Self.file)) == "Bearer hf_x")
        #expect(local.authorizationHeader(for: URL(string: "http://127.0.0.1:9999/x")!) == nil, "another port is another host")
    }

    @Test("no mirror: nothing changes; an unusable mirror is a typed problem and rewrites nothing")
    func noneAndInvalid() {
        #expect(Self.store(nil).resolve(Self.file) == Self.file)
        #expect(Self.store(nil).endpointProblem == nil)
        for bad in ["ftp://mirror.example", "mirror.example", "/srv/mirror"] {
            let s = Self.store(bad)
            #expect(s.endpointProblem?.code == .invalidConfiguration, "\(bad)")
            #expect(s.resolve(Self.file) == Self.file)
        }
    }
}
