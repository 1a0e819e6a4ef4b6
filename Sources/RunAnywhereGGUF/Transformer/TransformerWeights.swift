import CKernels

/// A weight matrix inside the mapped file: `rows` rows of `columns` elements of `type`, never copied.
struct WeightMatrix: @unchecked Sendable {
    let name: String
    let type: GGMLType
    let data: UnsafeRawPointer
    /// Elements per row (ggml ne0): the length of the input vector.
    let columns: Int
    /// Number of rows (ggml ne1): the length of the output vector.
    let rows: Int
    /// Bytes of one row.
    let rowBytes: Int
    /// The format activations are converted to before they are multiplied with this matrix.
    let activationType: Int32

    /// Pointer to row r.
    func row(_ r: Int) -> UnsafeRawPointer { data + r * rowBytes }
}

/// The weights of one transformer block.
struct LayerWeights: @unchecked Sendable {
    let attentionNorm: [Float]
    let q, k, v, output: WeightMatrix
    let qBias, kBias, vBias: [Float]?
    let qNorm, kNorm: [Float]?
    /// Gemma: RMSNorm of the attention output and of the feed-forward output before each residual add.
    let postAttentionNorm, postFeedForwardNorm: [Float]?
    let ffnNorm: [Float]
    let gate, up, down: WeightMatrix
}

/// All weights of a model, validated against its configuration. Matrices point into the mapping;
/// the small 1-D tensors (norms, biases) are decoded to Float arrays.
struct TransformerWeights: @unchecked Sendable {
    let tokenEmbedding: WeightMatrix
    let outputNorm: [Float]
    /// The output projection (the token embedding when the model ties them).
    let output: WeightMatrix
    let hasTiedOutput: Bool
    /// Per-dimension RoPE frequency divisors (`rope_freqs.weight`, Llama 3.1+), or nil.
    let ropeFrequencyFactors: [Float]?
    let layers: [LayerWeights]

    /// Looks every tensor up and checks its shape and type.
    /// - Throws: `GGUFError(.invalidFormat)` for a missing tensor or a wrong shape, `.unsupported` for a tensor
    ///   type the kernels cannot multiply.
    init(file: GGUFFile, config c: TransformerConfig) throws {
        let loader = TensorLoader(file: file)
        tokenEmbedding = try loader.matrix("token_embd.weight", columns: c.embeddingLength, rows: c.vocabularySize)
        outputNorm = try loader.vector("output_norm.weight", count: c.embeddingLength)
        if file.tensor(named: "output.weight") != nil {
            output = try loader.matrix("output.weight", columns: c.embeddingLength, rows: c.vocabularySize)
            hasTiedOutput = false
        } else {
            output = tokenEmbedding
            hasTiedOutput = true
        }
        if file.tensor(named: "rope_freqs.weight") != nil {
            ropeFrequencyFactors = try loader.vector("rope_freqs.weight", count: c.ropeDimensionCount / 2)
        } else {
            ropeFrequencyFactors = nil
        }
        let qDim = c.headCount * c.keyLength
        let kDim = c.headCountKV * c.keyLength
        let vDim = c.headCountKV * c.valueLength
        let oDim = c.headCount * c.valueLength
        var layers: [LayerWeights] = []
        layers.reserveCapacity(c.layerCount)
        for i in 0..<c.layerCount {
            let p = "blk.\(i)."
            let hasBias = c.architecture == .qwen2
            let hasQKNorm = c.architecture == .qwen3 || c.architecture == .gemma3
            let hasPostNorms = c.architecture == .gemma3
            layers.append(LayerWeights(
                attentionNorm: try loader.vector(p + "attn_norm.weight", count: c.embeddingLength),
                q: try loader.matrix(p + "attn_q.weight", columns: c.embeddingLength, rows: qDim),
                k: try loader.matrix(p + "attn_k.weight", columns: c.embeddingLength, rows: kDim),
                v: try loader.matrix(p + "attn_v.weight", columns: c.embeddingLength, rows: vDim),
                output: try loader.matrix(p + "attn_output.weight", columns: oDim, rows: c.embeddingLength),
                qBias: hasBias ? try loader.vector(p + "attn_q.bias", count: qDim) : nil,
                kBias: hasBias ? try loader.vector(p + "attn_k.bias", count: kDim) : nil,
                vBias: hasBias ? try loader.vector(p + "attn_v.bias", count: vDim) : nil,
                qNorm: hasQKNorm ? try loader.vector(p + "attn_q_norm.weight", count: c.keyLength) : nil,
                kNorm: hasQKNorm ? try loader.vector(p + "attn_k_norm.weight", count: c.keyLength) : nil,
                postAttentionNorm: hasPostNorms ? try loader.vector(p + "post_attention_norm.weight", count: c.embeddingLength) : nil,
                postFeedForwardNorm: hasPostNorms ? try loader.vector(p + "post_ffw_norm.weight", count: c.embeddingLength) : nil,
                ffnNorm: try loader.vector(p + "ffn_norm.weight", count: c.embeddingLength),
                gate: try loader.matrix(p + "ffn_gate.weight", columns: c.embeddingLength, rows: c.feedForwardLength),
                up: try loader.matrix(p + "ffn_up.weight", columns: c.embeddingLength, rows: c.feedForwardLength),
                down: try loader.matrix(p + "ffn_down.weight", columns: c.feedForwardLength, rows: c.embeddingLength)
            ))
        }
        self.layers = layers
    }
}

/// Finds tensors by name and checks them.
struct TensorLoader {
    let file: GGUFFile

    func info(_ name: String) throws -> GGUFTensorInfo {
        guard let t = file.tensor(named: name) else {
            throw GGUFError(.invalidFormat, "\(file.path): tensor \(name) is missing")
        }
        return t
    }

    func checkType(_ t: GGUFTensorInfo) throws {
        let type = Int32(bitPattern: t.type.rawValue)
        guard ra_type_supported(type) != 0 else {
            throw GGUFError(.unsupported, "tensor \(t.name) has type \(t.type.name), which the native engine cannot compute with")
        }
    }

    /// A matrix of `rows` rows of `columns`; `shape` is the tensor's expected shape when it is not 2-D
    /// (a convolution kernel read as a matrix).
    func matrix(_ name: String, columns: Int, rows: Int, shape expected: [Int]? = nil) throws -> WeightMatrix {
        let t = try info(name)
        let shape = t.shape.count == 1 ? t.shape + [1] : t.shape
        guard shape == expected ?? [columns, rows] else {
            throw GGUFError(.invalidFormat, "\(file.path): tensor \(name) has shape \(t.shape), expected \(expected ?? [columns, rows])")
        }
        try checkType(t)
        let type = Int32(bitPattern: t.type.rawValue)
        let rowBytes = Int(ra_row_bytes(type, Int64(columns)))
        let activation = ra_vec_dot_type(type)
        guard rowBytes > 0, activation >= 0, ra_quantize_supported(activation) != 0,
              Int(ra_row_bytes(activation, Int64(columns))) > 0 else {
            throw GGUFError(.unsupported, "tensor \(name): rows of \(columns) \(t.type.name) elements are not supported (not a whole number of blocks)")
        }
        guard t.byteCount >= rowBytes * rows else {
            throw GGUFError(.invalidFormat, "\(file.path): tensor \(name) holds \(t.byteCount) bytes, expected \(rowBytes * rows)")
        }
        return WeightMatrix(name: name, type: t.type, data: file.data(of: t), columns: columns, rows: rows,
                            rowBytes: rowBytes, activationType: activation)
    }

    func vector(_ name: String, count: Int) throws -> [Float] {
        let t = try info(name)
        guard t.elementCount == count, t.shape.count >= 1, t.shape[0] == count else {
            throw GGUFError(.invalidFormat, "\(file.path): tensor \(name) has shape \(t.shape), expected [\(count)]")
        }
        try checkType(t)
        let type = Int32(bitPattern: t.type.rawValue)
        let bytes = Int(ra_row_bytes(type, Int64(count)))
        guard bytes > 0, t.byteCount >= bytes else {
            throw GGUFError(.invalidFormat, "\(file.path): tensor \(name) of type \(t.type.name) has an invalid size")
        }
        var out = [Float](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { buf in
            if let base = buf.baseAddress { ra_dequantize_row(type, file.data(of: t), base, Int64(count)) }
        }
        return out
    }
}
