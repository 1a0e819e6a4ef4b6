import Foundation
import RunAnywhere
import RunAnywhereRemote
import RunAnywhereTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// An SDK over a temporary root (default backends plus those of its configuration) and a mirror for local models.
struct RemoteEnvironment {
    let dir: TemporaryDirectory
    let mirror: ModelMirror
    let sdk: RunAnywhereSDK

    init(endpoints: [RemoteEndpoint] = [], routing: RemoteRouting = .never, memoryBudget: Int64? = nil,
         environment: [String: String] = [:]) throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-remote")
        mirror = try ModelMirror()
        sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
            storageRoot: dir.url, memoryBudgetBytes: memoryBudget, environment: environment,
            remoteEndpoints: endpoints, remoteRouting: routing))
    }

    /// Registers and downloads the demo model (native engine); returns its id.
    func demo() async throws -> String {
        let info = try await mirror.registerDemoModel(.forest, with: sdk)
        for try await _ in try await sdk.models.download(id: info.id) {}
        return info.id
    }

    /// Publishes a GGUF file from disk, registers it under `id` and downloads it.
    func addLocal(_ path: String, id: String) async throws {
        let url = mirror.publish(id + ".gguf", data: try Data(contentsOf: URL(fileURLWithPath: path)))
        _ = try await sdk.registerModel(id: id, name: id, url: url.absoluteString, framework: .llamaCpp, modality: .language)
        for try await _ in try await sdk.models.download(id: id) {}
    }

    func close() {
        mirror.stop()
        dir.remove()
    }
}

/// A loopback server that accepts connections and never answers (a server too slow to be of use).
final class StallingServer: @unchecked Sendable {
    private let fd: Int32
    let port: Int
    private var held: [Int32] = []
    private let lock = NSLock()

    init() throws {
        (fd, port) = try bindLoopback(listening: true)
        let listener = fd
        Thread.detachNewThread { [weak self] in
            while true {
                let c = accept(listener, nil, nil)
                guard c >= 0 else { return }
                self?.lock.withLock { self?.held.append(c) }
            }
        }
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Connections accepted so far.
    var accepted: Int { lock.withLock { held.count } }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        lock.withLock { for c in held { close(c) }; held.removeAll() }
    }
}
