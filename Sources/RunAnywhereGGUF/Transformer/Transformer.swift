import CKernels

/// The forward pass of a llama-family decoder over one KV cache, with scratch buffers sized for a
/// batch of `batchSize` tokens. Heavy work runs in the C ops/kernels split over the thread pool.
///
/// Numerics follow ggml's CPU backend: activations are converted to `ra_vec_dot_type(weight type)`
/// before each matrix product (F16 for F16 weights, Q8_0/Q8_K for quantized ones), K and V are stored
/// as F16, and attention rounds q and the probabilities to F16 like ggml's non-flash path.
final class Transformer: @unchecked Sendable {
    let config: TransformerConfig
    let weights: TransformerWeights
    let contextLength: Int
    let batchSize: Int
    let threads: Int
    /// Tokens currently in the KV cache.
    private(set) var position = 0

    /// The thread pool of the forward pass (the vision encoder runs on it too).
    let pool: OpaquePointer?
    private let block: PageBlock
    private let kCache: UnsafeMutablePointer<UInt16>
    private let vCache: UnsafeMutablePointer<UInt16>
    private let kvDim: Int
    private let x, xn, q, k, v, attn, tmp, gate, up: UnsafeMutablePointer<Float>
    private let quant: UnsafeMutableRawPointer
    private let attentionScratch: UnsafeMutablePointer<Float>
    private let positions: UnsafeMutablePointer<Int32>
    private let ropeFactors: UnsafeMutablePointer<Float>?
    /// RoPE's cos/sin of each batch row's position (ra_rope_table), for the global and the sliding-window layers' bases:
    /// computed once per forward pass instead of for q and k of every layer.
    private let ropeGlobal, ropeLocal: UnsafeMutablePointer<Float>
    /// The jobs of a fused product (q, k, v or gate, up), kept so a decode step allocates nothing for them.
    private let jobs: UnsafeMutablePointer<ra_matmul_job>
    /// Bytes allocated for the KV cache and the scratch buffers.
    let allocatedBytes: Int

    init(config c: TransformerConfig, weights: TransformerWeights, contextLength: Int, batchSize: Int, threads: Int) throws {
        guard contextLength > 0 else { throw GGUFError(.unsupported, "context length must be positive (got \(contextLength))") }
        guard batchSize > 0 else { throw GGUFError(.unsupported, "batch size must be positive (got \(batchSize))") }
        guard c.keyLength == c.valueLength else {
            throw GGUFError(.unsupported, "key length \(c.keyLength) differs from value length \(c.valueLength); the native engine needs them equal")
        }
        guard contextLength <= 1 << 22 else {
            throw GGUFError(.unsupported, "context length \(contextLength) is larger than the native engine supports (\(1 << 22))")
        }
        let (cacheElements, overflow) = (c.layerCount * contextLength).multipliedReportingOverflow(by: c.headCountKV * c.keyLength)
        guard !overflow, cacheElements <= Int(Int32.max) * 64 else {
            throw GGUFError(.unsupported, "a KV cache of \(contextLength) tokens for this model is too large")
        }
        config = c
        self.weights = weights
        self.contextLength = contextLength
        self.batchSize = batchSize
        self.threads = min(max(1, threads), 512)
        kvDim = c.headCountKV * c.keyLength
        let qDim = c.headCount * c.keyLength
        let e = c.embeddingLength, f = c.feedForwardLength
        var quantBytes = 0
        var matrices = [weights.output, weights.tokenEmbedding]
        for l in weights.layers { matrices += [l.q, l.k, l.v, l.output, l.gate, l.up, l.down] }
        for m in matrices { quantBytes = max(quantBytes, Int(ra_row_bytes(m.activationType, Int64(m.columns)))) }
        quantBytes *= batchSize
        let scratchFloats = Int(ra_attention_scratch_floats(Int32(clamping: self.threads), Int64(contextLength), Int64(c.keyLength), Int64(c.headCount)))

        // Every large buffer lives in one block of pages from the system, so freeing the context gives
        // the memory back at once (malloc'd blocks of this size may stay in an allocator arena).
        var layout = PageBlock.Layout()
        let kSlot = layout.add(cacheElements * 2), vSlot = layout.add(cacheElements * 2)
        let floatSlots = [e, e, qDim, kvDim, kvDim, qDim, e, f, f].map { layout.add($0 * batchSize * 4) }
        let quantSlot = layout.add(quantBytes)
        let scratchSlot = layout.add(scratchFloats * 4)
        let positionsSlot = layout.add(batchSize * 4)
        let ropeSlot = layout.add((weights.ropeFrequencyFactors?.count ?? 0) * 4)
        let ropeTableSlots = (0..<2).map { _ in layout.add(batchSize * c.ropeDimensionCount * 4) }
        let jobsSlot = layout.add(3 * MemoryLayout<ra_matmul_job>.stride)
        let block = try PageBlock(layout)
        self.block = block
        kCache = block.pointer(kSlot, as: UInt16.self)
        vCache = block.pointer(vSlot, as: UInt16.self)
        let fp = floatSlots.map { block.pointer($0, as: Float.self) }
        (x, xn, q, k, v, attn, tmp, gate, up) = (fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7], fp[8])
        quant = block.raw(quantSlot)
        attentionScratch = block.pointer(scratchSlot, as: Float.self)
        positions = block.pointer(positionsSlot, as: Int32.self)
        if let factors = weights.ropeFrequencyFactors {
            let p = block.pointer(ropeSlot, as: Float.self)
            p.update(from: factors, count: factors.count)
            ropeFactors = p
        } else {
            ropeFactors = nil
        }
        ropeGlobal = block.pointer(ropeTableSlots[0], as: Float.self)
        ropeLocal = block.pointer(ropeTableSlots[1], as: Float.self)
        jobs = block.pointer(jobsSlot, as: ra_matmul_job.self)
        allocatedBytes = block.byteCount
        guard let pool = ra_pool_create(Int32(clamping: self.threads)) else {
            throw GGUFError(.io, "could not start \(self.threads) worker threads")
        }
        self.pool = pool
    }

    deinit {
        ra_pool_destroy(pool)
    }

    /// Clears the KV cache (the next token is at position 0).
    func reset() { position = 0 }

    /// Drops the cache entries from `newPosition` on.
    func truncate(to newPosition: Int) { position = max(0, min(position, newPosition)) }

    /// Runs up to `batchSize` tokens at the current position, appends them to the KV cache and writes logits.
    /// - Parameters:
    ///   - tokens: token ids, already checked to be in the vocabulary; count in 1...batchSize and fits the context.
    ///   - allLogits: logits of every token (rows of vocabularySize) rather than only of the last one.
    ///   - logits: destination, `(allLogits ? tokens.count : 1) * vocabularySize` floats.
    func forward(_ tokens: UnsafeBufferPointer<Int32>, allLogits: Bool, logits: UnsafeMutablePointer<Float>) {
        let e = config.embeddingLength
        let n = min(tokens.count, batchSize)
        for t in 0..<n {
            weights.tokenEmbedding.dequantizeRow(Int(tokens[t]), into: x + t * e)
        }
        // Gemma scales its token embeddings by sqrt(hidden); embeddings given directly (image tokens) are used as given.
        if let scale = config.embeddingScale { ra_scale(pool, x, scale, Int64(n * e)) }
        forwardInput(count: tokens.count, allLogits: allLogits, logits: logits)
    }

    /// Like `forward(_:allLogits:logits:)`, with input embeddings (`count` rows of embeddingLength floats, e.g. image
    /// tokens) in place of token ids, at consecutive positions.
    func forward(embeddings: UnsafePointer<Float>, count: Int, allLogits: Bool, logits: UnsafeMutablePointer<Float>) {
        x.update(from: embeddings, count: min(count, batchSize) * config.embeddingLength)
        forwardInput(count: count, allLogits: allLogits, logits: logits)
    }

    /// The forward pass of the `nT` input rows already in `x`.
    private func forwardInput(count nT: Int, allLogits: Bool, logits: UnsafeMutablePointer<Float>) {
        let c = config
        precondition(nT > 0 && nT <= batchSize && position + nT <= contextLength, "forward called with a batch that does not fit")
        let e = c.embeddingLength, f = c.feedForwardLength, hd = c.keyLength
        let qDim = c.headCount * hd
        let eps = c.rmsNormEpsilon
        for t in 0..<nT { positions[t] = Int32(position + t) }
        // Gemma scales the queries before q·k (then rounded to F16 with them); the others scale the scores.
        let scalesQueries = c.architecture == .gemma3
        let ropeDims = Int32(c.ropeDimensionCount)
        ra_rope_table(positions, Int64(nT), ropeDims, Int64(hd), c.ropeFreqBase, c.ropeFreqScale, ropeFactors, ropeGlobal)
        if c.isLocalLayer.contains(true) {
            ra_rope_table(positions, Int64(nT), ropeDims, Int64(hd), c.ropeFreqBaseLocal, 1, ropeFactors, ropeLocal)
        }

        // The previous block's output (in tmp) is added to x in the same pass as the next norm (fusedNorm).
        var residual: (pending: Bool, postNorm: [Float]?) = (false, nil)
        for (li, layer) in weights.layers.enumerated() {
            // Attention block.
            var act = fusedNorm(x, adding: residual, layer.attentionNorm, for: layer.q, rows: nT)
            if layer.k.activationType == layer.q.activationType && layer.v.activationType == layer.q.activationType {
                matmul(layer.q, q, layer.k, k, layer.v, v, act, rows: nT)
            } else {
                matmul(layer.q, act, rows: nT, into: q)
                act = prepare(xn, for: layer.k, rows: nT)
                matmul(layer.k, act, rows: nT, into: k)
                act = prepare(xn, for: layer.v, rows: nT)
                matmul(layer.v, act, rows: nT, into: v)
            }
            if let b = layer.qBias { addBias(b, to: q, n: qDim, rows: nT) }
            if let b = layer.kBias { addBias(b, to: k, n: kvDim, rows: nT) }
            if let b = layer.vBias { addBias(b, to: v, n: kvDim, rows: nT) }
            if let w = layer.qNorm {
                w.withUnsafeBufferPointer { ra_rms_norm_heads(pool, q, $0.baseAddress, Int64(nT), Int64(qDim), Int64(c.headCount), Int64(hd), eps) }
            }
            if let w = layer.kNorm {
                w.withUnsafeBufferPointer { ra_rms_norm_heads(pool, k, $0.baseAddress, Int64(nT), Int64(kvDim), Int64(c.headCountKV), Int64(hd), eps) }
            }
            let neox: Int32 = c.ropeNeoX ? 1 : 0
            let local = c.isLocalLayer[li]
            let angles = local ? ropeLocal : ropeGlobal
            ra_rope_cached(pool, q, Int64(nT), Int64(qDim), Int64(c.headCount), Int64(hd), ropeDims, angles, neox)
            ra_rope_cached(pool, k, Int64(nT), Int64(kvDim), Int64(c.headCountKV), Int64(hd), ropeDims, angles, neox)
            if scalesQueries { ra_scale(pool, q, c.attentionScale, Int64(nT * qDim)) }
            // The cache is head-major: a layer's kv head g holds its positions' rows of hd halves one after the other
            // (at g × contextLength × hd), so attention streams each head's K and V contiguously.
            let layerK = kCache + li * contextLength * kvDim
            let layerV = vCache + li * contextLength * kvDim
            for g in 0..<c.headCountKV {
                let at = g * contextLength * hd + position * hd
                ra_store_f16_rows(k + g * hd, Int64(kvDim), layerK + at, Int64(hd), Int64(hd), Int64(nT))
                ra_store_f16_rows(v + g * hd, Int64(kvDim), layerV + at, Int64(hd), Int64(hd), Int64(nT))
            }
            // Every token's K/V is needed by later tokens, but in the last layer only the rows whose logits are
            // wanted need the rest of the block.
            let r0 = (li == weights.layers.count - 1 && !allLogits) ? nT - 1 : 0
            let nR = nT - r0
            let xr = x + r0 * e
            var params = ra_attention_params(
                q: q + r0 * qDim, q_stride: Int64(qDim), k: layerK, v: layerV, kv_stride: Int64(hd),
                out: attn, out_stride: Int64(qDim), n_tokens: Int64(nR), pos0: Int64(position + r0),
                window: Int64(local ? c.slidingWindow : 0),
                n_head: Int64(c.headCount), n_head_kv: Int64(c.headCountKV), head_dim: Int64(hd),
                scale: scalesQueries ? 1 : c.attentionScale, scratch: attentionScratch, kv_head_stride: Int64(contextLength * hd))
            ra_attention(pool, &params)
            act = prepare(attn, for: layer.output, rows: nR)
            matmul(layer.output, act, rows: nR, into: tmp)

            // Feed-forward block (SwiGLU; Gemma: GELU-gated).
            act = fusedNorm(xr, adding: (true, layer.postAttentionNorm), layer.ffnNorm, for: layer.gate, rows: nR)
            if layer.up.activationType == layer.gate.activationType {
                matmul(layer.gate, gate, layer.up, up, nil, nil, act, rows: nR)
            } else {
                matmul(layer.gate, act, rows: nR, into: gate)
                act = prepare(xn, for: layer.up, rows: nR)
                matmul(layer.up, act, rows: nR, into: up)
            }
            ra_glu_quant(pool, gate, up, Int64(f), Int64(nR), c.architecture == .gemma3 ? 1 : 0, layer.down.activationType, quant)
            matmul(layer.down, UnsafeRawPointer(quant), rows: nR, into: tmp)
            residual = (true, layer.postFeedForwardNorm)
        }

        // Output: norm and projection of the rows whose logits are wanted.
        let first = allLogits ? 0 : nT - 1
        let rows = nT - first
        let act = fusedNorm(x + first * e, adding: residual, weights.outputNorm, for: weights.output, rows: rows)
        matmul(weights.output, act, rows: rows, into: logits)
        if let cap = c.finalLogitSoftcap { ra_softcap(pool, logits, cap, Int64(rows * c.vocabularySize)) }
        position += nT
    }

    /// `rows` rows of the hidden size from `xr`: when `adding.pending`, tmp's rows (RMSNorm'd times `adding.postNorm`
    /// first, if given) are added to them; then xn = RMSNorm(xr) times `w`, quantized for `m` into the shared buffer,
    /// all in one pass of the pool over the rows (the bits of ra_add, ra_rms_norm and prepare run one after the other).
    private func fusedNorm(_ xr: UnsafeMutablePointer<Float>, adding: (pending: Bool, postNorm: [Float]?), _ w: [Float],
                           for m: WeightMatrix, rows: Int) -> UnsafeRawPointer {
        let e = Int64(config.embeddingLength), eps = config.rmsNormEpsilon
        w.withUnsafeBufferPointer { w in
            if let post = adding.postNorm, adding.pending {
                post.withUnsafeBufferPointer { p in
                    ra_add_rms_norm_quant(pool, xr, tmp, p.baseAddress, w.baseAddress, xn, e, Int64(rows), eps, m.activationType, quant)
                }
            } else {
                ra_add_rms_norm_quant(pool, xr, adding.pending ? tmp : nil, nil, w.baseAddress, xn, e, Int64(rows), eps,
                                      m.activationType, quant)
            }
        }
        return UnsafeRawPointer(quant)
    }

    /// Converts `rows` activation rows into the format the matrix is multiplied with (into the shared buffer).
    private func prepare(_ src: UnsafePointer<Float>, for m: WeightMatrix, rows: Int) -> UnsafeRawPointer {
        ra_quantize_rows_par(pool, m.activationType, src, Int64(m.columns), Int64(rows), quant)
        return UnsafeRawPointer(quant)
    }

    /// out[b * m.rows + r] = row r of m · activation row b.
    private func matmul(_ m: WeightMatrix, _ act: UnsafeRawPointer, rows: Int, into out: UnsafeMutablePointer<Float>) {
        ra_matmul_par(pool, m.kernelType, m.data, Int64(m.columns), Int64(m.rows), act,
                      Int64(rows), out, Int64(m.rows))
    }

    /// Two or three products of the same activations in one pass of the pool (m3 and out3 nil for two).
    private func matmul(_ m1: WeightMatrix, _ out1: UnsafeMutablePointer<Float>, _ m2: WeightMatrix, _ out2: UnsafeMutablePointer<Float>,
                        _ m3: WeightMatrix?, _ out3: UnsafeMutablePointer<Float>?, _ act: UnsafeRawPointer, rows: Int) {
        func job(_ m: WeightMatrix, _ out: UnsafeMutablePointer<Float>) -> ra_matmul_job {
            ra_matmul_job(weight_type: m.kernelType, w: m.data, n: Int64(m.columns), rows: Int64(m.rows),
                          x: act, nb: Int64(rows), out: out, out_stride: Int64(m.rows))
        }
        jobs[0] = job(m1, out1)
        jobs[1] = job(m2, out2)
        var count: Int32 = 2
        if let m3, let out3 {
            jobs[2] = job(m3, out3)
            count = 3
        }
        ra_matmul_jobs(pool, jobs, count)
    }

    private func addBias(_ b: [Float], to y: UnsafeMutablePointer<Float>, n: Int, rows: Int) {
        b.withUnsafeBufferPointer { ra_add_bias(y, $0.baseAddress, Int64(n), Int64(rows)) }
    }
}
