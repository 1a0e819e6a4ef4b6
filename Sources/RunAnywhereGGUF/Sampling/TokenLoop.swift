/// The engine-specific steps of generating text after a prompt.
///
/// ``TokenLoop`` does the rest — reusing the cached prefix of the prompt, evaluating the prompt in batches,
/// sampling, end of generation, whole UTF-8 characters, stop sequences, the token limit and finish reasons —
/// identically for every engine that conforms, so two engines giving the same logits produce the same text.
public protocol TokenLoopEngine {
    /// The tokens whose keys and values are in the cache, in order.
    var cachedTokens: [Int32] { get }
    /// Drops cached tokens after the first `count`.
    func truncate(to count: Int)
    /// Most prompt tokens evaluated at once.
    var promptBatchSize: Int { get }
    /// Evaluates tokens after the cached ones; returns the logits after the last one (one per vocabulary entry).
    func evaluate(_ tokens: [Int32]) throws -> [Float]
    /// The bytes of a generated token's text (none for control tokens).
    func textBytes(of token: Int32) -> ArraySlice<UInt8>
    /// Whether the token ends generation (EOS, end of turn).
    func isEndOfGeneration(_ token: Int32) -> Bool
    /// Whether the context has room to decode one more token.
    var hasRoomForAnotherToken: Bool { get }
}

/// What one run of ``TokenLoop`` produced.
public struct TokenLoopResult: Sendable, Hashable {
    /// Tokens in the prompt.
    public var promptTokens: Int
    /// Prompt tokens actually evaluated (the rest were reused from the cache).
    public var evaluatedPromptTokens: Int
    /// The generated token ids (without an end-of-generation token).
    public var tokens: [Int32]
    /// Why generation ended.
    public var finishReason: FinishReason
    /// Seconds spent on the prompt.
    public var promptSeconds: Double
    /// Seconds spent sampling and decoding after the prompt.
    public var decodeSeconds: Double
}

/// The generation loop shared by every engine.
///
/// ```swift
/// let r = try TokenLoop.run(engine, prompt: ids, sampling: .greedy, maxTokens: 64, stop: ["\n\n"],
///                           shouldContinue: { true }, onText: { print($0, terminator: "") })
/// ```
public enum TokenLoop {
    /// Generates after a prompt (at least one token, fitting in the context).
    ///
    /// Cached tokens that match the start of the prompt are reused; at least the last prompt token is evaluated.
    /// Text reaches `onText` in whole UTF-8 characters; text that may begin a stop sequence is held back until it
    /// is known not to, and a stop sequence and all after it are never emitted.
    /// - Parameters:
    ///   - shouldContinue: asked between prompt batches and before each token; false ends with `.cancelled`.
    /// - Throws: what the engine's `evaluate` throws.
    public static func run(_ engine: some TokenLoopEngine, prompt: [Int32], sampling: SamplingParameters, maxTokens: Int,
                           stop: [String], shouldContinue: () -> Bool, onText: (String) -> Void) throws -> TokenLoopResult {
        let clock = ContinuousClock()
        var common = 0
        let cached = engine.cachedTokens
        while common < min(cached.count, prompt.count - 1) && cached[common] == prompt[common] { common += 1 }
        engine.truncate(to: common)
        let promptStart = clock.now
        var result = TokenLoopResult(promptTokens: prompt.count, evaluatedPromptTokens: 0, tokens: [], finishReason: .maxTokens,
                                     promptSeconds: 0, decodeSeconds: 0)
        var logits: [Float] = []
        var start = common
        while start < prompt.count {
            guard shouldContinue() else {
                result.finishReason = .cancelled
                result.promptSeconds = seconds(clock.now - promptStart)
                return result
            }
            let end = min(prompt.count, start + max(1, engine.promptBatchSize))
            logits = try engine.evaluate(Array(prompt[start..<end]))
            result.evaluatedPromptTokens += end - start
            start = end
        }
        result.promptSeconds = seconds(clock.now - promptStart)
        let decodeStart = clock.now
        (result.tokens, result.finishReason) = try sample(engine, logits: logits, history: prompt, sampling: sampling,
                                                          maxTokens: maxTokens, stop: stop, shouldContinue: shouldContinue, onText: onText)
        result.decodeSeconds = seconds(clock.now - decodeStart)
        return result
    }

    private static func sample(_ engine: some TokenLoopEngine, logits first: [Float], history prompt: [Int32], sampling: SamplingParameters,
                               maxTokens: Int, stop: [String], shouldContinue: () -> Bool,
                               onText: (String) -> Void) throws -> ([Int32], FinishReason) {
        var logits = first
        var sampler = Sampler(parameters: sampling)
        var text = UTF8Accumulator()
        var filter = StopSequenceFilter(stopSequences: stop)
        var history = prompt
        var generated: [Int32] = []
        var finish = FinishReason.maxTokens
        while generated.count < maxTokens {
            guard shouldContinue() else { finish = .cancelled; break }
            let id = sampler.sample(&logits, history: history)
            if engine.isEndOfGeneration(id) { finish = .endOfGeneration; break }
            generated.append(id)
            history.append(id)
            let (piece, stopped) = filter.push(text.append(engine.textBytes(of: id)))
            if !piece.isEmpty { onText(piece) }
            if stopped { finish = .stopSequence; break }
            if generated.count >= maxTokens { break }
            if !engine.hasRoomForAnotherToken { finish = .contextFull; break }
            logits = try engine.evaluate([id])
        }
        if finish != .stopSequence {
            let (piece, _) = filter.push(text.flush())
            let rest = piece + filter.finish()
            if !rest.isEmpty { onText(rest) }
        }
        return (generated, finish)
    }

    /// A duration in seconds.
    public static func seconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}

/// Collects the bytes of token pieces and hands out only complete UTF-8 characters.
struct UTF8Accumulator: Sendable {
    private var pending: [UInt8] = []

    /// Adds bytes; returns the text that is now complete (possibly empty).
    mutating func append(_ bytes: some Sequence<UInt8>) -> String {
        pending.append(contentsOf: bytes)
        let cut = Self.completePrefixLength(pending)
        guard cut > 0 else { return "" }
        let text = String(decoding: pending[..<cut], as: UTF8.self)
        pending.removeFirst(cut)
        return text
    }

    /// Returns whatever is still held back (an unfinished character becomes U+FFFD) and resets.
    mutating func flush() -> String {
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    /// The length of the longest prefix that does not end inside an unfinished UTF-8 sequence.
    /// A trailing sequence is held back only while it could still become valid.
    static func completePrefixLength(_ bytes: [UInt8]) -> Int {
        let n = bytes.count
        var i = n - 1
        // Find the start of the last sequence (at most 3 continuation bytes back).
        while i >= 0, n - i <= 4, bytes[i] & 0xC0 == 0x80 { i -= 1 }
        guard i >= 0, n - i <= 4 else { return n }
        let lead = bytes[i]
        let needed: Int
        switch lead {
        case 0xC2...0xDF: needed = 2
        case 0xE0...0xEF: needed = 3
        case 0xF0...0xF4: needed = 4
        default: return n     // ASCII or a byte that can never start a sequence
        }
        return n - i < needed ? i : n
    }
}
