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
    let old = try #require(try GGUFFile(path: path).string("general.architecture"))
    return try copyingGGUF(path) { key, value in
        (key.hasPrefix(old + ".") ? newName + key.dropFirst(old.count) : key, key == "general.architecture" ? .string(newName) : value)
    }
}

/// A copy of a GGUF file whose tensor `name` (2-D, rows of 256 columns) is replaced by random IQ2_XXS blocks of the
/// same shape: a type the native engine cannot compute with and llama.cpp can.
func replacingTensorWithIQ2XXS(of path: String, named name: String) throws -> Data {
    try copyingGGUF(path, tensor: { t, bytes in
        guard t.name == name else { return (t.type, bytes) }
        return (.iq2_xxs, GGUFWriter.randomIQ2XXS(blocks: t.shape[0] / 256 * t.shape[1], seed: 7))
    })
}

/// A copy of a GGUF file with its metadata entries and its tensors passed through `metadata` and `tensor`.
func copyingGGUF(_ path: String, metadata: (String, GGUFValue) -> (String, GGUFValue) = { ($0, $1) },
                 tensor: (GGUFTensorInfo, [UInt8]) -> (GGMLType, [UInt8]) = { ($0.type, $1) }) throws -> Data {
    let file = try GGUFFile(path: path)
    var writer = GGUFWriter()
    writer.version = file.version
    for key in file.metadataKeys {
        let (k, v) = metadata(key, try #require(file.metadata[key]))
        writer.set(k, v)
    }
    for t in file.tensors {
        let (type, data) = tensor(t, Array(file.bytes(of: t)))
        writer.addTensor(name: t.name, shape: t.shape, type: type, data: data)
    }
    return writer.data()
}
