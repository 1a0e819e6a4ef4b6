extension GGUFContext {
    /// Generates text after a prompt, streaming it as it is produced.
    ///
    /// Tokens already in the KV cache that match the start of the prompt are reused. Text is passed to `onText`
    /// in complete UTF-8 pieces; text that could be the start of a stop sequence is held back until it is known
    /// not to be one, and a stop sequence and everything after it are never emitted.
    ///
    /// - Parameters:
    ///   - prompt: token ids (at least one), usually from ``GGUFTokenizer/encode(_:addSpecial:parseSpecial:)``.
    ///   - sampling: how tokens are chosen.
    ///   - maxTokens: most tokens to generate.
    ///   - stop: stop sequences, matched on the detokenized text.
    ///   - shouldContinue: asked between prompt passes and before each token; returning false ends generation
    ///     with `.cancelled`.
    ///   - onText: receives the generated text piece by piece.
    /// - Returns: counts, timings, the finish reason and the generated token ids.
    /// - Throws: ``GGUFError`` when the prompt is empty, has an invalid token id or does not fit in the context.
    public func generate(prompt: [Int32], sampling: SamplingParameters, maxTokens: Int, stop: [String],
                         shouldContinue: () -> Bool, onText: (String) -> Void) throws -> GenerationStats {
        guard !prompt.isEmpty else { throw GGUFError(.invalidFormat, "the prompt has no tokens") }
        guard prompt.count <= contextLength else {
            throw GGUFError(.unsupported, "the prompt has \(prompt.count) tokens, more than the context length \(contextLength)")
        }
        let r = try TokenLoop.run(NativeLoopEngine(context: self), prompt: prompt, sampling: sampling, maxTokens: maxTokens,
                                  stop: stop, shouldContinue: shouldContinue, onText: onText)
        return GenerationStats(promptTokens: r.promptTokens, evaluatedPromptTokens: r.evaluatedPromptTokens,
                               generatedTokens: r.tokens.count, promptSeconds: r.promptSeconds,
                               decodeSeconds: r.decodeSeconds, finishReason: r.finishReason, tokens: r.tokens)
    }

    static func seconds(_ d: Duration) -> Double { TokenLoop.seconds(d) }
}

/// Finds stop sequences in streamed text, holding back any tail that may be the start of one.
struct StopSequenceFilter: Sendable {
    private let stops: [[UInt8]]
    private var held: [UInt8] = []

    init(stopSequences: [String]) {
        stops = stopSequences.map { Array($0.utf8) }.filter { !$0.isEmpty }
    }

    /// Adds text; returns what can be emitted now and whether a stop sequence was reached
    /// (then the text before it is returned and the rest is dropped).
    mutating func push(_ text: String) -> (text: String, stopped: Bool) {
        held += text.utf8
        if stops.isEmpty { return (takeAll(), false) }
        // Earliest complete stop sequence.
        var earliest: Int?
        for s in stops {
            if let i = Self.find(s, in: held), i < (earliest ?? Int.max) { earliest = i }
        }
        if let i = earliest {
            let out = String(decoding: held[..<i], as: UTF8.self)
            held.removeAll()
            return (out, true)
        }
        // Hold the longest tail that is a proper prefix of a stop sequence.
        var keep = 0
        for s in stops {
            for len in stride(from: min(s.count - 1, held.count), to: keep, by: -1)
                where held[(held.count - len)...].elementsEqual(s[..<len]) {
                keep = len
                break
            }
        }
        let cut = held.count - keep
        let out = String(decoding: held[..<cut], as: UTF8.self)
        held.removeFirst(cut)
        return (out, false)
    }

    /// The held-back text at the end of generation.
    mutating func finish() -> String { takeAll() }

    private mutating func takeAll() -> String {
        let out = String(decoding: held, as: UTF8.self)
        held.removeAll()
        return out
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard needle.count <= hay.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] {
            if hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}

/// The native engine's side of ``TokenLoop``.
struct NativeLoopEngine: TokenLoopEngine {
    let context: GGUFContext

    var cachedTokens: [Int32] { context.cachedTokens }
    func truncate(to count: Int) { context.truncate(to: count) }
    var promptBatchSize: Int { context.batchSize }
    func evaluate(_ tokens: [Int32]) throws -> [Float] { try context.evaluate(tokens) }
    func textBytes(of token: Int32) -> ArraySlice<UInt8> { context.model.tokenizer.vocabulary.piece(token, special: false) }
    func isEndOfGeneration(_ token: Int32) -> Bool { context.model.tokenizer.isEndOfGeneration(token) }
    var hasRoomForAnotherToken: Bool { context.position < context.contextLength }
}
