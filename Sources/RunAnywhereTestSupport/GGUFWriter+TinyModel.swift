#if canImport(Glibc)
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#elseif canImport(Darwin)
import Darwin
#endif
import CKernels
import RunAnywhereGGUF

/// A small deterministic random generator (SplitMix64) for reproducible fixtures.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; the same seed always gives the same sequence.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A normally distributed value with mean 0 and the given standard deviation (Box–Muller).
    public mutating func normal(std: Float) -> Float {
        let u1 = Double(next() >> 11 | 1) / Double(1 << 53)
        let u2 = Double(next() >> 11) / Double(1 << 53)
        return Float((-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)) * std
    }
}

/// The shape of a tiny random-weight model for tests.
public struct TinyModelSpec: Sendable, Hashable {
    /// Which tensor layout and metadata to write.
    public enum Architecture: String, Sendable, Hashable {
        /// Llama: normal RoPE, untied output by default.
        case llama
        /// Qwen3: per-head q/k RMSNorm, NeoX RoPE, `heads × headDim` may differ from the hidden size.
        case qwen3
        /// Gemma 3: per-head q/k RMSNorm, post-attention and post-feed-forward norms, GELU-gated feed-forward,
        /// embeddings scaled by sqrt(hidden), sliding-window attention on the local layers (see `slidingWindow`).
        case gemma3
    }

    /// The architecture.
    public var architecture: Architecture = .llama
    /// Vocabulary size (at least 259: `<unk>`, `<s>`, `</s>` and 256 byte tokens).
    public var vocabSize = 300
    /// Hidden size.
    public var embeddingLength = 64
    /// Number of blocks.
    public var blockCount = 2
    /// Query heads.
    public var headCount = 4
    /// Key/value heads.
    public var headCountKV = 2
    /// Head dimension.
    public var headDim = 16
    /// Feed-forward size.
    public var feedForwardLength = 96
    /// Trained context length written to metadata.
    public var contextLength = 512
    /// RoPE base (of the global layers, for Gemma 3).
    public var ropeFreqBase: Float = 10_000
    /// Gemma 3: `attention.sliding_window` written when > 0 (llama.cpp then makes every layer local except each
    /// sixth: 5, 11, ...; the local layers use RoPE base 10000).
    public var slidingWindow = 0
    /// Gemma 3: `final_logit_softcapping` written when set.
    public var finalLogitSoftcap: Float?
    /// RMSNorm epsilon.
    public var rmsNormEpsilon: Float = 1e-5
    /// Whether the output matrix is the token embedding (no `output.weight`).
    public var tiedOutput = false
    /// Type of every 2-D matrix: `.f32`, `.f16` or `.q8_0` (row lengths must then be multiples of 32).
    public var weightType: GGMLType = .f32
    /// Standard deviation of the matrix weights.
    public var weightStd: Float = 0.1
    /// Random seed.
    public var seed: UInt64 = 1
    /// When set, matrix values are first quantized to this type and back (so an F32 model can hold exactly
    /// the values a quantized model of the same seed holds).
    public var valuesRoundedThrough: GGMLType?

    /// The default tiny llama.
    public init() {}
}

extension GGUFWriter {
    /// A writer holding a tiny random-weight model of the given shape: llama.cpp tensor names and
    /// metadata keys, an SPM-style vocabulary (`<unk>`, `<s>`, `</s>`, `<0x00>`…`<0xFF>`, then `tok<i>`),
    /// matrices N(0, std) in `weightType`, norm weights uniform in [0.5, 1.5] (F32).
    ///
    /// - Precondition: `weightType` is a type ``encode(_:as:)`` writes, and every row length is a multiple of its
    ///   block; `vocabSize >= 259`.
    public static func tinyModel(_ spec: TinyModelSpec) -> GGUFWriter {
        precondition([.f32, .f16, .q8_0, .q6_K, .q3_K, .q2_K, .iq4_nl, .iq4_xs].contains(spec.weightType) || ra_quantize_supported(Int32(spec.weightType.rawValue)) != 0,
                     "tinyModel cannot write \(spec.weightType.name) matrices")
        precondition(spec.vocabSize >= 259, "vocabulary needs at least 259 tokens")
        let arch = spec.architecture.rawValue
        var w = GGUFWriter()
        w.set("general.architecture", .string(arch))
        w.set("general.name", .string("tiny-\(arch)-test"))
        let fileType: UInt32 = spec.weightType == .f32 ? 0 : spec.weightType == .f16 ? 1 : 7
        w.set("general.file_type", .uint32(fileType))
        w.set("\(arch).context_length", .uint32(UInt32(spec.contextLength)))
        w.set("\(arch).embedding_length", .uint32(UInt32(spec.embeddingLength)))
        w.set("\(arch).block_count", .uint32(UInt32(spec.blockCount)))
        w.set("\(arch).feed_forward_length", .uint32(UInt32(spec.feedForwardLength)))
        w.set("\(arch).attention.head_count", .uint32(UInt32(spec.headCount)))
        w.set("\(arch).attention.head_count_kv", .uint32(UInt32(spec.headCountKV)))
        w.set("\(arch).attention.key_length", .uint32(UInt32(spec.headDim)))
        w.set("\(arch).attention.value_length", .uint32(UInt32(spec.headDim)))
        w.set("\(arch).rope.dimension_count", .uint32(UInt32(spec.headDim)))
        w.set("\(arch).rope.freq_base", .float32(spec.ropeFreqBase))
        w.set("\(arch).attention.layer_norm_rms_epsilon", .float32(spec.rmsNormEpsilon))
        if spec.architecture == .gemma3 {
            if spec.slidingWindow > 0 { w.set("\(arch).attention.sliding_window", .uint32(UInt32(spec.slidingWindow))) }
            if let cap = spec.finalLogitSoftcap { w.set("\(arch).final_logit_softcapping", .float32(cap)) }
        }

        var tokens: [GGUFValue] = [.string("<unk>"), .string("<s>"), .string("</s>")]
        var types: [GGUFValue] = [.int32(2), .int32(3), .int32(3)]
        for b in 0..<256 {
            let hex = String(b, radix: 16, uppercase: true)
            tokens.append(.string("<0x\(hex.count == 1 ? "0" + hex : hex)>"))
            types.append(.int32(6))
        }
        while tokens.count < spec.vocabSize {
            tokens.append(.string("tok\(tokens.count)"))
            types.append(.int32(1))
        }
        w.set("tokenizer.ggml.model", .string("llama"))
        w.set("tokenizer.ggml.tokens", .array(tokens))
        w.set("tokenizer.ggml.scores", .array((0..<spec.vocabSize).map { .float32(-Float($0)) }))
        w.set("tokenizer.ggml.token_type", .array(types))
        w.set("tokenizer.ggml.unknown_token_id", .uint32(0))
        w.set("tokenizer.ggml.bos_token_id", .uint32(1))
        w.set("tokenizer.ggml.eos_token_id", .uint32(2))
        w.set("tokenizer.ggml.add_bos_token", .bool(true))

        var rng = SeededGenerator(seed: spec.seed)
        var normRng = SeededGenerator(seed: spec.seed &+ 1_000_003)
        func matrix(_ name: String, _ cols: Int, _ rows: Int) {
            var values = (0..<(cols * rows)).map { _ in rng.normal(std: spec.weightStd) }
            if let through = spec.valuesRoundedThrough { values = roundTrip(values, through: through) }
            w.addTensor(name: name, shape: [cols, rows], type: spec.weightType, data: encode(values, as: spec.weightType))
        }
        func norm(_ name: String, _ n: Int) {
            let values = (0..<n).map { _ in 0.5 + Float(normRng.next() >> 40) / Float(1 << 24) }
            w.addTensor(name: name, shape: [n], floats: values)
        }
        let e = spec.embeddingLength, q = spec.headCount * spec.headDim, kv = spec.headCountKV * spec.headDim
        matrix("token_embd.weight", e, spec.vocabSize)
        if !spec.tiedOutput { matrix("output.weight", e, spec.vocabSize) }
        norm("output_norm.weight", e)
        for i in 0..<spec.blockCount {
            let p = "blk.\(i)."
            norm(p + "attn_norm.weight", e)
            matrix(p + "attn_q.weight", e, q)
            matrix(p + "attn_k.weight", e, kv)
            matrix(p + "attn_v.weight", e, kv)
            matrix(p + "attn_output.weight", q, e)
            if spec.architecture != .llama {
                norm(p + "attn_q_norm.weight", spec.headDim)
                norm(p + "attn_k_norm.weight", spec.headDim)
            }
            if spec.architecture == .gemma3 { norm(p + "post_attention_norm.weight", e) }
            norm(p + "ffn_norm.weight", e)
            matrix(p + "ffn_gate.weight", e, spec.feedForwardLength)
            matrix(p + "ffn_up.weight", e, spec.feedForwardLength)
            matrix(p + "ffn_down.weight", spec.feedForwardLength, e)
            if spec.architecture == .gemma3 { norm(p + "post_ffw_norm.weight", e) }
        }
        return w
    }

    /// Encodes floats as F32, F16, Q8_0, Q6_K, Q3_K, Q2_K, IQ4_NL or IQ4_XS bytes written here (Q8_0: blocks of 32, scale =
    /// max|x| / 127 stored as F16, values rounded half away from zero; the others: ``encodeQ6K(_:)``, ``encodeQ3K(_:)``,
    /// ``encodeQ2K(_:)``, ``encodeIQ4(_:superBlocks:)``), or in another block format through the engine's quantizers.
    public static func encode(_ values: [Float], as type: GGMLType) -> [UInt8] {
        var out: [UInt8] = []
        switch type {
        case .f32:
            out.reserveCapacity(values.count * 4)
            for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { out.append(contentsOf: $0) } }
        case .f16:
            out.reserveCapacity(values.count * 2)
            for v in values { withUnsafeBytes(of: halfBits(v).littleEndian) { out.append(contentsOf: $0) } }
        case .q8_0:
            precondition(values.count % 32 == 0, "Q8_0 needs a multiple of 32 values")
            out.reserveCapacity(values.count / 32 * 34)
            var start = 0
            while start < values.count {
                let block = values[start..<start + 32]
                let amax = block.reduce(Float(0)) { max($0, abs($1)) }
                let d = amax / 127
                let inverse: Float = d == 0 ? 0 : 1 / d
                withUnsafeBytes(of: halfBits(d).littleEndian) { out.append(contentsOf: $0) }
                for v in block { out.append(UInt8(bitPattern: Int8((v * inverse).rounded(.toNearestOrAwayFromZero)))) }
                start += 32
            }
        case .q6_K:
            out = encodeQ6K(values)
        case .q3_K:
            out = encodeQ3K(values)
        case .q2_K:
            out = encodeQ2K(values)
        case .iq4_nl, .iq4_xs:
            out = encodeIQ4(values, superBlocks: type == .iq4_xs)
        default:
            // Other block formats through the engine's own quantizers (BF16, Q4_0, Q4_1, Q5_0, Q5_1).
            precondition(ra_quantize_supported(Int32(type.rawValue)) != 0, "encode(_:as:) cannot write \(type.name)")
            precondition(values.count % type.blockSize == 0, "\(type.name) needs a multiple of \(type.blockSize) values")
            out = [UInt8](repeating: 0, count: values.count / type.blockSize * type.typeSize)
            values.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBytes { dst in
                    ra_quantize_row(Int32(type.rawValue), src.baseAddress, dst.baseAddress, Int64(values.count))
                }
            }
        }
        return out
    }

    /// Q6_K blocks of 256 values in llama.cpp's layout (ql[128], qh[64], int8 scales[16], F16 d), by a plain rounding
    /// quantizer (not ggml's search): sub-block j's scale max|x| / 31, d = the largest of them / 127, each scale
    /// round(s_j / d), each quant round(x / (d · scale_j)) clamped to -32...31 and stored plus 32. Enough for valid,
    /// varied blocks in test models; the engine only ever reads Q6_K.
    public static func encodeQ6K(_ values: [Float]) -> [UInt8] {
        precondition(values.count % 256 == 0, "Q6_K needs a multiple of 256 values")
        var out = [UInt8](repeating: 0, count: values.count / 256 * 210)
        for b in 0..<(values.count / 256) {
            let v = values[(b * 256)..<(b * 256 + 256)].map { $0 }, o = b * 210
            let s = (0..<16).map { j in v[(16 * j)..<(16 * j + 16)].reduce(Float(0)) { max($0, abs($1)) } / 31 }
            let dBits = halfBits((s.max() ?? 0) / 127)
            var d = Float(0)
            withUnsafeBytes(of: dBits) { raw in
                var one = Float(0)
                ra_dequantize_row(Int32(RA_F16), raw.baseAddress, &one, 1)
                d = one
            }
            for j in 0..<16 {
                let sc = d == 0 ? 0 : Int8(clamping: Int((s[j] / d).rounded()))
                out[o + 192 + j] = UInt8(bitPattern: sc)
                let step = d * Float(sc)
                for k in (16 * j)..<(16 * j + 16) {
                    let q = step == 0 ? 0 : min(31, max(-32, Int((v[k] / step).rounded())))
                    let u = UInt8(q + 32), half = k / 128, g = (k % 128) / 32, l = k % 32
                    let ql = o + 64 * half + (g & 1) * 32 + l
                    out[ql] |= g < 2 ? u & 15 : (u & 15) << 4
                    out[o + 128 + 32 * half + l] |= (u >> 4) << (2 * g)
                }
            }
            out[o + 208] = UInt8(dBits & 0xFF)
            out[o + 209] = UInt8(dBits >> 8)
        }
        return out
    }

    /// Q3_K blocks of 256 values in llama.cpp's layout (hmask[32], qs[64], 12 bytes of six-bit scales, F16 d), by a
    /// plain rounding quantizer (not ggml's search): sub-block j's scale max|x| / 4, d = the largest / 31, each scale
    /// round(s_j / d) stored plus 32, each quant round(x / (d · scale_j)) clamped to -4...3 and stored plus 4 (two low
    /// bits in qs, the third in hmask).
    public static func encodeQ3K(_ values: [Float]) -> [UInt8] {
        precondition(values.count % 256 == 0, "Q3_K needs a multiple of 256 values")
        var out = [UInt8](repeating: 0, count: values.count / 256 * 110)
        for b in 0..<(values.count / 256) {
            let v = Array(values[(b * 256)..<(b * 256 + 256)]), o = b * 110
            let s = (0..<16).map { j in v[(16 * j)..<(16 * j + 16)].reduce(Float(0)) { max($0, abs($1)) } / 4 }
            let dBits = halfBits((s.max() ?? 0) / 31), d = floatOfHalf(dBits)
            for j in 0..<16 {
                let sc = d == 0 ? 0 : min(31, max(-32, Int((s[j] / d).rounded())))
                let stored = sc + 32
                out[o + 96 + j % 8] |= UInt8(stored & 15) << (j < 8 ? 0 : 4)
                out[o + 104 + j % 4] |= UInt8(stored >> 4) << (2 * (j / 4))
                let step = d * Float(sc)
                for e in (16 * j)..<(16 * j + 16) {
                    let q = step == 0 ? 0 : min(3, max(-4, Int((v[e] / step).rounded()))) + 4
                    let h = e / 128, c = (e % 128) / 32, l = e % 32
                    out[o + 32 + 32 * h + l] |= UInt8(q & 3) << (2 * c)
                    out[o + l] |= UInt8(q >> 2) << (4 * h + c)
                }
            }
            out[o + 108] = UInt8(dBits & 0xFF)
            out[o + 109] = UInt8(dBits >> 8)
        }
        return out
    }

    /// Q2_K blocks of 256 values in llama.cpp's layout (a scale and min byte per 16 values, qs[64], F16 d, F16 dmin), by
    /// a plain rounding quantizer: sub-block j's min m_j = max(0, -min x) and scale (max x + m_j) / 3, d and dmin the
    /// largest of each / 15, each stored as round(· / d) (round(· / dmin)), each quant round((x + dmin · m) / (d ·
    /// scale)) clamped to 0...3.
    public static func encodeQ2K(_ values: [Float]) -> [UInt8] {
        precondition(values.count % 256 == 0, "Q2_K needs a multiple of 256 values")
        var out = [UInt8](repeating: 0, count: values.count / 256 * 84)
        for b in 0..<(values.count / 256) {
            let v = Array(values[(b * 256)..<(b * 256 + 256)]), o = b * 84
            let mins = (0..<16).map { j in max(0, -(v[(16 * j)..<(16 * j + 16)].min() ?? 0)) }
            let scales = (0..<16).map { j in ((v[(16 * j)..<(16 * j + 16)].max() ?? 0) + mins[j]) / 3 }
            let dBits = halfBits((scales.max() ?? 0) / 15), mBits = halfBits((mins.max() ?? 0) / 15)
            let d = floatOfHalf(dBits), dmin = floatOfHalf(mBits)
            for j in 0..<16 {
                let sc = d == 0 ? 0 : min(15, Int((scales[j] / d).rounded()))
                let m = dmin == 0 ? 0 : min(15, Int((mins[j] / dmin).rounded()))
                out[o + j] = UInt8(sc | m << 4)
                let step = d * Float(sc), offset = dmin * Float(m)
                for e in (16 * j)..<(16 * j + 16) {
                    let q = step == 0 ? 0 : min(3, max(0, Int(((v[e] + offset) / step).rounded())))
                    out[o + 16 + 32 * (e / 128) + e % 32] |= UInt8(q) << (2 * ((e % 128) / 32))
                }
            }
            out[o + 80] = UInt8(dBits & 0xFF)
            out[o + 81] = UInt8(dBits >> 8)
            out[o + 82] = UInt8(mBits & 0xFF)
            out[o + 83] = UInt8(mBits >> 8)
        }
        return out
    }

    /// IQ4_NL (blocks of 32: F16 d, 16 bytes of nibbles) or, with `superBlocks`, IQ4_XS (256 values: F16 d, the blocks'
    /// six-bit scales in scales_h and scales_l, 128 bytes of nibbles) in llama.cpp's layout, by a plain quantizer: a block's
    /// step max|x| / 127 (IQ4_XS: d = the largest step / 31, each block's scale round(step / d)), each value the nearest of
    /// the 16 levels (-127 ... 113) after dividing by the step.
    public static func encodeIQ4(_ values: [Float], superBlocks: Bool) -> [UInt8] {
        let levels: [Float] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]
        func nibbles(_ v: ArraySlice<Float>, step: Float) -> [UInt8] {
            let idx = v.map { x -> Int in
                let t = step == 0 ? 0 : x / step
                return levels.indices.min { abs(levels[$0] - t) < abs(levels[$1] - t) } ?? 0
            }
            return (0..<16).map { UInt8(idx[$0]) | UInt8(idx[$0 + 16]) << 4 }
        }
        func amax(_ v: ArraySlice<Float>) -> Float { v.reduce(Float(0)) { max($0, abs($1)) } }
        var out: [UInt8] = []
        if !superBlocks {
            precondition(values.count % 32 == 0, "IQ4_NL needs a multiple of 32 values")
            for b in 0..<(values.count / 32) {
                let v = values[(32 * b)..<(32 * b + 32)]
                let dBits = halfBits(amax(v) / 127)
                out += [UInt8(dBits & 0xFF), UInt8(dBits >> 8)] + nibbles(v, step: floatOfHalf(dBits))
            }
            return out
        }
        precondition(values.count % 256 == 0, "IQ4_XS needs a multiple of 256 values")
        for b in 0..<(values.count / 256) {
            let steps = (0..<8).map { j in amax(values[(256 * b + 32 * j)..<(256 * b + 32 * j + 32)]) / 127 }
            let dBits = halfBits((steps.max() ?? 0) / 31), d = floatOfHalf(dBits)
            let scales = steps.map { d == 0 ? 0 : min(31, max(-32, Int(($0 / d).rounded()))) }
            var high: UInt16 = 0, low = [UInt8](repeating: 0, count: 4), qs: [UInt8] = []
            for (j, sc) in scales.enumerated() {
                let u = sc + 32
                low[j / 2] |= UInt8(u & 15) << (4 * (j % 2))
                high |= UInt16(u >> 4) << (2 * j)
                qs += nibbles(values[(256 * b + 32 * j)..<(256 * b + 32 * j + 32)], step: d * Float(sc))
            }
            out += [UInt8(dBits & 0xFF), UInt8(dBits >> 8), UInt8(high & 0xFF), UInt8(high >> 8)] + low + qs
        }
        return out
    }

    /// `blocks` IQ2_XXS blocks (66 bytes: F16 d, then 64 bytes of grid indices, signs and scales) of random bits with
    /// d = 2^-10: valid blocks of a type the native engine cannot compute with and llama.cpp can (routing tests).
    public static func randomIQ2XXS(blocks: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededGenerator(seed: seed)
        var out = [UInt8](repeating: 0, count: blocks * 66)
        for b in 0..<blocks {
            let d = halfBits(1.0 / 1024)
            out[b * 66] = UInt8(d & 0xFF)
            out[b * 66 + 1] = UInt8(d >> 8)
            for k in 2..<66 { out[b * 66 + k] = UInt8(truncatingIfNeeded: rng.next() >> 32) }
        }
        return out
    }

    /// The float value of half-precision bits.
    static func floatOfHalf(_ bits: UInt16) -> Float {
        var value = Float(0)
        withUnsafeBytes(of: bits) { raw in ra_dequantize_row(Int32(RA_F16), raw.baseAddress, &value, 1) }
        return value
    }

    /// `values` after a round trip through `type` (quantize, then dequantize with the engine's kernels).
    public static func roundTrip(_ values: [Float], through type: GGMLType) -> [Float] {
        let bytes = encode(values, as: type)
        var out = [Float](repeating: 0, count: values.count)
        bytes.withUnsafeBytes { src in
            out.withUnsafeMutableBufferPointer { dst in
                ra_dequantize_row(Int32(type.rawValue), src.baseAddress, dst.baseAddress, Int64(values.count))
            }
        }
        return out
    }

    /// IEEE half-precision bits of `value`, rounded to nearest even (overflow gives infinity).
    public static func halfBits(_ value: Float) -> UInt16 {
        let x = value.bitPattern
        let sign = UInt16(truncatingIfNeeded: (x >> 16) & 0x8000)
        let exponent = Int((x >> 23) & 0xFF)
        var mantissa = x & 0x7F_FFFF
        if exponent == 0xFF { return sign | 0x7C00 | (mantissa != 0 ? 0x200 : 0) }
        let e = exponent - 127 + 15
        if e >= 0x1F { return sign | 0x7C00 }
        if e <= 0 {
            if e < -10 { return sign }
            mantissa |= 0x80_0000
            let shift = UInt32(14 - e)
            var half = mantissa >> shift
            let rest = mantissa & ((1 << shift) - 1)
            let halfway = UInt32(1) << (shift - 1)
            if rest > halfway || (rest == halfway && half & 1 == 1) { half += 1 }
            return sign | UInt16(half)
        }
        var half = UInt32(e) << 10 | mantissa >> 13
        let rest = mantissa & 0x1FFF
        if rest > 0x1000 || (rest == 0x1000 && half & 1 == 1) { half += 1 }  // a carry rounds up the exponent
        return sign | UInt16(half)
    }
}

extension TinyModelSpec {
    /// A Llama-shaped spec whose every row length is a multiple of 256 (hidden 256, 4 heads of 64, 2 KV heads,
    /// feed-forward 512, 264 tokens), matrices N(0, 0.3) in `type`: for the K-quants' super-blocks.
    public static func superBlockShaped(_ type: GGMLType, seed: UInt64) -> TinyModelSpec {
        var spec = TinyModelSpec()
        spec.architecture = .llama
        spec.embeddingLength = 256
        spec.headCount = 4
        spec.headCountKV = 2
        spec.headDim = 64
        spec.feedForwardLength = 512
        spec.vocabSize = 264
        spec.weightStd = 0.3
        spec.seed = seed
        spec.weightType = type
        return spec
    }
}
