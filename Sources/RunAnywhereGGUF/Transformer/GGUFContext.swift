import CKernels
#if canImport(Glibc)
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#elseif canImport(Darwin)
import Darwin
#endif

/// Why generation ended.
public enum FinishReason: String, Sendable, Hashable, Codable {
    /// `maxTokens` tokens were generated.
    case maxTokens
    /// The model produced an end-of-generation token (EOS/EOT); it is not part of the output.
    case endOfGeneration
    /// The text reached one of the stop sequences; the text from the stop sequence on is not emitted.
    case stopSequence
    /// `shouldContinue` returned false.
    case cancelled
    /// The KV cache is full.
    case contextFull
}

/// Counts and timings of one `generate` call.
public struct GenerationStats: Sendable, Hashable, Codable {
    /// Tokens in the prompt.
    public var promptTokens: Int
    /// Prompt tokens that had to be evaluated (the rest were reused from the KV cache).
    public var evaluatedPromptTokens: Int
    /// Tokens generated (an end-of-generation token is not counted).
    public var generatedTokens: Int
    /// Seconds spent evaluating the prompt.
    public var promptSeconds: Double
    /// Seconds spent generating tokens after the prompt.
    public var decodeSeconds: Double
    /// Why generation ended.
    public var finishReason: FinishReason
    /// The generated token ids.
    public var tokens: [Int32]

    /// Creates statistics.
    public init(promptTokens: Int, evaluatedPromptTokens: Int, generatedTokens: Int, promptSeconds: Double,
                decodeSeconds: Double, finishReason: FinishReason, tokens: [Int32]) {
        self.promptTokens = promptTokens
        self.evaluatedPromptTokens = evaluatedPromptTokens
        self.generatedTokens = generatedTokens
        self.promptSeconds = promptSeconds
        self.decodeSeconds = decodeSeconds
        self.finishReason = finishReason
        self.tokens = tokens
    }

    /// Prompt tokens per second (evaluated ones), or nil when nothing was timed.
    public var promptTokensPerSecond: Double? {
        promptSeconds > 0 && evaluatedPromptTokens > 0 ? Double(evaluatedPromptTokens) / promptSeconds : nil
    }

    /// Generated tokens per second, or nil when nothing was timed.
    public var decodeTokensPerSecond: Double? {
        decodeSeconds > 0 && generatedTokens > 0 ? Double(generatedTokens) / decodeSeconds : nil
    }
}

/// One inference session over a model: a KV cache, scratch buffers and a thread pool.
///
/// Not safe for concurrent use: the caller serialises calls. Several contexts may share one ``GGUFModel``.
///
/// ```swift
/// let context = try GGUFContext(model: model, contextLength: 2048, threads: 4)
/// let stats = try context.generate(prompt: model.tokenizer.encode("Once upon a time"),
///                                  sampling: .greedy, maxTokens: 64, stop: ["\n\n"],
///                                  shouldContinue: { true }, onText: { print($0, terminator: "") })
/// ```
public final class GGUFContext: @unchecked Sendable {
    /// The model this context runs.
    public let model: GGUFModel
    /// Tokens the KV cache holds.
    public let contextLength: Int
    /// Threads of the forward pass (caller included).
    public let threads: Int
    /// Most tokens per forward pass while evaluating a prompt.
    public let batchSize: Int
    let transformer: Transformer
    /// Tokens currently in the KV cache, in order.
    public internal(set) var cachedTokens: [Int32] = []

    /// Creates a context.
    /// - Parameters:
    ///   - contextLength: tokens the KV cache holds (at least 1).
    ///   - threads: threads of the forward pass, caller included (clamped to 1...512).
    ///   - batchSize: most tokens per pass while evaluating a prompt.
    /// - Throws: ``GGUFError`` when the sizes are invalid or threads cannot be started.
    public init(model: GGUFModel, contextLength: Int, threads: Int, batchSize: Int = GGUFLoadParameters.defaultBatchSize) throws {
        self.model = model
        self.contextLength = contextLength
        self.threads = min(max(1, threads), 512)
        self.batchSize = max(1, min(batchSize, contextLength))
        transformer = try Transformer(config: model.config, weights: model.weights, contextLength: contextLength,
                                      batchSize: self.batchSize, threads: self.threads)
    }

    /// Creates a context from load parameters (defaults: the trained context length capped at 4096, every core).
    /// - Throws: as ``init(model:contextLength:threads:batchSize:)``.
    public convenience init(model: GGUFModel, parameters: GGUFLoadParameters) throws {
        try self.init(model: model, contextLength: parameters.contextLength ?? GGUFLoadParameters.defaultContextLength(trained: model.trainedContextLength),
                      threads: parameters.threads ?? GGUFContext.defaultThreadCount, batchSize: parameters.batchSize)
    }

    /// Active processors of this machine.
    public static var defaultThreadCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Bytes of the KV cache and scratch buffers this context allocated (weights are not counted).
    public var memoryBytes: Int { transformer.allocatedBytes }

    /// Number of tokens in the KV cache.
    public var position: Int { transformer.position }

    /// Clears the KV cache.
    public func reset() {
        transformer.reset()
        cachedTokens.removeAll(keepingCapacity: true)
    }

    /// Forgets the cached tokens from index `count` on (keeps the first `count`).
    public func truncate(to count: Int) {
        transformer.truncate(to: count)
        if cachedTokens.count > transformer.position { cachedTokens.removeLast(cachedTokens.count - transformer.position) }
    }

    /// Evaluates tokens after those already in the cache (in passes of up to `batchSize`) and returns logits.
    /// - Parameters:
    ///   - tokens: token ids (at least one).
    ///   - allLogits: return the logits of every token (`tokens.count * vocabularySize` floats, token-major)
    ///     instead of only those of the last one.
    /// - Throws: ``GGUFError`` `.unsupported` when the tokens do not fit in the context,
    ///   `.invalidFormat` for an empty list or a token id outside the vocabulary.
    public func evaluate(_ tokens: [Int32], allLogits: Bool = false) throws -> [Float] {
        guard !tokens.isEmpty else { throw GGUFError(.invalidFormat, "evaluate needs at least one token") }
        let vocab = model.vocabularySize
        for id in tokens where id < 0 || Int(id) >= vocab {
            throw GGUFError(.invalidFormat, "token id \(id) is outside the vocabulary of \(vocab) tokens")
        }
        guard transformer.position + tokens.count <= contextLength else {
            throw GGUFError(.unsupported, "context is full: \(transformer.position) tokens cached + \(tokens.count) new exceed the context length \(contextLength)")
        }
        // Every float is written by the forward passes (each pass writes whole rows), so the array is not zeroed first.
        let count = (allLogits ? tokens.count : 1) * vocab
        let logits = [Float](unsafeUninitializedCapacity: count) { out, initialized in
            tokens.withUnsafeBufferPointer { all in
                guard let outBase = out.baseAddress, let inBase = all.baseAddress else {
                    out.initialize(repeating: 0)
                    return
                }
                var start = 0
                while start < all.count {
                    let n = min(batchSize, all.count - start)
                    let chunk = UnsafeBufferPointer(start: inBase + start, count: n)
                    if allLogits {
                        transformer.forward(chunk, allLogits: true, logits: outBase + start * vocab)
                    } else {
                        // Only the very last token's logits are wanted; earlier passes write into the same row.
                        transformer.forward(chunk, allLogits: false, logits: outBase)
                    }
                    start += n
                }
            }
            initialized = count
        }
        cachedTokens += tokens
        return logits
    }

    /// Evaluates one token and returns its logits.
    /// - Throws: as ``evaluate(_:allLogits:)``.
    public func decode(_ token: Int32) throws -> [Float] {
        try evaluate([token])
    }
}
