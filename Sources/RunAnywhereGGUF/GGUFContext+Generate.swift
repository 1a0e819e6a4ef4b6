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
        let clock = ContinuousClock()
        // Reuse the cached prefix; at least the last prompt token is evaluated to get logits.
        var common = 0
        let cached = cachedTokens
        while common < min(cached.count, prompt.count - 1) && cached[common] == prompt[common] { common += 1 }
        truncate(to: common)
        let promptStart = clock.now
        // The prompt in passes of batchSize tokens, asking shouldContinue between passes.
        var logits: [Float] = []
        var start = common
        while start < prompt.count {
            guard shouldContinue() else {
                return GenerationStats(promptTokens: prompt.count, evaluatedPromptTokens: start - common, generatedTokens: 0,
                                       promptSeconds: Self.seconds(clock.now - promptStart), decodeSeconds: 0,
                                       finishReason: .cancelled, tokens: [])
            }
            let end = min(prompt.count, start + batchSize)
            logits = try evaluate(Array(prompt[start..<end]))
            start = end
        }
        let promptSeconds = Self.seconds(clock.now - promptStart)

        var sampler = Sampler(parameters: sampling)
        var detokenizer = StreamingDetokenizer(tokenizer: model.tokenizer)
        var filter = StopSequenceFilter(stopSequences: stop)
        var history = prompt
        var generated: [Int32] = []
        var finish = FinishReason.maxTokens
        let decodeStart = clock.now
        while generated.count < maxTokens {
            guard shouldContinue() else { finish = .cancelled; break }
            let id = sampler.sample(&logits, history: history)
            if model.tokenizer.isEndOfGeneration(id) { finish = .endOfGeneration; break }
            generated.append(id)
            history.append(id)
            let (text, stopped) = filter.push(detokenizer.append(id))
            if !text.isEmpty { onText(text) }
            if stopped { finish = .stopSequence; break }
            if generated.count >= maxTokens { break }
            if position >= contextLength { finish = .contextFull; break }
            logits = try decode(id)
        }
        if finish != .stopSequence {
            let (text, _) = filter.push(detokenizer.flush())
            let rest = text + filter.finish()
            if !rest.isEmpty { onText(rest) }
        }
        return GenerationStats(promptTokens: prompt.count, evaluatedPromptTokens: prompt.count - common,
                               generatedTokens: generated.count, promptSeconds: promptSeconds,
                               decodeSeconds: Self.seconds(clock.now - decodeStart), finishReason: finish, tokens: generated)
    }

    static func seconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
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
