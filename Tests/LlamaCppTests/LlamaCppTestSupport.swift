import Foundation
import RunAnywhere
import RunAnywhereGGUF
import RunAnywhereLlamaCpp
import RunAnywhereTestSupport
import Testing

/// Whether llama.cpp is installed where the backend looks (`RUNANYWHERE_LLAMACPP_LIB` or the project folder).
enum LlamaCppInstall {
    static let reason = LlamaCppBackend().unavailableReason
    static var isInstalled: Bool { reason == nil }
    static var skipReason: Comment { Comment(rawValue: reason ?? "") }
}

/// The shared test data (`RUNANYWHERE_TESTDATA`).
enum SharedData {
    static var isAvailable: Bool { SharedTestData.root != nil }
    static let skipReason = Comment(rawValue: SharedTestData.missingReason)
    static func model(_ name: String) throws -> String { try #require(SharedTestData.root) + "/models/\(name).gguf" }
    static func reference(_ name: String) throws -> ReferenceFile { try ReferenceFile(path: try #require(SharedTestData.root) + "/references/\(name).json") }
}

/// An SDK over a temporary root, with the llama.cpp backend registered after the native one, and a loopback mirror.
struct LlamaCppEnvironment {
    let dir: TemporaryDirectory
    let mirror: ModelMirror
    let sdk: RunAnywhereSDK

    init(backend: LlamaCppBackend = LlamaCppBackend()) async throws {
        dir = try TemporaryDirectory(prefix: "runanywhere-llamacpp")
        mirror = try ModelMirror()
        sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url, environment: [:]))
        await sdk.models.registerBackend(backend)
    }

    /// Publishes a GGUF file, registers and downloads it; returns its id.
    func add(_ data: Data, name: String) async throws -> String {
        let url = mirror.publish(name + ".gguf", data: data)
        let info = try await sdk.registerModel(id: name, name: name, url: url.absoluteString, framework: .llamaCpp, modality: .language)
        for try await _ in try await sdk.models.download(id: info.id) {}
        return info.id
    }

    /// Registers and downloads a demo model (which the native engine serves); returns its id.
    func demo() async throws -> String {
        let info = try await mirror.registerDemoModel(.forest, with: sdk)
        for try await _ in try await sdk.models.download(id: info.id) {}
        return info.id
    }

    func close() {
        mirror.stop()
        dir.remove()
    }
}

/// A copy of a GGUF file whose architecture is renamed (every `<old>.` key prefix too): the same weights under an
/// architecture name the native engine refuses and llama.cpp knows (`mistral3` builds llama's graph).
func renamingArchitecture(of path: String, to newName: String) throws -> Data {
    let file = try GGUFFile(path: path)
    let old = try #require(file.string("general.architecture"))
    var writer = GGUFWriter()
    writer.version = file.version
    for key in file.metadataKeys {
        let value = try #require(file.metadata[key])
        let renamed = key.hasPrefix(old + ".") ? newName + key.dropFirst(old.count) : key
        writer.set(renamed, key == "general.architecture" ? .string(newName) : value)
    }
    for t in file.tensors {
        writer.addTensor(name: t.name, shape: t.shape, type: t.type, data: Array(file.bytes(of: t)))
    }
    return writer.data()
}
