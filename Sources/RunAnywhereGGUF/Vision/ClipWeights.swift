import CKernels

/// The weights of one SigLIP encoder layer.
struct ClipLayerWeights: @unchecked Sendable {
    let norm1Weight, norm1Bias: [Float]
    let q, k, v, output: WeightMatrix
    let qBias, kBias, vBias, outputBias: [Float]
    let norm2Weight, norm2Bias: [Float]
    let up, down: WeightMatrix
    let upBias, downBias: [Float]
}

/// All weights of an idefics3 projector file, checked against its configuration. Matrices point into the
/// mapping; vectors and the position embedding are decoded to Float arrays.
struct ClipWeights: @unchecked Sendable {
    /// The patch convolution as a matrix: rows of 3 × patch × patch values (channel, row, column order).
    let patchKernel: WeightMatrix
    let patchBias: [Float]?
    /// Position embedding, patches × embedding length.
    let positions: [Float]
    let layers: [ClipLayerWeights]
    let postNormWeight, postNormBias: [Float]
    /// The projector: embedding length × s² inputs to the text model's embedding length.
    let projector: WeightMatrix

    init(file: GGUFFile, config c: ClipConfig) throws {
        let loader = TensorLoader(file: file)
        let e = c.embeddingLength, f = c.feedForwardLength
        let p = c.patchSize
        patchKernel = try loader.matrix("v.patch_embd.weight", columns: 3 * p * p, rows: e, shape: [p, p, 3, e])
        patchBias = file.tensor(named: "v.patch_embd.bias") != nil ? try loader.vector("v.patch_embd.bias", count: e) : nil
        let nPos = c.patchesPerSide * c.patchesPerSide
        let pos = try loader.matrix("v.position_embd.weight", columns: e, rows: nPos)
        var decoded = [Float](repeating: 0, count: nPos * e)
        decoded.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            for r in 0..<nPos { ra_dequantize_row(Int32(bitPattern: pos.type.rawValue), pos.row(r), base + r * e, Int64(e)) }
        }
        positions = decoded
        var layers: [ClipLayerWeights] = []
        for i in 0..<c.layerCount {
            let b = "v.blk.\(i)."
            // Some older files swapped the names of ffn_up and ffn_down; llama.cpp tells them apart by shape.
            let downInfo = try loader.info(b + "ffn_down.weight")
            let swapped = downInfo.shape.first == e && f != e
            let (upName, downName) = swapped ? ("ffn_down", "ffn_up") : ("ffn_up", "ffn_down")
            layers.append(ClipLayerWeights(
                norm1Weight: try loader.vector(b + "ln1.weight", count: e), norm1Bias: try loader.vector(b + "ln1.bias", count: e),
                q: try loader.matrix(b + "attn_q.weight", columns: e, rows: e),
                k: try loader.matrix(b + "attn_k.weight", columns: e, rows: e),
                v: try loader.matrix(b + "attn_v.weight", columns: e, rows: e),
                output: try loader.matrix(b + "attn_out.weight", columns: e, rows: e),
                qBias: try loader.vector(b + "attn_q.bias", count: e), kBias: try loader.vector(b + "attn_k.bias", count: e),
                vBias: try loader.vector(b + "attn_v.bias", count: e), outputBias: try loader.vector(b + "attn_out.bias", count: e),
                norm2Weight: try loader.vector(b + "ln2.weight", count: e), norm2Bias: try loader.vector(b + "ln2.bias", count: e),
                up: try loader.matrix(b + upName + ".weight", columns: e, rows: f),
                down: try loader.matrix(b + downName + ".weight", columns: f, rows: e),
                upBias: try loader.vector(b + upName + ".bias", count: f), downBias: try loader.vector(b + downName + ".bias", count: e)))
        }
        self.layers = layers
        postNormWeight = try loader.vector("v.post_ln.weight", count: e)
        postNormBias = try loader.vector("v.post_ln.bias", count: e)
        projector = try loader.matrix("mm.model.fc.weight", columns: e * c.scaleFactor * c.scaleFactor, rows: c.projectionLength)
    }
}
