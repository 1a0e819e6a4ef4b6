import Foundation
import CKernels

/// Deterministic random numbers (SplitMix64), so every run checks the same data.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func float(in range: ClosedRange<Float>) -> Float { Float.random(in: range, using: &self) }
    mutating func byte() -> UInt8 { UInt8.random(in: 0...255, using: &self) }
}

/// A ggml type as the kernels know it.
struct KType: CustomStringConvertible, Sendable {
    let id: Int32
    let name: String
    var description: String { name }
    var blockSize: Int { Int(ra_type_block_size(id)) }
    var blockBytes: Int { Int(ra_type_block_bytes(id)) }
    var dotType: KType { KType.all.first { $0.id == ra_vec_dot_type(id) } ?? self }
    func rowBytes(_ n: Int) -> Int { Int(ra_row_bytes(id, Int64(n))) }

    static let f32 = KType(id: Int32(RA_F32), name: "F32")
    static let f16 = KType(id: Int32(RA_F16), name: "F16")
    static let bf16 = KType(id: Int32(RA_BF16), name: "BF16")
    static let q4_0 = KType(id: Int32(RA_Q4_0), name: "Q4_0")
    static let q4_1 = KType(id: Int32(RA_Q4_1), name: "Q4_1")
    static let q5_0 = KType(id: Int32(RA_Q5_0), name: "Q5_0")
    static let q5_1 = KType(id: Int32(RA_Q5_1), name: "Q5_1")
    static let q8_0 = KType(id: Int32(RA_Q8_0), name: "Q8_0")
    static let q8_1 = KType(id: Int32(RA_Q8_1), name: "Q8_1")
    static let q2_K = KType(id: Int32(RA_Q2_K), name: "Q2_K")
    static let q3_K = KType(id: Int32(RA_Q3_K), name: "Q3_K")
    static let q4_K = KType(id: Int32(RA_Q4_K), name: "Q4_K")
    static let iq4_NL = KType(id: Int32(RA_IQ4_NL), name: "IQ4_NL")
    static let iq4_XS = KType(id: Int32(RA_IQ4_XS), name: "IQ4_XS")
    static let q5_K = KType(id: Int32(RA_Q5_K), name: "Q5_K")
    static let q6_K = KType(id: Int32(RA_Q6_K), name: "Q6_K")
    static let q8_K = KType(id: Int32(RA_Q8_K), name: "Q8_K")

    static let all: [KType] = [f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_K, q3_K, q4_K, q5_K, q6_K, q8_K, iq4_NL, iq4_XS]
    /// Types that appear as weights (have a dot product).
    static let weights: [KType] = [f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_NL, iq4_XS]

    /// Byte offsets of the half-precision scale fields in a block (d, then dmin/m where present).
    var scaleOffsets: [Int] {
        switch name {
        case "Q4_0", "Q5_0", "Q8_0", "IQ4_NL", "IQ4_XS": return [0]
        case "Q4_1", "Q5_1", "Q4_K", "Q5_K": return [0, 2]
        case "Q6_K": return [208]
        case "Q2_K": return [80, 82]
        case "Q3_K": return [108]
        default: return []
        }
    }
}

/// A kernel path and the feature mask that selects it.
struct KPath: CustomStringConvertible, Sendable {
    let path: Int32
    let mask: Int32
    var description: String { String(cString: ra_kernel_path_name(path)) }

    static let scalar = KPath(path: Int32(RA_PATH_SCALAR), mask: 0)
    /// The SIMD paths this CPU can run (empty on a CPU without them).
    static var simd: [KPath] {
        let all = ra_cpu_features()
        let candidates = [
            KPath(path: Int32(RA_PATH_AVX2), mask: Int32(RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C)),
            KPath(path: Int32(RA_PATH_AVX2_VNNI), mask: Int32(RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C | RA_CPU_AVXVNNI)),
            KPath(path: Int32(RA_PATH_AVX512), mask: all & ~Int32(RA_CPU_AVX512VNNI)),
            KPath(path: Int32(RA_PATH_AVX512_VNNI), mask: -1),
            KPath(path: Int32(RA_PATH_NEON), mask: Int32(RA_CPU_NEON)),
            KPath(path: Int32(RA_PATH_NEON_DOTPROD), mask: -1),
        ]
        return candidates.filter { c in
            ra_set_thread_features_mask(c.mask)
            defer { ra_set_thread_features_mask(-1) }
            return ra_kernel_path() == c.path
        }
    }

    /// Runs body with dispatch restricted to this path.
    func run<T>(_ body: () -> T) -> T {
        ra_set_thread_features_mask(mask)
        defer { ra_set_thread_features_mask(-1) }
        return body()
    }
}

enum Kernels {
    static func quantize(_ type: KType, _ x: [Float]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: type.rowBytes(x.count))
        x.withUnsafeBufferPointer { xp in
            out.withUnsafeMutableBytes { ra_quantize_row(type.id, xp.baseAddress, $0.baseAddress, Int64(x.count)) }
        }
        return out
    }

    static func dequantize(_ type: KType, _ bytes: [UInt8], count n: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: n)
        bytes.withUnsafeBytes { bp in
            out.withUnsafeMutableBufferPointer { ra_dequantize_row(type.id, bp.baseAddress, $0.baseAddress, Int64(n)) }
        }
        return out
    }

    static func dot(_ type: KType, _ n: Int, _ w: [UInt8], _ x: [UInt8], wOffset: Int = 0, xOffset: Int = 0) -> Float {
        w.withUnsafeBytes { wp in
            x.withUnsafeBytes { xp in ra_vec_dot(type.id, Int64(n), wp.baseAddress! + wOffset, xp.baseAddress! + xOffset) }
        }
    }

    /// Sum of |w_i * x_i| over the decoded rows: the scale against which rounding differences are judged.
    static func magnitude(_ type: KType, _ n: Int, _ w: [UInt8], _ x: [UInt8]) -> Double {
        let wd = dequantize(type, w, count: n), xd = dequantize(type.dotType, x, count: n)
        return zip(wd, xd).reduce(0.0) { $0 + abs(Double($1.0) * Double($1.1)) }
    }

    /// The exact sum of w_i * x_i over the decoded rows (in double).
    static func referenceDot(_ type: KType, _ n: Int, _ w: [UInt8], _ x: [UInt8]) -> Double {
        let wd = dequantize(type, w, count: n), xd = dequantize(type.dotType, x, count: n)
        return zip(wd, xd).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
    }

    /// A weight row of n elements: quantized random floats for the types ra_quantize_row writes,
    /// random blocks with finite scales (drawn from `scales`) for the others. With `extreme`, quant
    /// bytes are all-zero/all-one patterns and values sit at the ends of their ranges.
    static func randomWeights(_ type: KType, _ n: Int, _ rng: inout SeededRandom, extreme: Bool = false,
                              scales: () -> Float = { 0.01 }) -> [UInt8] {
        switch type.name {
        case "F32", "F16", "BF16":
            let x = (0..<n).map { _ in extreme ? (Bool.random(using: &rng) ? 60000 : -60000) * rngSign(&rng) : rng.float(in: -2...2) }
            return quantize(type, x)
        default:
            var bytes = (0..<type.rowBytes(n)).map { _ in extreme ? (Bool.random(using: &rng) ? 0xFF : 0x00) : rng.byte() }
            for b in 0..<(n / type.blockSize) {
                for (k, off) in type.scaleOffsets.enumerated() {
                    var s = scales()
                    if k == 0 && type.name == "Q6_K" { s = abs(s) }
                    let h = ra_fp32_to_fp16(s)
                    bytes[b * type.blockBytes + off] = UInt8(h & 0xFF)
                    bytes[b * type.blockBytes + off + 1] = UInt8(h >> 8)
                }
            }
            return bytes
        }
    }

    /// Activations of n elements in the dot type of `type`, from floats in ±range.
    static func randomActivations(_ type: KType, _ n: Int, _ rng: inout SeededRandom, range: Float = 1, extreme: Bool = false) -> [UInt8] {
        let x: [Float] = (0..<n).map { i in
            if extreme { return (i % 3 == 0 ? range : (i % 3 == 1 ? -range : range * 1e-3)) }
            return rng.float(in: -range...range)
        }
        return quantize(type.dotType, x)
    }

    private static func rngSign(_ rng: inout SeededRandom) -> Float { Bool.random(using: &rng) ? 1 : -1 }
}

/// Little-endian helpers for building blocks by hand.
extension Array where Element == UInt8 {
    mutating func putHalf(_ value: Float, at offset: Int) {
        let h = ra_fp32_to_fp16(value)
        self[offset] = UInt8(h & 0xFF)
        self[offset + 1] = UInt8(h >> 8)
    }
    mutating func putFloat(_ value: Float, at offset: Int) {
        let b = value.bitPattern
        for k in 0..<4 { self[offset + k] = UInt8((b >> (8 * UInt32(k))) & 0xFF) }
    }
    func half(at offset: Int) -> Float { ra_fp16_to_fp32(UInt16(self[offset]) | (UInt16(self[offset + 1]) << 8)) }
    func float(at offset: Int) -> Float {
        Float(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | (UInt32(self[offset + $1]) << (8 * UInt32($1))) })
    }
    func int16(at offset: Int) -> Int16 { Int16(bitPattern: UInt16(self[offset]) | (UInt16(self[offset + 1]) << 8)) }
}

/// A value handed from one thread to another.
private final class ThreadResult<T>: @unchecked Sendable {
    var value: T?
    let done = DispatchSemaphore(value: 0)
}

extension Thread {
    /// Runs `body` on a new thread and waits for its result (a thread of its own, so thread-local state is fresh).
    static func detachNewThreadAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        let box = ThreadResult<T>()
        Thread.detachNewThread {
            box.value = body()
            box.done.signal()
        }
        box.done.wait()
        return box.value
    }
}
