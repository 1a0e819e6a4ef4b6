import CKernels
import Foundation
import Testing
@testable import RunAnywhereGGUF
import RunAnywhereTestSupport

/// Decode attention over long caches, where ra_attention splits each kv head into chunks of 256 positions and merges
/// their softmax parts (flash-decoding), on every kernel path and in both cache layouts.
@Suite("Engine decode attention over long caches")
struct EngineAttentionTests {
    /// One case: head dim, query heads per kv head, kv heads, cached positions (the token attends to all of them),
    /// sliding window (0: none).
    struct Case: Sendable, CustomTestStringConvertible {
        let headDim, group, kvHeads, positions, window: Int
        var testDescription: String { "hd \(headDim), \(group)×\(kvHeads) heads, \(positions) positions, window \(window)" }
    }

    static let cases = [
        Case(headDim: 128, group: 2, kvHeads: 2, positions: 1500, window: 0),   // 6 chunks, the last one short
        Case(headDim: 64, group: 3, kvHeads: 1, positions: 5000, window: 0),    // 20 chunks; groups of 2 + 1 rows
        Case(headDim: 256, group: 4, kvHeads: 1, positions: 2100, window: 512), // a window that starts mid-chunk; 2 chunks, heads split on 2 and 3 threads
        Case(headDim: 8, group: 1, kvHeads: 2, positions: 700, window: 300),
        Case(headDim: 12, group: 2, kvHeads: 1, positions: 600, window: 0),     // head dim % 8 ≠ 0: scalar code
        Case(headDim: 32, group: 2, kvHeads: 2, positions: 200, window: 0),     // one chunk: one pass
        // SmolLM2's shape over one chunk: on 2 and 3 threads each query head is an item (groups split), on 1 not
        Case(headDim: 64, group: 3, kvHeads: 3, positions: 80, window: 0),
        // Positions that leave 1-3 rows after the score kernels' runs of 2 or 4 rows, in one chunk and in the last
        Case(headDim: 64, group: 3, kvHeads: 3, positions: 83, window: 0),
        Case(headDim: 256, group: 4, kvHeads: 1, positions: 1283, window: 0),
        Case(headDim: 128, group: 1, kvHeads: 2, positions: 259, window: 0),
    ]

    /// A cache: K and V as F16 in one of the two layouts, and the query of one token.
    struct Inputs {
        let c: Case
        let q: [Float]
        let k, v: [UInt16]          // position-major: position p, head g at p × kvDim + g × hd
        var kvDim: Int { c.kvHeads * c.headDim }

        init(_ c: Case) {
            self.c = c
            var rng = Xoshiro256(seed: UInt64(c.headDim * 7919 + c.positions))
            func uniform(_ n: Int, _ scale: Float) -> [Float] { (0..<n).map { _ in (rng.nextUnitFloat() * 2 - 1) * scale } }
            let qDim = c.group * c.kvHeads * c.headDim, kvDim = c.kvHeads * c.headDim
            q = uniform(qDim, 2)
            var kf = uniform(c.positions * kvDim, 2)
            // Peaks in a late chunk and in the first: each chunk's softmax max differs from the row's, so a merge
            // that did not rescale the chunks' sums by e^(chunk max - row max) would be far off.
            for (p, strength) in [(c.positions * 3 / 4, Float(3)), (c.positions / 5, Float(2))] {
                for g in 0..<c.kvHeads {
                    for d in 0..<c.headDim { kf[p * kvDim + g * c.headDim + d] = q[g * c.group * c.headDim + d] * strength }
                }
            }
            k = kf.map { ra_ops_f32_to_f16($0) }
            v = uniform(c.positions * kvDim, 1).map { ra_ops_f32_to_f16($0) }
        }

        /// The cache in head-major layout: head g's rows one after the other, `capacity` positions per head.
        func headMajor(_ cache: [UInt16], capacity: Int) -> [UInt16] {
            var out = [UInt16](repeating: 0, count: capacity * kvDim)
            for p in 0..<c.positions {
                for g in 0..<c.kvHeads {
                    for d in 0..<c.headDim { out[g * capacity * c.headDim + p * c.headDim + d] = cache[p * kvDim + g * c.headDim + d] }
                }
            }
            return out
        }

        /// ggml's non-flash attention in double precision: q rounded to F16, softmax of scale × q·k over the window,
        /// the probabilities rounded to F16, their sum of V.
        func reference() -> [Double] {
            let hd = c.headDim, scale = 1 / Double(Float(hd).squareRoot())
            let first = c.window > 0 ? max(0, c.positions - c.window) : 0
            var out = [Double](repeating: 0, count: c.group * c.kvHeads * hd)
            for h in 0..<(c.group * c.kvHeads) {
                let g = h / c.group
                let qh = (0..<hd).map { Double(ra_ops_f16_to_f32(ra_ops_f32_to_f16(q[h * hd + $0]))) }
                let s = (first..<c.positions).map { p in
                    (0..<hd).reduce(0.0) { $0 + qh[$1] * Double(ra_ops_f16_to_f32(k[p * kvDim + g * hd + $1])) } * scale
                }
                let m = s.max() ?? 0
                let e = s.map { Foundation.exp($0 - m) }
                let sum = e.reduce(0, +)
                for (i, p) in (first..<c.positions).enumerated() {
                    let w = Double(ra_ops_f16_to_f32(ra_ops_f32_to_f16(Float(e[i] / sum))))
                    for d in 0..<hd { out[h * hd + d] += w * Double(ra_ops_f16_to_f32(v[p * kvDim + g * hd + d])) }
                }
            }
            return out
        }
    }

    /// ra_attention for the one token at position `positions - 1`, on a pool of `threads`.
    static func attend(_ x: Inputs, headMajor: Bool, threads: Int) throws -> [Float] {
        let c = x.c, hd = c.headDim, qDim = c.group * c.kvHeads * hd
        let capacity = c.positions + 3                 // the cache holds more positions than are filled
        let (k, v) = headMajor ? (x.headMajor(x.k, capacity: capacity), x.headMajor(x.v, capacity: capacity)) : (x.k, x.v)
        let pool = try #require(ra_pool_create(Int32(threads)))
        defer { ra_pool_destroy(pool) }
        var scratch = [Float](repeating: .nan, count: Int(ra_attention_scratch_floats(Int32(threads), Int64(capacity), Int64(hd),
                                                                                        Int64(c.group * c.kvHeads))))
        var out = [Float](repeating: .nan, count: qDim)
        x.q.withUnsafeBufferPointer { qp in k.withUnsafeBufferPointer { kp in v.withUnsafeBufferPointer { vp in
            out.withUnsafeMutableBufferPointer { op in scratch.withUnsafeMutableBufferPointer { sp in
                var p = ra_attention_params(q: qp.baseAddress, q_stride: Int64(qDim), k: kp.baseAddress, v: vp.baseAddress,
                                            kv_stride: Int64(headMajor ? hd : x.kvDim), out: op.baseAddress, out_stride: Int64(qDim),
                                            n_tokens: 1, pos0: Int64(c.positions - 1), window: Int64(c.window),
                                            n_head: Int64(c.group * c.kvHeads), n_head_kv: Int64(c.kvHeads), head_dim: Int64(hd),
                                            scale: 1 / Float(hd).squareRoot(), scratch: sp.baseAddress,
                                            kv_head_stride: headMajor ? Int64(capacity * hd) : 0)
                ra_attention(pool, &p)
            } }
        } } }
        return out
    }

    @Test("split decode (chunks of the cache; query heads of a group as items of their own when kv heads × chunks are fewer than two per thread) matches one softmax over the whole row, in both layouts, bit-identical for 1, 2 and 3 threads",
          arguments: cases, KernelPath.available)
    func splitMatchesWholeRow(c: Case, path: KernelPath) throws {
        let x = Inputs(c)
        let reference = x.reference()
        let peak = reference.map(abs).max() ?? 1
        try path.run {
            let base = try Self.attend(x, headMajor: false, threads: 1)
            var worst = 0.0
            for (o, r) in zip(base, reference) { worst = max(worst, abs(Double(o) - r)) }
            // What is left is float rounding of the scores and sums and the odd probability whose F16 rounding
            // flips: measured up to 9e-6 of the largest output (the window case); a chunk merged with a wrong max is off by far more.
            #expect(worst <= 5e-5 * peak, "\(path): max |error| \(worst) of outputs up to \(peak)")
            for threads in [1, 2, 3] {
                #expect(try Self.attend(x, headMajor: true, threads: threads) == base, "\(path): head-major, \(threads) threads")
                if threads > 1 { #expect(try Self.attend(x, headMajor: false, threads: threads) == base, "\(path): \(threads) threads") }
            }
        }
    }
}
