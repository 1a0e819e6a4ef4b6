import RunAnywhereGGUF

/// A ``TokenLoopEngine`` whose forward pass costs nothing: it hands back the same logits every step, so a
/// ``TokenLoop`` run over it times the loop's own per-token work (sampling over the whole vocabulary, the
/// detokenizer, whole UTF-8 characters, stop sequences) with the model's real vocabulary size and token texts.
final class InstantEngine: TokenLoopEngine {
    let model: GGUFModel
    let logits: [Float]
    var cachedTokens: [Int32] = []

    init(model: GGUFModel, logits: [Float]) {
        self.model = model
        self.logits = logits
    }

    func truncate(to count: Int) { cachedTokens.removeLast(max(0, cachedTokens.count - count)) }
    var promptBatchSize: Int { 256 }
    func evaluate(_ tokens: [Int32]) throws -> [Float] {
        cachedTokens += tokens
        return logits
    }
    func textBytes(of token: Int32) -> ArraySlice<UInt8> { ArraySlice(model.tokenizer.piece(for: token)) }
    func isEndOfGeneration(_ token: Int32) -> Bool { false }
    var hasRoomForAnotherToken: Bool { true }
}

/// Microseconds a token of ``TokenLoop`` costs besides the forward pass, greedy and with `sampling`.
func loopOverheadMicroseconds(model: GGUFModel, logits: [Float], sampling: SamplingParameters, tokens: Int = 512) throws -> Double {
    let engine = InstantEngine(model: model, logits: logits)
    let r = try TokenLoop.run(engine, prompt: [1], sampling: sampling, maxTokens: tokens, stop: ["\n\nUser:"],
                              shouldContinue: { true }, onText: { _ in })
    return r.decodeSeconds / Double(max(1, r.tokens.count)) * 1e6
}
