import CKernels
import Testing

@Suite("half and bfloat16 conversion")
struct ConversionTests {
    @Test("every non-NaN half survives half -> float -> half, and NaNs stay NaN")
    func halfRoundTrip() {
        for h in 0...UInt16.max {
            let f = ra_fp16_to_fp32(h)
            let isNaN = (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0
            if isNaN {
                #expect(f.isNaN)
                let back = ra_fp32_to_fp16(f)
                #expect((back & 0x7C00) == 0x7C00 && (back & 0x03FF) != 0)
            } else if ra_fp32_to_fp16(f) != h {
                Issue.record("half \(h) -> \(f) -> \(ra_fp32_to_fp16(f))")
            }
        }
    }

    @Test("float to half rounds to nearest even at normal and subnormal quanta, overflows to inf")
    func halfRounding() {
        let cases: [(Float, UInt16)] = [
            (1, 0x3C00), (-2, 0xC000), (65504, 0x7BFF), (65519.99, 0x7BFF), (65520, 0x7C00), (1e10, 0x7C00),
            (-.infinity, 0xFC00), (.infinity, 0x7C00), (0, 0), (-0.0, 0x8000),
            (1 + 0x1p-11, 0x3C00), (1 + 3 * 0x1p-11, 0x3C02), (1 + 0x1p-11 + 0x1p-20, 0x3C01),
            (0x1p-24, 0x0001), (0x1p-25, 0x0000), (3 * 0x1p-25, 0x0002), (0x1p-25 + 0x1p-35, 0x0001),
            (0x1p-14, 0x0400), (0x1p-14 - 0x1p-25, 0x0400), (1e-10, 0),
        ]
        for (f, h) in cases { #expect(ra_fp32_to_fp16(f) == h, "\(f)") }
        #expect(ra_fp16_to_fp32(ra_fp32_to_fp16(.nan)).isNaN)
    }

    #if arch(x86_64) || arch(arm64)
    @Test("float to half agrees with Swift's Float16 on a million random bit patterns")
    func halfMatchesFloat16() {
        var rng = SeededRandom(seed: 7)
        var mismatches = 0
        for _ in 0..<1_000_000 {
            let f = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
            let ours = ra_fp32_to_fp16(f), swift = Float16(f).bitPattern
            if f.isNaN { if !Float16(bitPattern: ours).isNaN { mismatches += 1 } } else if ours != swift { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }
    #endif

    @Test("bfloat16 round-trips every non-NaN value and rounds floats to nearest even")
    func bfloat16() {
        for h in 0...UInt16.max where !((h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0) {
            if ra_fp32_to_bf16(ra_bf16_to_fp32(h)) != h { Issue.record("bf16 \(h)") }
        }
        let cases: [(Float, UInt16)] = [
            (1, 0x3F80), (1 + 0x1p-8, 0x3F80), (1 + 3 * 0x1p-8, 0x3F82), (1 + 0x1p-8 + 0x1p-20, 0x3F81),
            (-3, 0xC040), (.infinity, 0x7F80), (Float.greatestFiniteMagnitude, 0x7F80), (0x1p-133, 0x0001),
        ]
        for (f, h) in cases { #expect(ra_fp32_to_bf16(f) == h, "\(f)") }
        let nan = ra_fp32_to_bf16(Float(bitPattern: 0x7F80_0001))   // signalling NaN with a low payload
        #expect(ra_bf16_to_fp32(nan).isNaN && (nan & 0x40) != 0)
    }
}

@Suite("activation quantization")
struct QuantizationTests {
    private func blocks(_ n: Int, seed: UInt64) -> [Float] {
        var rng = SeededRandom(seed: seed)
        var x = (0..<n).map { _ in rng.float(in: -1...1) }
        // blocks with very different magnitudes, an all-zero block and a single spike
        for i in 0..<n { x[i] *= [1, 1e-3, 1e3, 0, 1e-20, 3e4][(i / 256) % 6] }
        x[300] = 9000
        return x
    }

    @Test("Q8_0 and Q8_1: error at most half a step, |q| <= 127, the largest element maps to ±127")
    func q8_0and1() throws {
        let x = blocks(1536, seed: 1)
        for type in [KType.q8_0, .q8_1] {
            let q = Kernels.quantize(type, x)
            let y = Kernels.dequantize(type, q, count: x.count)
            let bb = type.blockBytes, qs = type.name == "Q8_0" ? 2 : 4
            for b in 0..<(x.count / 32) {
                let xb = x[(32 * b)..<(32 * b + 32)]
                let amax = xb.map { abs($0) }.max() ?? 0
                let d = q.half(at: bb * b)
                // the stored scale is amax/127 rounded to half precision
                #expect(d == ra_fp16_to_fp32(ra_fp32_to_fp16(amax / 127)))
                var sum = 0
                for j in 0..<32 {
                    let v = Int(Int8(bitPattern: q[bb * b + qs + j]))
                    sum += v
                    #expect(abs(v) <= 127)
                    if abs(x[32 * b + j]) == amax && amax > 0 { #expect(abs(v) == 127) }
                    // half a step, plus what rounding the scale to half precision moves the largest level
                    let err = abs(y[32 * b + j] - x[32 * b + j])
                    #expect(err <= amax / 127 * 0.5001 + 127 * abs(d - amax / 127) + 1e-35, "block \(b) element \(j)")
                }
                if type.name == "Q8_1" {
                    // s = d * sum(q) in half precision, with d before rounding (it underflows or
                    // overflows to inf exactly where ggml's does)
                    let s = q.half(at: bb * b + 2)
                    let want = ra_fp16_to_fp32(ra_fp32_to_fp16((amax / 127) * Float(sum)))
                    #expect(s == want, "Q8_1 block \(b) sum")
                }
            }
        }
    }

    @Test("Q8_0, Q8_1 and Q8_K activations: every SIMD path writes the scalar path's bytes (ties, zero blocks, -0, tiny and huge scales, NaN and infinities)")
    func q8SamePathsBytes() {
        var x = blocks(2048, seed: 5)
        for i in 1600..<1664 { x[i] = Float(Int(i % 255) - 127) * 0.5 }   // halves: ties to even
        x[1700] = -0.0
        // a NaN in one block, infinities in another (an activation that blew up): every path gives those elements 0
        // (the AVX2 conversion alone would give -128, which the dots' sign tricks assume never comes)
        x[1800] = .nan
        x[1840] = .infinity
        x[1841] = -.infinity
        // Q8_K: a block of 256 whose largest magnitude comes twice with both signs (the first one sets the scale's sign)
        x[1024] = 9.5
        x[1100] = -9.5
        for type in [KType.q8_0, .q8_1, .q8_K] {
            let want = KPath.scalar.run { Kernels.quantize(type, x) }
            for path in KPath.simd {
                #expect(path.run { Kernels.quantize(type, x) } == want, "\(type) on \(path)")
            }
        }
    }

    @Test("Q8_0 rounds halves to even, as ggml's x86 CPU backend")
    func q8_0RoundsHalfToEven() {
        var x = [Float](repeating: 0, count: 32)
        x[0] = 127                                 // multiplier 127/127 = 1
        x[1] = 2.5; x[2] = 3.5; x[3] = -2.5; x[4] = 0.5; x[5] = -1.5
        let q = Kernels.quantize(.q8_0, x)
        #expect(q[2..<8].map { Int8(bitPattern: $0) } == [127, 2, 4, -2, 0, -2])
    }

    @Test("Q8_K: scale -max/127, half-to-even rounding, block sums of 16, zero blocks stay zero")
    func q8_K() {
        let x = blocks(1536, seed: 2)
        let q = Kernels.quantize(.q8_K, x)
        let y = Kernels.dequantize(.q8_K, q, count: x.count)
        for b in 0..<(x.count / 256) {
            let base = 292 * b
            let xb = Array(x[(256 * b)..<(256 * b + 256)])
            let amax = xb.map { abs($0) }.max() ?? 0
            let d = q.float(at: base)
            if amax == 0 { #expect(d == 0) }
            for g in 0..<16 {
                let s = (0..<16).reduce(0) { $0 + Int(Int8(bitPattern: q[base + 4 + 16 * g + $1])) }
                #expect(Int(q.int16(at: base + 260 + 2 * g)) == s, "block \(b) group \(g)")
            }
            for j in 0..<256 {
                #expect(abs(y[256 * b + j] - xb[j]) <= abs(d) * 0.5001, "block \(b) element \(j)")
            }
        }
        var h = [Float](repeating: 0, count: 256)
        h[0] = 127; h[1] = 2.5; h[2] = -3.5; h[3] = 0.5
        let qh = Kernels.quantize(.q8_K, h)
        #expect(qh.float(at: 0) == -1)
        #expect(qh[4..<8].map { Int8(bitPattern: $0) } == [-127, -2, 4, 0])
    }

    @Test("F16 and BF16 activations keep the float within half a unit in the last place")
    func halfActivations() {
        var rng = SeededRandom(seed: 3)
        let x = (0..<1000).map { _ in rng.float(in: -1000...1000) }
        let h = Kernels.dequantize(.f16, Kernels.quantize(.f16, x), count: x.count)
        let b = Kernels.dequantize(.bf16, Kernels.quantize(.bf16, x), count: x.count)
        for i in x.indices {
            #expect(abs(h[i] - x[i]) <= abs(x[i]) * 0x1p-11 + 0x1p-25)
            #expect(abs(b[i] - x[i]) <= abs(x[i]) * 0x1p-8)
        }
    }

    @Test("Q4_0, Q4_1, Q5_0, Q5_1 quantize within a step (half a step for the asymmetric ones)")
    func simpleWeightFormats() {
        var rng = SeededRandom(seed: 4)
        let x = (0..<1024).map { _ in rng.float(in: -3...5) }
        for (type, levels) in [(KType.q4_0, Float(8)), (.q4_1, 15), (.q5_0, 16), (.q5_1, 31)] {
            let y = Kernels.dequantize(type, Kernels.quantize(type, x), count: x.count)
            for b in 0..<32 {
                let xb = x[(32 * b)..<(32 * b + 32)]
                let lo = xb.min() ?? 0, hi = xb.max() ?? 0
                let amax = max(abs(lo), abs(hi))
                let step = type.name.hasSuffix("_0") ? amax / levels : (hi - lo) / levels
                for j in 0..<32 {
                    // symmetric formats clip the top level (-max maps to 7/8 or 15/16 of it): up to one step
                    let allowed = type.name.hasSuffix("_0") ? step : step * 0.5
                    #expect(abs(y[32 * b + j] - x[32 * b + j]) <= allowed + amax * 0x1p-9, "\(type) block \(b)")
                }
            }
        }
    }

    @Test("ra_quantize_row leaves the output alone for types it cannot write and ragged lengths")
    func rejectsUnsupported() {
        let x = [Float](repeating: 1, count: 256)
        for type in [KType.q4_K, .q5_K, .q6_K] {
            #expect(ra_quantize_supported(type.id) == 0)
            #expect(Kernels.quantize(type, x).allSatisfy { $0 == 0 })
        }
        var out = [UInt8](repeating: 0xAB, count: 64)
        x.withUnsafeBufferPointer { xp in out.withUnsafeMutableBytes { ra_quantize_row(KType.q8_0.id, xp.baseAddress, $0.baseAddress, 33) } }
        #expect(out.allSatisfy { $0 == 0xAB })
    }
}
