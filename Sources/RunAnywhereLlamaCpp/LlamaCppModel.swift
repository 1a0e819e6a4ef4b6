import Foundation
import RunAnywhereCore
import RunAnywhereGGUF

/// A model loaded in llama.cpp. Generation uses llama.cpp's tokenizer and forward pass, and RunAnywhere's own
/// sampling loop (``TokenLoop``) over llama.cpp's logits: the same LlmOptions give the same sampling on both
/// backends (greedy at temperature 0, the same seeded draws, stop sequences, limits and finish reasons).
final class LlamaCppModel: TextGenerationModel, @unchecked Sendable {
    let session: LlamaCppSession
    let modelId: String
    let prompt: LlamaCppPrompt
    let memoryBytes: Int64

    init(session: LlamaCppSession, modelId: String, prompt: LlamaCppPrompt, loadedBytes: Int64?) {
        self.session = session
        self.modelId = modelId
        self.prompt = prompt
        // What the process grew by while llama.cpp loaded (touched and repacked weights, KV cache, scratch), and at
        // least the tensors' size (mapped: a small model's growth drowns in the process's own churn).
        memoryBytes = max(loadedBytes ?? 0, session.modelBytes)
    }

    /// The prompt's token ids: llama.cpp's tokenizer, BOS added unless the template already wrote it.
    func promptTokens(_ request: BackendGenerationRequest) throws -> [Int32] {
        let (text, templated) = prompt.render(request, library: session.library)
        do {
            let withSpecial = try session.tokenize(text, addSpecial: true, parseSpecial: templated)
            guard templated else { return withSpecial }
            let plain = try session.tokenize(text, addSpecial: false, parseSpecial: true)
            // add_special put a BOS in front of a prompt that already starts with the BOS the template wrote.
            if withSpecial.count == plain.count + 1, withSpecial.count >= 2, withSpecial[0] == withSpecial[1] { return plain }
            return withSpecial
        } catch {
            throw RunAnywhereError(.generationFailed, "llama.cpp could not tokenize the prompt for '\(modelId)': \(error).", modelId: modelId)
        }
    }

    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        let (request, tokens, dropped) = try request.fittingContext(session.contextLength) { try promptTokens($0) }
        try BackendGenerationRequest.checkPrompt(tokenCount: tokens.count, contextLength: session.contextLength, modelId: modelId)
        let o = request.options
        let sampling = SamplingParameters(temperature: Float(o.temperature), topK: o.topK, topP: Float(o.topP), minP: Float(o.minP),
                                          repetitionPenalty: Float(o.repetitionPenalty), seed: o.seed)
        do {
            let r = try TokenLoop.run(LlamaCppLoopEngine(session: session), prompt: tokens, sampling: sampling, maxTokens: o.maxTokens,
                                      stop: o.stopSequences, shouldContinue: shouldContinue, onText: onText)
            return BackendGenerationStats(promptTokens: r.promptTokens, outputTokens: r.tokens.count, promptSeconds: r.promptSeconds,
                                          decodeSeconds: r.decodeSeconds, finishReason: .init(rawValue: r.finishReason.rawValue) ?? .maxTokens,
                                          droppedHistoryTurns: dropped, reusedPromptTokens: r.promptTokens - r.evaluatedPromptTokens)
        } catch let error as LlamaCppFailure {
            throw RunAnywhereError(.generationFailed, "Generation with '\(modelId)' in llama.cpp failed: \(error).", modelId: modelId)
        }
    }
}

/// llama.cpp's side of the shared sampling loop.
struct LlamaCppLoopEngine: TokenLoopEngine {
    let session: LlamaCppSession

    var cachedTokens: [Int32] { session.cachedTokens }
    func truncate(to count: Int) { session.truncate(to: count) }
    var promptBatchSize: Int { session.batchSize }
    func evaluate(_ tokens: [Int32]) throws -> [Float] { try session.evaluate(tokens) }
    func textBytes(of token: Int32) -> ArraySlice<UInt8> { session.piece(token, special: false)[...] }
    func isEndOfGeneration(_ token: Int32) -> Bool { session.isEndOfGeneration(token) }
    var hasRoomForAnotherToken: Bool { session.position < session.contextLength }
}
