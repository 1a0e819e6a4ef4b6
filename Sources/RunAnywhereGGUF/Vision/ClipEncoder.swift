import CKernels

/// The forward pass of the SigLIP encoder and idefics3 projector over one tile, with scratch buffers for one tile.
///
/// Numerics follow ggml's CPU backend as llama.cpp's mtmd runs it: the patch convolution multiplies patches
/// converted to the kernel's activation format (F16 for an F16 kernel), every matrix product converts its input to
/// `ra_vec_dot_type(weight type)`, layer norms and softmax sum in double, GELU goes through an F16 table, and
/// attention (full, not causal) is computed in F32 like ggml's path without flash attention.
final class ClipEncoder: @unchecked Sendable {
    let config: ClipConfig
    let weights: ClipWeights
    private let block: PageBlock
    private let x, xn, q, k, v, attn, tmp, ff, shuffled: UnsafeMutablePointer<Float>
    private let headQ, headK, headVt, scores: UnsafeMutablePointer<Float>
    private let quant: UnsafeMutableRawPointer
    /// Bytes of the scratch buffers.
    let allocatedBytes: Int

    init(config c: ClipConfig, weights: ClipWeights) throws {
        config = c
        self.weights = weights
        let (layout, slots, quantSlot) = Self.layout(c, weights)
        let block = try PageBlock(layout)
        self.block = block
        let fp = slots.map { block.pointer($0, as: Float.self) }
        (shuffled, x, xn, q, k, v, attn, ff, tmp) = (fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7], fp[8])
        (headQ, headK, headVt, scores) = (fp[9], fp[10], fp[11], fp[12])
        quant = block.raw(quantSlot)
        allocatedBytes = block.byteCount
    }

    /// Where the scratch buffers of one tile go: shuffled (im2col patches, then the pixel-shuffled tokens), x, xn, q,
    /// k, v, attn, ff, tmp, one head of q, k and vᵀ, the attention scores; then the buffer the activations of a matrix
    /// product are converted into (the largest of any product: rows of activations × bytes per converted row).
    static func layout(_ c: ClipConfig, _ weights: ClipWeights) -> (PageBlock.Layout, floats: [Int], quant: Int) {
        let n = c.patchesPerSide * c.patchesPerSide
        let e = c.embeddingLength, f = c.feedForwardLength, hd = c.headDimension
        let p = c.patchSize
        var quantBytes = 0
        // The projector multiplies the pixel-shuffled tokens only; every other product all the tile's patches.
        var products = [(weights.patchKernel, n), (weights.projector, c.tokensPerTile)]
        for l in weights.layers { products += [l.q, l.k, l.v, l.output, l.up, l.down].map { ($0, n) } }
        for (m, rows) in products {
            quantBytes = max(quantBytes, rows * Int(ra_row_bytes(m.activationType, Int64(m.columns))))
        }
        var layout = PageBlock.Layout()
        let floats = [n * max(3 * p * p, e), n * e, n * e, n * e, n * e, n * e, n * e, n * f, n * e,
                      n * hd, n * hd, n * hd, n * n].map { layout.add(max($0, 1) * 4) }
        let quant = layout.add(quantBytes)
        return (layout, floats, quant)
    }

    /// Encodes one normalised tile (planar channels × imageSize × imageSize floats) into
    /// `tokensPerTile × projectionLength` floats at `out`.
    func encode(tile: UnsafePointer<Float>, pool: OpaquePointer?, into out: UnsafeMutablePointer<Float>) {
        let c = config
        let side = c.patchesPerSide, n = side * side, p = c.patchSize
        let e = c.embeddingLength, f = c.feedForwardLength, hd = c.headDimension

        // Patch embedding: the convolution as patches (im2col, reusing the shuffle buffer) times the kernel.
        let cols = 3 * p * p
        for py in 0..<side {
            for px in 0..<side {
                let row = shuffled + (py * side + px) * cols
                for ch in 0..<3 {
                    for ky in 0..<p {
                        let src = tile + (ch * c.imageSize + py * p + ky) * c.imageSize + px * p
                        (row + (ch * p + ky) * p).update(from: src, count: p)
                    }
                }
            }
        }
        matmul(weights.patchKernel, shuffled, rows: n, into: x, pool: pool)
        if let b = weights.patchBias { addBias(b, to: x, rows: n, pool: pool) }
        weights.positions.withUnsafeBufferPointer { ra_add(pool, x, $0.baseAddress, Int64(n * e)) }

        for layer in weights.layers {
            norm(x, layer.norm1Weight, layer.norm1Bias, into: xn, rows: n, pool: pool)
            ra_quantize_rows_par(pool, layer.q.activationType, xn, Int64(e), Int64(n), quant)
            if layer.k.activationType == layer.q.activationType && layer.v.activationType == layer.q.activationType {
                let jobs = [(layer.q, q), (layer.k, k), (layer.v, v)].map { m, o in
                    ra_matmul_job(weight_type: m.kernelType, w: m.data, n: Int64(m.columns),
                                  rows: Int64(m.rows), x: quant, nb: Int64(n), out: o, out_stride: Int64(m.rows))
                }
                jobs.withUnsafeBufferPointer { ra_matmul_jobs(pool, $0.baseAddress, Int32($0.count)) }
            } else {
                matmul(layer.q, xn, rows: n, into: q, pool: pool)
                matmul(layer.k, xn, rows: n, into: k, pool: pool)
                matmul(layer.v, xn, rows: n, into: v, pool: pool)
            }
            addBias(layer.qBias, to: q, rows: n, pool: pool)
            addBias(layer.kBias, to: k, rows: n, pool: pool)
            addBias(layer.vBias, to: v, rows: n, pool: pool)
            let scale = 1 / Float(hd).squareRoot()
            for h in 0..<c.headCount {
                ra_gather_head(q, Int64(e), Int64(n), Int64(h), Int64(hd), headQ, 0)
                ra_gather_head(k, Int64(e), Int64(n), Int64(h), Int64(hd), headK, 0)
                ra_gather_head(v, Int64(e), Int64(n), Int64(h), Int64(hd), headVt, 1)
                // scores[i * n + j] = k_j · q_i, then softmax over j, then attn_i = Σ_j p_ij v_j.
                ra_matmul_par(pool, Int32(RA_F32), headK, Int64(hd), Int64(n), headQ, Int64(n), scores, Int64(n))
                ra_softmax_rows(pool, scores, Int64(n), Int64(n), scale)
                ra_matmul_par(pool, Int32(RA_F32), headVt, Int64(n), Int64(hd), scores, Int64(n), attn + h * hd, Int64(e))
            }
            matmul(layer.output, attn, rows: n, into: tmp, pool: pool)
            addBias(layer.outputBias, to: tmp, rows: n, pool: pool)
            ra_add(pool, x, tmp, Int64(n * e))

            norm(x, layer.norm2Weight, layer.norm2Bias, into: xn, rows: n, pool: pool)
            matmul(layer.up, xn, rows: n, into: ff, pool: pool)
            addBias(layer.upBias, to: ff, rows: n, pool: pool)
            ra_gelu(pool, ff, Int64(n * f))
            matmul(layer.down, ff, rows: n, into: tmp, pool: pool)
            addBias(layer.downBias, to: tmp, rows: n, pool: pool)
            ra_add(pool, x, tmp, Int64(n * e))
        }
        norm(x, weights.postNormWeight, weights.postNormBias, into: xn, rows: n, pool: pool)

        // Pixel shuffle: token (gy, gx) = patches (s·gy + dy, s·gx + dx), feature order e + width·dx + width·s·dy.
        let s = c.scaleFactor, outSide = side / s
        for gy in 0..<outSide {
            for gx in 0..<outSide {
                let token = shuffled + (gy * outSide + gx) * e * s * s
                for dy in 0..<s {
                    for dx in 0..<s {
                        let patch = (s * gy + dy) * side + (s * gx + dx)
                        (token + e * (dx + s * dy)).update(from: xn + patch * e, count: e)
                    }
                }
            }
        }
        matmul(weights.projector, shuffled, rows: outSide * outSide, into: out, pool: pool)
    }

    private func norm(_ src: UnsafePointer<Float>, _ w: [Float], _ b: [Float], into dst: UnsafeMutablePointer<Float>,
                      rows: Int, pool: OpaquePointer?) {
        w.withUnsafeBufferPointer { wp in
            b.withUnsafeBufferPointer { bp in
                ra_layer_norm(pool, src, wp.baseAddress, bp.baseAddress, dst, Int64(config.embeddingLength), Int64(rows),
                              config.layerNormEpsilon)
            }
        }
    }

    /// out (rows × m.rows) = activations (rows × m.columns) · mᵀ, converting the activations first.
    private func matmul(_ m: WeightMatrix, _ src: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>,
                        pool: OpaquePointer?) {
        ra_quantize_rows_par(pool, m.activationType, src, Int64(m.columns), Int64(rows), quant)
        ra_matmul_par(pool, m.kernelType, m.data, Int64(m.columns), Int64(m.rows), quant,
                      Int64(rows), out, Int64(m.rows))
    }

    private func addBias(_ b: [Float], to y: UnsafeMutablePointer<Float>, rows: Int, pool: OpaquePointer?) {
        b.withUnsafeBufferPointer { ra_add_row(pool, y, $0.baseAddress, Int64($0.count), Int64(rows)) }
    }
}
