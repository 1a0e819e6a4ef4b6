import CKernels
import Foundation
import Testing

/// The element-wise ops of ra_ops.h that have SIMD code on some paths, on every path this CPU runs.
@Suite("element-wise ops on every CPU path")
struct ElementwisePathTests {
    @Test("SwiGLU (silu(g) · u) within 2 ulp-ish of the double-precision formula, across lengths and the exp's range")
    func siluMul() {
        var rng = SeededRandom(seed: 41)
        let n = 1003   // not a multiple of 8: the vector loop and its scalar tail
        let g = (0..<n).map { i in i % 97 == 0 ? Float([-120, -90, 0, 90, -0.0][i / 97 % 5]) : rng.float(in: -30...30) }
        let u = (0..<n).map { _ in rng.float(in: -2...2) }
        for path in [KPath.scalar] + KPath.simd {
            var y = g
            path.run { ra_silu_mul(nil, &y, u, Int64(n)) }
            for i in 0..<n {
                let want = Double(g[i]) / (1 + Foundation.exp(-Double(g[i]))) * Double(u[i])
                #expect(abs(Double(y[i]) - want) <= abs(want) * 1e-6 + 1e-30, "\(path) g=\(g[i]) u=\(u[i]): \(y[i]) vs \(want)")
            }
        }
    }

    @Test("F16 stores of K/V rows equal ra_ops_f32_to_f16 bit for bit (ties, subnormals, overflow, signed zero)")
    func storeF16Rows() {
        var rng = SeededRandom(seed: 42)
        var x = (0..<517).map { _ in rng.float(in: -70000...70000) * [1, 1e-3, 1e-6, 1e-9][Int.random(in: 0..<4, using: &rng)] }
        x[0] = -0.0; x[1] = 65519; x[2] = 65520; x[3] = 0x1p-25; x[4] = 0x1.8p-24; x[5] = 1 + 0x1p-11; x[6] = .infinity
        let rows = 3, n = 150, srcStride = 170, dstStride = 160
        for path in [KPath.scalar] + KPath.simd {
            var out = [UInt16](repeating: 0xFFFF, count: rows * dstStride)
            path.run { ra_store_f16_rows(x, Int64(srcStride), &out, Int64(dstStride), Int64(n), Int64(rows)) }
            for r in 0..<rows {
                for i in 0..<dstStride {
                    let want = i < n ? ra_ops_f32_to_f16(x[r * srcStride + i]) : 0xFFFF
                    #expect(out[r * dstStride + i] == want, "\(path) row \(r) element \(i)")
                }
            }
        }
    }
}
