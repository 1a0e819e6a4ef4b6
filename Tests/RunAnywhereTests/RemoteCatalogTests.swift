import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport

@Suite("Remote catalog")
struct RemoteCatalogTests {
    static let catalog = """
        {"version": 1, "models": [
          {"id": "remote-tiny", "name": "Remote Tiny", "category": "language", "framework": "llamaCpp",
           "quantization": "Q8_0", "contextLength": 2048,
           "files": [{"url": "https://example.com/remote-tiny.gguf", "sizeBytes": 4096}]},
          {"id": "qwen3-0.6b", "name": "Shadowed", "category": "language", "framework": "llamaCpp",
           "files": [{"url": "https://example.com/other.gguf"}]}
        ]}
        """

    @Test("refresh(includeRemoteCatalog:) merges a catalog fetched over HTTP, persists it, and never shadows built-ins")
    func mergesRemote() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let server = try LoopbackHTTPServer(routes: ["/catalog.json": LoopbackRoute(body: Array(Self.catalog.utf8))])
        defer { server.stop() }
        let sdk = makeSDK(dir, remoteCatalog: server.url("/catalog.json"))
        #expect(await sdk.models.get(id: "remote-tiny") == nil)
        let report = await sdk.models.refresh(rescanLocal: false, includeRemoteCatalog: true)
        #expect(report.remoteModels == 2)
        #expect(report.problems.isEmpty, "\(report.problems)")
        let remote = try #require(await sdk.models.get(id: "remote-tiny"))
        #expect(remote.source == .remoteCatalog && remote.downloadSize == 4096 && remote.contextLength == 2048)
        #expect(await sdk.models.get(id: "qwen3-0.6b")?.name == "Qwen3 0.6B")
        // A new instance (another process) sees the cached remote catalog without fetching.
        server.stop()
        #expect(await makeSDK(dir).models.get(id: "remote-tiny") != nil)
    }

    @Test("a broken remote catalog is reported and changes nothing", arguments: [
        LoopbackRoute(body: Array("{not json".utf8)),
        LoopbackRoute(body: Array(#"{"version": 9, "models": []}"#.utf8)),
        LoopbackRoute(body: Array(#"{"version": 1, "models": [{"id": "../evil", "name": "x", "category": "language", "framework": "llamaCpp", "files": [{"url": "https://e.com/a.gguf"}]}]}"#.utf8)),
        LoopbackRoute(body: Array(#"{"version": 1, "models": [{"id": "ftp", "name": "x", "category": "language", "framework": "llamaCpp", "files": [{"url": "ftp://e.com/a.gguf"}]}]}"#.utf8)),
        LoopbackRoute(fallback: .status(500)),
    ])
    func brokenRemote(route: LoopbackRoute) async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let server = try LoopbackHTTPServer(routes: ["/catalog.json": route])
        defer { server.stop() }
        let sdk = makeSDK(dir, remoteCatalog: server.url("/catalog.json"))
        let before = try await sdk.models.list().map(\.id)
        let report = await sdk.models.refresh(rescanLocal: false, includeRemoteCatalog: true)
        #expect(report.problems["remote catalog"] != nil)
        #expect(try await sdk.models.list().map(\.id) == before)
    }

    @Test("refresh without a configured remote catalog says so")
    func noURL() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let report = await makeSDK(dir).models.refresh(includeRemoteCatalog: true)
        #expect(report.problems["remote catalog"]?.contains("remoteCatalogURL") == true)
    }
}
