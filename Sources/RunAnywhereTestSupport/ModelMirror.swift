import Foundation
import RunAnywhere

/// A model mirror on 127.0.0.1: serves files with ETag, ranges and Hugging Face-style checksum headers,
/// the way a real model host does. Used by the tests and by `runanywhere demo`.
public final class ModelMirror: Sendable {
    /// The HTTP server underneath (scriptable: faults, bandwidth caps, request log).
    public let server: LoopbackHTTPServer

    /// Starts an empty mirror on a free loopback port.
    public init() throws {
        server = try LoopbackHTTPServer()
    }

    /// Publishes `data` at `/<name>` and returns its URL. With `bandwidthBytesPerSecond`, each connection is capped.
    @discardableResult
    public func publish(_ name: String, data: Data, bandwidthBytesPerSecond: Int? = nil, plan: [LoopbackAction] = []) -> URL {
        let bytes = [UInt8](data)
        let sha = Self.sha256Hex(bytes)
        server.setRoute("/" + name, LoopbackRoute(body: bytes, etag: "\"\(sha.prefix(16))\"", linkedSHA256: sha,
                                                  bandwidthBytesPerSecond: bandwidthBytesPerSecond, plan: plan))
        return server.url("/" + name)
    }

    /// Publishes one of the project's demo models and returns its URL and SHA-256.
    public func publishDemoModel(_ variant: DemoModel.Variant, bandwidthBytesPerSecond: Int? = nil) -> (url: URL, sha256: String, size: Int) {
        let data = DemoModel.gguf(variant).data()
        let url = publish("demo-\(variant.rawValue).gguf", data: data, bandwidthBytesPerSecond: bandwidthBytesPerSecond)
        return (url, Self.sha256Hex([UInt8](data)), data.count)
    }

    /// Registers the demo model `variant` with `sdk` under `demo-<variant>` and returns its info.
    public func registerDemoModel(_ variant: DemoModel.Variant, with sdk: RunAnywhereSDK, bandwidthBytesPerSecond: Int? = nil) async throws -> ModelInfo {
        let published = publishDemoModel(variant, bandwidthBytesPerSecond: bandwidthBytesPerSecond)
        return try await sdk.registerModel(id: "demo-\(variant.rawValue)", name: "Demo story model (\(variant.rawValue))",
                                           url: published.url.absoluteString, framework: .llamaCpp, modality: .language,
                                           sha256: published.sha256, sizeBytes: Int64(published.size))
    }

    /// Stops serving.
    public func stop() { server.stop() }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        SHA256Hasher.hexDigest(of: bytes)
    }
}
