import Foundation
import RunAnywhereCore
import RunAnywhereGGUF

/// llama.cpp itself as a backend (`BackendID.llamaCpp`), loaded at run time from its shared libraries.
///
/// Serves GGUF language models of every architecture llama.cpp knows. When llama.cpp is not installed it
/// stays registered and says why it cannot serve (`cannotServe`), so a load that requires it fails with
/// `.backendUnavailable` naming the fix, and one that merely prefers it falls back.
///
/// `import RunAnywhere` registers it by default, after the native engine (``RunAnywhere/defaultBackends()``):
/// ```swift
/// let pinned = LoadOptions(backendPreferences: [BackendPreference(backend: .llamaCpp, required: true)])
/// try await sdk.models.load(id: "qwen3-0.6b", options: pinned)
/// ```
public struct LlamaCppBackend: InferenceBackend {
    /// `.llamaCpp`.
    public let id = BackendID.llamaCpp
    /// The directory holding `libllama` and `libggml*` set by the app, if any (else see ``LlamaCppLocation``).
    public let libraryDirectory: URL?
    private let environment: [String: String]
    /// Tokens per `llama_decode` while evaluating a prompt.
    static let batchSize = 256

    /// A llama.cpp backend. The libraries are looked for on first use, not here.
    /// - Parameters:
    ///   - libraryDirectory: where `libllama` is; nil looks at `RUNANYWHERE_LLAMACPP_LIB`, then the project-local folder.
    ///   - environment: consulted for `RUNANYWHERE_LLAMACPP_LIB`.
    public init(libraryDirectory: URL? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.libraryDirectory = libraryDirectory
        self.environment = environment
    }

    /// Nil when llama.cpp can be used here, else why not and what to do about it.
    public var unavailableReason: String? {
        if case .failure(let why) = library() { return why.description }
        return nil
    }

    /// The llama.cpp build in use (commit, version, CPU features), or nil when it is not available.
    public var buildDescription: String? {
        guard case .success(let lib) = library() else { return nil }
        return "llama.cpp \(lib.commit) (version \(lib.version)) from \(lib.directory.path); \(lib.systemInfo.trimmingCharacters(in: .whitespaces))"
    }

    func library() -> Result<LlamaCppLibrary, LlamaCppUnavailable> {
        LlamaCppLocation.resolve(explicit: libraryDirectory, environment: environment).flatMap(LlamaCppLibrary.open)
    }

    /// Nil when it can serve the model; else the reason (llama.cpp not installed or the wrong version included).
    public func cannotServe(_ model: ModelInfo) -> String? {
        guard model.framework == .llamaCpp else { return "it runs GGUF (llamaCpp) models, not \(model.framework.rawValue)" }
        guard model.format == .gguf else { return "the model file is \(model.format.rawValue), not GGUF" }
        guard model.category == .language else { return "it serves language models here, not \(model.category.rawValue)" }
        return unavailableReason
    }

    /// Weights, KV cache (F16, llama.cpp's default), scratch and the logits of one batch, from the GGUF header.
    /// Architectures without attention heads in their header (recurrent ones) are estimated as the file plus a quarter.
    public func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        let path = try primaryFile(model)
        let file: GGUFFile
        do {
            file = try GGUFFile(path: path.path)
        } catch let error as GGUFError {
            throw RunAnywhereError(.invalidModelFormat, "The model file (\(path.lastPathComponent)) cannot be read as GGUF: \(error.message).", modelId: model.id)
        }
        guard let description = try? GGUFModelDescription(file: file) else {
            let context = contextLength ?? 4096
            let weights = Int64(file.fileSize)
            return BackendMemoryEstimate(totalBytes: weights + weights / 4, weightsBytes: weights, workingBytes: weights / 4,
                                         contextLength: context, maximumContextLength: nil)
        }
        let context = contextLength ?? min(description.contextLength, 4096)
        let batch = min(Self.batchSize, context)
        // llama.cpp rounds the KV cache up to a multiple of 256 cells.
        let cells = (context + 255) / 256 * 256
        let e = GGUFMemoryEstimate(description: description, weightsBytes: description.tensorBytes, contextLength: cells, batchSize: batch)
        let logits = description.vocabSize * batch * MemoryLayout<Float>.size
        let working = Int64(e.kvCacheBytes + e.scratchBytes + logits)
        return BackendMemoryEstimate(totalBytes: Int64(e.weightsBytes) + working, weightsBytes: Int64(e.weightsBytes),
                                     workingBytes: working, contextLength: context, maximumContextLength: description.contextLength)
    }

    /// Loads the model into llama.cpp with the request's context length and threads.
    public func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        let model = request.model
        let path = try primaryFile(model)
        let lib: LlamaCppLibrary
        switch library() {
        case .success(let l): lib = l
        case .failure(let why): throw RunAnywhereError(.backendUnavailable, "llama.cpp cannot load '\(model.id)': \(why).", modelId: model.id)
        }
        let before = ResidentMemory.bytes()
        let session: LlamaCppSession
        do {
            session = try LlamaCppSession(library: lib, path: path.path, contextLength: request.contextLength,
                                          threads: request.threads, batchSize: Self.batchSize)
        } catch {
            let code: RunAnywhereError.Code = error.detail?.contains("architecture") == true ? .backendUnavailable : .invalidModelFormat
            throw RunAnywhereError(code, "llama.cpp could not load '\(model.id)' (\(path.lastPathComponent)): \(error).", modelId: model.id)
        }
        let grown = (ResidentMemory.bytes() ?? 0) - (before ?? 0)
        return LlamaCppModel(session: session, modelId: model.id, prompt: LlamaCppPrompt(session: session),
                             loadedBytes: before == nil ? nil : grown)
    }

    private func primaryFile(_ model: ModelInfo) throws -> URL {
        guard let path = model.primaryFilePath else {
            throw RunAnywhereError(.modelNotDownloaded, "Model '\(model.id)' is not on disk.", modelId: model.id)
        }
        return path
    }
}
