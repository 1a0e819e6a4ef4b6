import CKernels

/// A ggml tensor element type, numbered as in GGUF files.
///
/// Quantized types store elements in blocks: `blockSize` elements take `typeSize` bytes.
/// Unquantized types have a block size of 1.
public enum GGMLType: UInt32, Sendable, CaseIterable, Codable {
    /// 32-bit IEEE float.
    case f32 = 0
    /// 16-bit IEEE half float.
    case f16 = 1
    /// 4-bit, blocks of 32, one F16 scale.
    case q4_0 = 2
    /// 4-bit, blocks of 32, F16 scale and minimum.
    case q4_1 = 3
    /// 5-bit, blocks of 32, one F16 scale.
    case q5_0 = 6
    /// 5-bit, blocks of 32, F16 scale and minimum.
    case q5_1 = 7
    /// 8-bit, blocks of 32, one F16 scale.
    case q8_0 = 8
    /// 8-bit, blocks of 32, F16 scale and sum (activation format).
    case q8_1 = 9
    /// 2-bit K-quant, super-blocks of 256.
    case q2_K = 10
    /// 3-bit K-quant, super-blocks of 256.
    case q3_K = 11
    /// 4-bit K-quant, super-blocks of 256.
    case q4_K = 12
    /// 5-bit K-quant, super-blocks of 256.
    case q5_K = 13
    /// 6-bit K-quant, super-blocks of 256.
    case q6_K = 14
    /// 8-bit K-quant, super-blocks of 256 (activation format).
    case q8_K = 15
    /// 2.06 bpw i-quant.
    case iq2_xxs = 16
    /// 2.31 bpw i-quant.
    case iq2_xs = 17
    /// 3.06 bpw i-quant.
    case iq3_xxs = 18
    /// 1.56 bpw i-quant.
    case iq1_s = 19
    /// 4.5 bpw non-linear quant, blocks of 32.
    case iq4_nl = 20
    /// 3.44 bpw i-quant.
    case iq3_s = 21
    /// 2.5 bpw i-quant.
    case iq2_s = 22
    /// 4.25 bpw non-linear quant, super-blocks of 256.
    case iq4_xs = 23
    /// 8-bit signed integer.
    case i8 = 24
    /// 16-bit signed integer.
    case i16 = 25
    /// 32-bit signed integer.
    case i32 = 26
    /// 64-bit signed integer.
    case i64 = 27
    /// 64-bit IEEE float.
    case f64 = 28
    /// 1.75 bpw i-quant.
    case iq1_m = 29
    /// bfloat16.
    case bf16 = 30
    /// Ternary quant, 1.69 bpw.
    case tq1_0 = 34
    /// Ternary quant, 2.06 bpw.
    case tq2_0 = 35
    /// Microscaling FP4, blocks of 32.
    case mxfp4 = 39
    /// NVIDIA FP4, blocks of 64.
    case nvfp4 = 40
    /// 1-bit quant, blocks of 128.
    case q1_0 = 41

    /// Elements per block (1 for unquantized types).
    public var blockSize: Int { layout.elements }

    /// Bytes per block.
    public var typeSize: Int { layout.bytes }

    /// Whether the native engine's kernels multiply weights of this type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
    /// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS: a block format its kernels read and a dot product for it); a model
    /// with a tensor of another type (the IQ1, IQ2 and IQ3 types) is refused when the engine opens it. (Q8_1 and Q8_K
    /// are only the activations' formats.)
    public var isComputable: Bool {
        let type = Int32(bitPattern: rawValue)
        return ra_type_supported(type) != 0 && ra_vec_dot_function(type) != nil
    }

    /// Whether the type is block-quantized (not a plain float or integer type).
    public var isQuantized: Bool {
        switch self {
        case .f32, .f16, .bf16, .f64, .i8, .i16, .i32, .i64: return false
        default: return true
        }
    }

    /// The name ggml and llama.cpp print for this type, e.g. `"Q4_K"`, `"F16"`, `"IQ2_XXS"`.
    public var name: String {
        switch self {
        case .f32: return "F32"
        case .f16: return "F16"
        case .bf16: return "BF16"
        case .f64: return "F64"
        case .i8: return "I8"
        case .i16: return "I16"
        case .i32: return "I32"
        case .i64: return "I64"
        default: return String(describing: self).uppercased()
        }
    }

    /// Bytes taken by a row of `elements` elements, or nil when `elements` is negative,
    /// not a multiple of `blockSize`, or the size overflows.
    public func rowByteCount(elements: Int) -> Int? {
        guard elements >= 0, elements % blockSize == 0 else { return nil }
        let (bytes, overflow) = (elements / blockSize).multipliedReportingOverflow(by: typeSize)
        return overflow ? nil : bytes
    }

    private var layout: (elements: Int, bytes: Int) {
        switch self {
        case .f32: return (1, 4)
        case .f16: return (1, 2)
        case .q4_0: return (32, 18)
        case .q4_1: return (32, 20)
        case .q5_0: return (32, 22)
        case .q5_1: return (32, 24)
        case .q8_0: return (32, 34)
        case .q8_1: return (32, 36)
        case .q2_K: return (256, 84)
        case .q3_K: return (256, 110)
        case .q4_K: return (256, 144)
        case .q5_K: return (256, 176)
        case .q6_K: return (256, 210)
        case .q8_K: return (256, 292)
        case .iq2_xxs: return (256, 66)
        case .iq2_xs: return (256, 74)
        case .iq3_xxs: return (256, 98)
        case .iq1_s: return (256, 50)
        case .iq4_nl: return (32, 18)
        case .iq3_s: return (256, 110)
        case .iq2_s: return (256, 82)
        case .iq4_xs: return (256, 136)
        case .i8: return (1, 1)
        case .i16: return (1, 2)
        case .i32: return (1, 4)
        case .i64: return (1, 8)
        case .f64: return (1, 8)
        case .iq1_m: return (256, 56)
        case .bf16: return (1, 2)
        case .tq1_0: return (256, 54)
        case .tq2_0: return (256, 66)
        case .mxfp4: return (32, 17)
        case .nvfp4: return (64, 36)
        case .q1_0: return (128, 18)
        }
    }
}
