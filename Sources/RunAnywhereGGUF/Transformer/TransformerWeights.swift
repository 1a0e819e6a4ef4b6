import CKernels
import Dispatch

/// A weight matrix: `rows` rows of `columns` elements of `type`, inside the mapped file (never copied), or repacked
/// at load into memory of the model's own (`kernelType` RA_Q4_K_X8 ... RA_Q8_0_X8).
struct WeightMatrix: @unchecked Sendable {
    let name: String
    let type: GGMLType
    /// The type id the kernels are called with: `type`'s, or its repacked type (ra_x8_type) for rows repacked at load.
    let kernelType: Int32
    let data: UnsafeRawPointer
    /// Elements per row (ggml ne0): the length of the input vector.
    let columns: Int
    /// Number of rows (ggml ne1): the length of the output vector.
    let rows: Int
    /// Bytes of one row.
    let rowBytes: Int
    /// The format activations are converted to before they are multiplied with this matrix.
    let activationType: Int32

    /// Pointer to row r (as stored in the file: not for a repacked matrix).
    func row(_ r: Int) -> UnsafeRawPointer { data + r * rowBytes }

    /// Row r (below `rows`) as `columns` floats into dst: the file's values, whether the matrix was repacked or not.
    func dequantizeRow(_ r: Int, into dst: UnsafeMutablePointer<Float>) {
        if kernelType == Int32(bitPattern: type.rawValue) {
            ra_dequantize_row(kernelType, row(r), dst, Int64(columns))
        } else {
            ra_x8_dequantize_row(kernelType, data, Int64(columns), Int64(r), dst)
        }
    }

    /// This matrix with its rows at `data` in the layout of kernel type `kernelType`.
    func moved(to data: UnsafeRawPointer, kernelType: Int32) -> WeightMatrix {
        WeightMatrix(name: name, type: type, kernelType: kernelType, data: data, columns: columns, rows: rows,
                     rowBytes: Int(ra_row_bytes(kernelType, Int64(columns))), activationType: activationType)
    }
}

/// The weights of one transformer block.
struct LayerWeights: @unchecked Sendable {
    let attentionNorm: [Float]
    var q, k, v, output: WeightMatrix
    let qBias, kBias, vBias: [Float]?
    let qNorm, kNorm: [Float]?
    /// Gemma: RMSNorm of the attention output and of the feed-forward output before each residual add.
    let postAttentionNorm, postFeedForwardNorm: [Float]?
    let ffnNorm: [Float]
    var gate, up, down: WeightMatrix
}

/// All weights of a model, validated against its configuration. Matrices point into the mapping;
/// the small 1-D tensors (norms, biases) are decoded to Float arrays.
struct TransformerWeights: @unchecked Sendable {
    /// The token embedding (the repacked output matrix when the model ties them and it was repacked).
    private(set) var tokenEmbedding: WeightMatrix
    let outputNorm: [Float]
    /// The output projection (the token embedding when the model ties them).
    private(set) var output: WeightMatrix
    let hasTiedOutput: Bool
    /// Per-dimension RoPE frequency divisors (`rope_freqs.weight`, Llama 3.1+), or nil.
    let ropeFrequencyFactors: [Float]?
    private(set) var layers: [LayerWeights]
    /// The pages holding the repacked matrices (nil when none were repacked); freed with the weights.
    private(set) var repacked: PageBlock?

    /// Looks every tensor up and checks its shape and type; with `repack`, Q4_K, Q5_K, Q6_K, Q4_0, Q5_0, Q4_1, Q5_1 and Q8_0
    /// matrices are repacked for decode where the CPU's kernel path multiplies them faster that way
    /// (``repackRows(file:pieceBytes:)``).
    /// - Throws: `GGUFError(.invalidFormat)` for a missing tensor or a wrong shape, `.unsupported` for a tensor
    ///   type the kernels cannot multiply, `.io` when the memory for repacked matrices cannot be had.
    init(file: GGUFFile, config c: TransformerConfig, repack: Bool = true, pieceBytes: Int = repackPieceBytes) throws {
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
        if repack && ra_x8_kernel(ra_kernel_path()) != 0 { try repackRows(file: file, pieceBytes: pieceBytes) }
    }

    /// The file's bytes of a matrix that ``repackRows(file:pieceBytes:)`` copies at a time.
    static let repackPieceBytes = 4 << 20

    /// Repacks every Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, IQ4_XS, IQ4_NL, Q4_0, Q5_0, Q4_1, Q5_1 and Q8_0 matrix of the layers
    /// and the output matrix (the types ra_x8_bytes takes) into groups of 8 interleaved rows (ra_x8_repack), whose
    /// decode kernels compute 1.4–2.2× as fast as the one-row kernels on AVX2, where those, not the memory, set the decode rate, and stream a group as one sequence (Q8_0:
    /// 1.2× from memory) (bench/results/engine-notes.md, "Stop 32" to "Stop 36"). The AVX-512 paths repack too
    /// (their quantized dots are the AVX2 ones; on a Zen 4 EPYC the groups decode 1.1–1.3× as fast, "Stop 44"), and
    /// AVX-512 VNNI runs the groups with `vpdpbusd` (1.2–2.0× the AVX2 kernels in cache, "Stop 45"). The results are
    /// the same bits.
    /// The copies live in pages of their own (asked for as huge pages); the file's pages of the repacked tensors are
    /// then dropped from this process's mapping, so the resident size grows by the 0–2.8% the repacked layouts add,
    /// not by a second copy. An output matrix tied to the token embedding is repacked too (often Q8_0: a third of
    /// SmolLM2's bytes a token, 70% of Gemma 3 270M's; Q6_K in Qwen3's Q4_K_M files, a third of theirs), and the embedding's rows are then looked up in the copy, converted
    /// back one row at a time; an untied token embedding stays in the file.
    private mutating func repackRows(file: GGUFFile, pieceBytes: Int) throws {
        struct Slot { let layer: Int; let which: Int; let matrix: WeightMatrix; let slot: Int }
        var layout = PageBlock.Layout()
        var slots: [Slot] = []
        func consider(_ m: WeightMatrix, layer: Int, which: Int) {
            let type = Int32(bitPattern: m.type.rawValue)
            let bytes = Int(ra_x8_bytes(type, Int64(m.columns), Int64(m.rows)))
            guard bytes > 0 else { return }
            slots.append(Slot(layer: layer, which: which, matrix: m, slot: layout.add(bytes)))
        }
        for (i, l) in layers.enumerated() {
            for (which, m) in [l.q, l.k, l.v, l.output, l.gate, l.up, l.down].enumerated() { consider(m, layer: i, which: which) }
        }
        consider(output, layer: -1, which: 0)
        guard !slots.isEmpty else { return }
        let block = try PageBlock(layout, purpose: "the repacked weight matrices")
        block.adviseHugePages()
        // Pieces of at most ~pieceBytes (4 MiB) of a matrix's rows (whole groups of 8, contiguous in both layouts),
        // each piece's file pages let go as soon as it is copied, so the resident size never holds both copies of more
        // than the pieces in flight: copied whole, a tied vocabulary-sized output (Gemma 3 270M's 178 MB of Q8_0) raised the
        // peak by its size. (With the file in 2 MiB folios, a page fault in a neighbouring tensor later maps the whole
        // folio again, its repacked part included: ~35 MiB of a Qwen3-shaped Q4_K_M's 205 come back as clean file
        // pages the system may reclaim.)
        struct Piece { let slot: Slot; let rows: Range<Int> }
        var pieces: [Piece] = []
        for s in slots {
            let step = max(8, pieceBytes / max(1, s.matrix.rowBytes) / 8 * 8)
            for r in stride(from: 0, to: s.matrix.rows, by: step) {
                pieces.append(Piece(slot: s, rows: r..<min(s.matrix.rows, r + step)))
            }
        }
        let all = pieces
        DispatchQueue.concurrentPerform(iterations: all.count) { k in
            let p = all[k], m = p.slot.matrix
            let type = Int32(bitPattern: m.type.rawValue)
            let packedRow = Int(ra_row_bytes(ra_x8_type(type), Int64(m.columns)))
            let done = ra_x8_repack(type, m.data + p.rows.lowerBound * m.rowBytes, Int64(m.columns), Int64(p.rows.count),
                                    block.raw(p.slot.slot) + p.rows.lowerBound * packedRow)
            precondition(done == 1, "\(m.name): ra_x8_bytes took this shape, so ra_x8_repack must take its rows \(p.rows)")
            if let t = file.tensor(named: m.name) {
                file.releasePages(of: t, bytes: p.rows.lowerBound * m.rowBytes..<p.rows.upperBound * m.rowBytes)
            }
        }
        for s in slots {
            let m = s.matrix.moved(to: UnsafeRawPointer(block.raw(s.slot)), kernelType: ra_x8_type(Int32(bitPattern: s.matrix.type.rawValue)))
            if s.layer < 0 {
                output = m
                if hasTiedOutput { tokenEmbedding = m }
                continue
            }
            switch s.which {
            case 0: layers[s.layer].q = m
            case 1: layers[s.layer].k = m
            case 2: layers[s.layer].v = m
            case 3: layers[s.layer].output = m
            case 4: layers[s.layer].gate = m
            case 5: layers[s.layer].up = m
            default: layers[s.layer].down = m
            }
        }
        repacked = block
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
        guard t.type.isComputable else {
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
        return WeightMatrix(name: name, type: t.type, kernelType: type, data: file.data(of: t), columns: columns, rows: rows,
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
