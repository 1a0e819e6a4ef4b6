import CKernels
import Foundation
import Testing
@testable import RunAnywhereGGUF

/// Float ops of ra_ops.h against straightforward double-precision versions.
@Suite("Engine float ops")
struct EngineOpsTests {
    private func randoms(_ n: Int, seed: UInt64, scale: Float = 1) -> [Float] {
        var rng = Xoshiro256(seed: seed)
        return (0..<n).map { _ in (rng.nextUnitFloat() * 2 - 1) * scale }
    }

    @Test("attention over an F16 cache matches a direct computation (GQA, causal, several tokens, sliding window)",
          arguments: [(8, 1, 4, 0), (12, 2, 2, 0), (128, 2, 1, 0), (64, 7, 1, 0), (32, 3, 2, 0),
                      (32, 4, 1, 3), (8, 1, 4, 1), (16, 2, 2, 6), (32, 3, 2, 20),
                      (256, 3, 2, 0)])   // a group of 3: 4 tokens = 12 query rows a work item, at the widest rows
    func attention(headDim: Int, group: Int, kvHeads: Int, window: Int) throws {
        let heads = group * kvHeads, pos0 = 5, tokens = 4, nCtx = pos0 + tokens
        let kvDim = kvHeads * headDim, qDim = heads * headDim
        let q = randoms(tokens * qDim, seed: 1)
        let kf = randoms(nCtx * kvDim, seed: 2), vf = randoms(nCtx * kvDim, seed: 3)
        let k = kf.map { ra_ops_f32_to_f16($0) }, v = vf.map { ra_ops_f32_to_f16($0) }
        let scale = 1 / Float(headDim).squareRoot()
        // On 1 and 2 threads: the scratch ra_attention_scratch_floats asks for, then a tail it must leave alone (a
        // work item's query rows outgrowing the size it budgets would write there; on 1 thread deterministically).
        func attend(threads: Int32) throws -> [Float] {
            var out = [Float](repeating: .nan, count: tokens * qDim)
            let pool = try #require(ra_pool_create(threads))
            defer { ra_pool_destroy(pool) }
            let need = Int(ra_attention_scratch_floats(threads, Int64(nCtx), Int64(headDim), Int64(heads))), tail = 4096
            var scratch = [Float](repeating: 0, count: need + tail)
            for i in need..<(need + tail) { scratch[i] = 1234.5 }
            q.withUnsafeBufferPointer { qp in k.withUnsafeBufferPointer { kp in v.withUnsafeBufferPointer { vp in
                out.withUnsafeMutableBufferPointer { op in scratch.withUnsafeMutableBufferPointer { sp in
                    var p = ra_attention_params(q: qp.baseAddress, q_stride: Int64(qDim), k: kp.baseAddress, v: vp.baseAddress,
                                                kv_stride: Int64(kvDim), out: op.baseAddress, out_stride: Int64(qDim),
                                                n_tokens: Int64(tokens), pos0: Int64(pos0), window: Int64(window), n_head: Int64(heads),
                                                n_head_kv: Int64(kvHeads), head_dim: Int64(headDim), scale: scale,
                                                scratch: sp.baseAddress, kv_head_stride: 0)
                    ra_attention(pool, &p)
                } }
            } } }
            #expect(scratch[need...].allSatisfy { $0 == 1234.5 }, "\(threads) threads: ra_attention wrote past the scratch it asked for")
            return out
        }
        let out = try attend(threads: 1)
        #expect(try attend(threads: 2) == out, "2 threads give other bits than 1")
        var worst = 0.0
        for t in 0..<tokens {
            for h in 0..<heads {
                let g = h / group, n = pos0 + t + 1
                let first = window > 0 ? max(0, n - window) : 0     // positions (p - window, p] only
                var s = [Double](repeating: -Double.infinity, count: n)
                for j in first..<n {
                    s[j] = 0
                    for d in 0..<headDim {
                        s[j] += Double(q[t * qDim + h * headDim + d]) * Double(ra_ops_f16_to_f32(k[j * kvDim + g * headDim + d]))
                    }
                    s[j] *= Double(scale)
                }
                let m = s.max() ?? 0
                let e = s.map { Foundation.exp($0 - m) }
                let sum = e.reduce(0, +)
                for d in 0..<headDim {
                    var o = 0.0
                    for j in 0..<n { o += e[j] / sum * Double(ra_ops_f16_to_f32(v[j * kvDim + g * headDim + d])) }
                    worst = max(worst, abs(o - Double(out[t * qDim + h * headDim + d])))
                }
            }
        }
        // q and the probabilities are rounded to F16 (as ggml): errors of a few 1e-4 on outputs of magnitude ~0.5.
        #expect(worst < 2e-3, "max |error| \(worst)")
    }

    @Test("RoPE rotates interleaved pairs (normal) or halves (NeoX) by pos · base^(-2i/n)", arguments: [false, true])
    func rope(neox: Bool) {
        let headDim = 16, heads = 3, rows = 2, nDims = 12
        var x = randoms(rows * heads * headDim, seed: 5)
        let original = x
        let positions: [Int32] = [0, 7]
        x.withUnsafeMutableBufferPointer { xp in
            positions.withUnsafeBufferPointer { pp in
                ra_rope(nil, xp.baseAddress, Int64(rows), Int64(heads * headDim), Int64(heads), Int64(headDim), pp.baseAddress,
                        Int32(nDims), 10_000, 1, nil, neox ? 1 : 0)
            }
        }
        var worst: Float = 0
        for r in 0..<rows {
            for h in 0..<heads {
                let base = r * heads * headDim + h * headDim
                for i in 0..<(nDims / 2) {
                    let theta = Double(positions[r]) * pow(10_000, -2 * Double(i) / Double(nDims))
                    let (a, b) = neox ? (base + i, base + i + nDims / 2) : (base + 2 * i, base + 2 * i + 1)
                    let x0 = Double(original[a]), x1 = Double(original[b])
                    worst = max(worst, Float(abs(x0 * cos(theta) - x1 * sin(theta) - Double(x[a]))))
                    worst = max(worst, Float(abs(x0 * sin(theta) + x1 * cos(theta) - Double(x[b]))))
                }
                for d in nDims..<headDim { #expect(x[base + d] == original[base + d]) }   // beyond n_dims: untouched
            }
        }
        #expect(worst < 1e-5)
    }

    @Test("RoPE from ra_rope_table's angles (computed once per pass) equals ra_rope bit for bit", arguments: [false, true])
    func ropeTable(neox: Bool) {
        let headDim = 64, heads = 5, rows = 4, nDims = 48
        let x = randoms(rows * heads * headDim, seed: 11, scale: 4)
        let positions: [Int32] = [0, 3, 1000, 70_000]
        let factors = (0..<(nDims / 2)).map { 1 + Float($0) / 8 }
        var direct = x, cached = x
        var table = [Float](repeating: .nan, count: rows * nDims)
        ra_rope(nil, &direct, Int64(rows), Int64(heads * headDim), Int64(heads), Int64(headDim), positions, Int32(nDims),
                500_000, 0.25, factors, neox ? 1 : 0)
        ra_rope_table(positions, Int64(rows), Int32(nDims), Int64(headDim), 500_000, 0.25, factors, &table)
        ra_rope_cached(nil, &cached, Int64(rows), Int64(heads * headDim), Int64(heads), Int64(headDim), Int32(nDims), table,
                       neox ? 1 : 0)
        #expect(cached.map(\.bitPattern) == direct.map(\.bitPattern))
        #expect(cached != x)
    }

    @Test("RMSNorm with weight, per row and per head")
    func rmsNorm() {
        let n = 40, rows = 3
        let x = randoms(n * rows, seed: 8, scale: 3), w = randoms(n, seed: 9)
        var y = [Float](repeating: 0, count: n * rows)
        ra_rms_norm(nil, x, w, &y, Int64(n), Int64(rows), 1e-5)
        var heads = x
        ra_rms_norm_heads(nil, &heads, Array(w[0..<10]), Int64(rows), Int64(n), 4, 10, 1e-5)
        for r in 0..<rows {
            let row = x[(r * n)..<((r + 1) * n)].map(Double.init)
            let scale = 1 / (row.map { $0 * $0 }.reduce(0, +) / Double(n) + 1e-5).squareRoot()
            for i in 0..<n { #expect(abs(Double(y[r * n + i]) - row[i] * scale * Double(w[i])) < 1e-5) }
            for h in 0..<4 {
                let seg = row[(h * 10)..<(h * 10 + 10)]
                let s = 1 / (seg.map { $0 * $0 }.reduce(0, +) / 10 + 1e-5).squareRoot()
                for i in 0..<10 {
                    #expect(abs(Double(heads[r * n + h * 10 + i]) - seg[seg.startIndex + i] * s * Double(w[i])) < 1e-5)
                }
            }
        }
    }

    @Test("SwiGLU, residual add, softmax and half conversions")
    func elementwise() {
        var gate: [Float] = [-2, 0, 1, 3], up: [Float] = [1, 2, 3, 4]
        ra_silu_mul(nil, &gate, up, 4)
        for (i, g) in [Float(-2), 0, 1, 3].enumerated() {
            #expect(abs(gate[i] - g / (1 + Foundation.exp(-g)) * up[i]) < 1e-6)
        }
        var y: [Float] = [1, 2], add: [Float] = [0.5, -1]
        ra_add(nil, &y, add, 2)
        #expect(y == [1.5, 1])
        var s: [Float] = [1, 2, 3, 1000]
        ra_softmax(&s, 3)
        #expect(abs(s[0] + s[1] + s[2] - 1) < 1e-6 && s[2] > s[1] && s[3] == 1000)
        #expect(ra_ops_f32_to_f16(1) == 0x3C00 && ra_ops_f32_to_f16(65520) == 0x7C00 && ra_ops_f16_to_f32(0x0001) == 0x1p-24)
    }
}
