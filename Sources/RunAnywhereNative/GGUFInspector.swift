import Foundation
import RunAnywhereCore
import RunAnywhereGGUF

/// Reads what a GGUF header says about a model, for the registry and the memory check.
enum GGUFInspector {
    /// The context a model is loaded with when LoadOptions does not say: the model's own maximum, capped.
    static func defaultContextLength(_ d: GGUFModelDescription) -> Int {
        GGUFLoadParameters.defaultContextLength(trained: d.contextLength)
    }

    /// Opens and describes a GGUF file, mapping reader errors to `.invalidModelFormat` / `.backendUnavailable`.
    static func describe(_ path: URL, modelId: String?) throws -> (GGUFFile, GGUFModelDescription) {
        do {
            let file = try GGUFFile(path: path.path)
            return (file, try GGUFModelDescription(file: file))
        } catch let error as GGUFError {
            throw error.runAnywhereError(modelId: modelId, path: path)
        }
    }

    /// The model with architecture, parameter count, context length, quantization and memory need from its header.
    static func enrich(_ model: ModelInfo, primaryFile: URL) throws -> ModelInfo {
        let (_, d) = try describe(primaryFile, modelId: model.id)
        var m = model
        m.architecture = d.architecture
        m.parameterCount = Int64(d.parameterCount)
        m.contextLength = d.contextLength
        m.quantization = d.quantization
        m.memoryRequirement = Int64(estimate(d, contextLength: defaultContextLength(d)).totalBytes)
        return m
    }

    /// Weights + KV cache (F16) + scratch for one batch.
    static func estimate(_ d: GGUFModelDescription, contextLength: Int) -> GGUFMemoryEstimate {
        GGUFMemoryEstimate(description: d, weightsBytes: d.tensorBytes, contextLength: contextLength,
                           batchSize: GGUFLoadParameters.defaultBatchSize)
    }
}

extension GGUFError {
    /// The SDK error for an engine error.
    func runAnywhereError(modelId: String?, path: URL? = nil) -> RunAnywhereError {
        let whereText = path.map { " (\($0.lastPathComponent))" } ?? ""
        switch kind {
        case .invalidFormat:
            return RunAnywhereError(.invalidModelFormat, "The model file\(whereText) is not a valid GGUF model: \(message).", modelId: modelId)
        case .unsupported:
            return RunAnywhereError(.backendUnavailable, "The native engine cannot run this model\(whereText): \(message).", modelId: modelId)
        case .io:
            return RunAnywhereError(.storageFailure, "Could not read the model file\(whereText): \(message).", modelId: modelId)
        }
    }
}
