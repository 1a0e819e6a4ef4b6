/// How much memory running a model takes: weights, KV cache and compute scratch.
///
/// - `weightsBytes`: what the caller passes (normally ``GGUFModelDescription/tensorBytes``: the tensor
///   data, which becomes resident as the mapping is read).
/// - `kvCacheBytes`: `blockCount × contextLength × headCountKV × (keyLength + valueLength) × kvBytesPerElement`.
/// - `scratchBytes`: F32 buffers for one batch of `batchSize` tokens (see ``scratchBytes(description:contextLength:batchSize:threads:)``).
///
/// It does not count the parsed metadata and tokenizer tables, nor allocator overhead.
public struct GGUFMemoryEstimate: Sendable, Hashable, Codable {
    /// Bytes of weights that will be resident.
    public var weightsBytes: Int
    /// Bytes of the key/value cache.
    public var kvCacheBytes: Int
    /// Bytes of activations and other per-batch buffers.
    public var scratchBytes: Int
    /// The sum of the three.
    public var totalBytes: Int

    /// Estimates the memory for a model at a context length and batch size.
    ///
    /// - Parameters:
    ///   - description: the model's shape.
    ///   - weightsBytes: bytes of weights that will be resident (normally `description.tensorBytes`).
    ///   - contextLength: KV cache length in tokens.
    ///   - batchSize: most tokens evaluated in one step.
    ///   - kvBytesPerElement: bytes per cached key/value element (2 for F16, 4 for F32).
    public init(description: GGUFModelDescription, weightsBytes: Int, contextLength: Int, batchSize: Int, kvBytesPerElement: Int = 2) {
        let context = max(contextLength, 0)
        self.weightsBytes = max(weightsBytes, 0)
        kvCacheBytes = Self.kvCacheBytes(description: description, contextLength: context, bytesPerElement: max(kvBytesPerElement, 0))
        scratchBytes = Self.scratchBytes(description: description, contextLength: context, batchSize: max(batchSize, 1))
        totalBytes = Self.sum([self.weightsBytes, kvCacheBytes, scratchBytes])
    }

    /// Bytes of a KV cache: per layer, per position, `headCountKV × (keyLength + valueLength)` elements.
    public static func kvCacheBytes(description d: GGUFModelDescription, contextLength: Int, bytesPerElement: Int = 2) -> Int {
        product([d.blockCount, contextLength, d.headCountKV, sum([d.keyLength, d.valueLength]), bytesPerElement])
    }

    /// Threads assumed for the per-thread attention scratch when the caller does not say (an upper bound
    /// for phones and laptops; the term is small: threads × rows × (context + 2 × head dim) floats).
    public static let assumedThreads = 8

    /// Bytes of scratch for one batch, laid out as the native engine allocates it: per token the hidden
    /// state, residual and normed copies, q and the attention output, k and v, the feed-forward gate and
    /// up projections, the quantized activations (at most 4 bytes per element of the widest row) and RoPE's cos/sin
    /// for the global and the sliding-window bases (at most head dim floats each);
    /// per thread the attention rows over the context (`max(12, heads) × (context + 2 × head dim)` floats, as
    /// `ra_attention_scratch_floats` asks for), plus
    /// what decode's split over the cache keeps per chunk of 256 positions and head (`head dim + 4` floats);
    /// and one row of logits (`vocabSize × 4`, the last position's). Saturates at `Int.max`.
    public static func scratchBytes(description d: GGUFModelDescription, contextLength: Int, batchSize: Int,
                                    threads: Int = assumedThreads) -> Int {
        let qWidth = product([d.headCount, d.keyLength])
        let kvWidth = product([d.headCountKV, d.keyLength])
        let widest = max(d.embeddingLength, d.feedForwardLength, qWidth)
        let perToken = sum([
            product([3, d.embeddingLength]),    // hidden, residual, normed
            product([2, qWidth]),               // q, attention output
            product([2, kvWidth]),              // k, v
            product([2, d.feedForwardLength]),  // gate, up
            widest,                             // quantized activations (upper bound)
            product([2, d.keyLength]),          // RoPE angles of the two bases (upper bound: rope dims <= head dim)
        ])
        let attentionRows = max(12, d.headCount)
        let attention = product([max(threads, 1), sum([product([attentionRows, sum([contextLength, product([2, d.keyLength])])]), 64])])
        let chunks = contextLength / 256 + (contextLength % 256 == 0 ? 0 : 1)
        let split = sum([product([d.headCount, max(chunks, 1), sum([d.keyLength, 4])]), 64])
        return product([sum([product([perToken, batchSize]), attention, split, d.vocabSize]), 4])
    }

    private static func product(_ values: [Int]) -> Int {
        var result = 1
        for v in values {
            let (p, overflow) = result.multipliedReportingOverflow(by: max(v, 0))
            result = overflow ? Int.max : p
        }
        return result
    }

    private static func sum(_ values: [Int]) -> Int {
        var result = 0
        for v in values {
            let (s, overflow) = result.addingReportingOverflow(max(v, 0))
            result = overflow ? Int.max : s
        }
        return result
    }
}
