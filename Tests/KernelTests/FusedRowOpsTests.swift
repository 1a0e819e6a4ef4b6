import CKernels
import Testing

/// The row-wise steps of a batch fused into one pass over its rows (ops_rows.c) against the separate ops run one
/// after the other, row by row as a decode step runs them: a prompt must equal token-by-token decoding bit for bit.
@Suite("fused row ops: residual add + RMSNorm + quantization, GLU + quantization")
struct FusedRowOpsTests {
    /// body(a's storage) when `use`, else body(nil).
    private static func optional<R>(_ a: [Float], _ use: Bool, _ body: (UnsafePointer<Float>?) -> R) -> R {
        use ? a.withUnsafeBufferPointer { body($0.baseAddress) } : body(nil)
    }

    private static func bits(_ x: [Float]) -> [UInt32] { x.map(\.bitPattern) }

    private static func randomRows(_ rows: Int, _ n: Int, _ rng: inout SeededRandom, scale: Float) -> [Float] {
        (0..<rows * n).map { i in
            // a zero row, a row of huge values and one of tiny ones among random rows
            switch i / n % 7 {
            case 3: 0
            case 5: rng.float(in: -1...1) * 3e18
            case 6: rng.float(in: -1...1) * 1e-19
            default: rng.float(in: -scale...scale)
            }
        }
    }

    @Test("ra_add_rms_norm_quant (2-thread pool) equals ra_rms_norm of the added rows, ra_add, ra_rms_norm and ra_quantize_row per row, bit for bit, on every path",
          arguments: [(1, 576, Int32(RA_Q8_1)), (3, 576, Int32(RA_Q8_0)), (8, 64, Int32(RA_Q8_1)), (11, 576, Int32(RA_Q8_1)),
                      (70, 576, Int32(RA_Q8_1)), (13, 37, -1), (9, 70, Int32(RA_F32))] as [(Int, Int, Int32)])
    func addNormQuant(rows: Int, n: Int, qtype: Int32) throws {
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        var rng = SeededRandom(seed: UInt64(rows * 1000 + n))
        let x0 = Self.randomRows(rows, n, &rng, scale: 3)
        let add0 = Self.randomRows(rows, n, &rng, scale: 50)
        let w = (0..<n).map { _ in rng.float(in: -2...2) }
        let postW = (0..<n).map { _ in rng.float(in: 0...3) }
        let eps: Float = 1e-5
        let rowBytes = qtype >= 0 ? Int(ra_row_bytes(qtype, Int64(n))) : 0
        for path in [KPath.scalar] + KPath.simd {
            for (adding, post, weight) in [(false, false, true), (true, false, true), (true, true, true), (true, false, false)] {
                // Reference: the separate ops, one row at a time.
                var x = x0, add = add0, y = [Float](repeating: 0, count: rows * n)
                var q = [UInt8](repeating: 0, count: rows * rowBytes)
                path.run {
                    for r in 0..<rows {
                        x.withUnsafeMutableBufferPointer { xp in
                            add.withUnsafeMutableBufferPointer { ap in
                                y.withUnsafeMutableBufferPointer { yp in
                                    let xr = xp.baseAddress! + r * n, ar = ap.baseAddress! + r * n, yr = yp.baseAddress! + r * n
                                    if adding {
                                        if post { ra_rms_norm(nil, ar, postW, ar, Int64(n), 1, eps) }
                                        ra_add(nil, xr, ar, Int64(n))
                                    }
                                    Self.optional(w, weight) { ra_rms_norm(nil, xr, $0, yr, Int64(n), 1, eps) }
                                    if qtype >= 0 {
                                        q.withUnsafeMutableBytes { ra_quantize_row(qtype, yr, $0.baseAddress! + r * rowBytes, Int64(n)) }
                                    }
                                }
                            }
                        }
                    }
                }
                var fx = x0, fadd = add0, fy = [Float](repeating: 0, count: rows * n)
                var fq = [UInt8](repeating: 0, count: rows * rowBytes)
                path.run {
                    fq.withUnsafeMutableBytes { qp in
                        fadd.withUnsafeMutableBufferPointer { ap in
                            Self.optional(postW, post) { pw in
                                Self.optional(w, weight) { wp in
                                    ra_add_rms_norm_quant(pool, &fx, adding ? ap.baseAddress : nil, pw, wp, &fy, Int64(n), Int64(rows), eps,
                                                          qtype, qtype >= 0 ? qp.baseAddress : nil)
                                }
                            }
                        }
                    }
                }
                let what = "\(path) rows \(rows) n \(n) add \(adding) post \(post) w \(weight)"
                #expect(Self.bits(fx) == Self.bits(x), "x: \(what)")
                #expect(Self.bits(fadd) == Self.bits(add), "added rows: \(what)")
                #expect(Self.bits(fy) == Self.bits(y), "normalised rows: \(what)")
                #expect(fq == q, "quantised rows: \(what)")
            }
        }
    }

    @Test("ra_rms_norm_heads (2-thread pool, 8 heads' sums side by side) equals ra_rms_norm of each head, bit for bit, on every path",
          arguments: [(70, 4, 256), (1, 4, 256), (3, 9, 64), (11, 3, 36)] as [(Int, Int, Int)])
    func normHeads(rows: Int, heads: Int, headDim: Int) throws {
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        var rng = SeededRandom(seed: UInt64(rows * 31 + heads * headDim))
        let stride = heads * headDim + 5   // rows wider than their heads
        let x0 = Self.randomRows(rows, stride, &rng, scale: 4)
        let w = (0..<headDim).map { _ in rng.float(in: -2...2) }
        let eps: Float = 1e-6
        for path in [KPath.scalar] + KPath.simd {
            var want = x0, got = x0
            path.run {
                want.withUnsafeMutableBufferPointer { xp in
                    for r in 0..<rows {
                        for h in 0..<heads {
                            let head = xp.baseAddress! + r * stride + h * headDim
                            ra_rms_norm(nil, head, w, head, Int64(headDim), 1, eps)
                        }
                    }
                }
                ra_rms_norm_heads(pool, &got, w, Int64(rows), Int64(stride), Int64(heads), Int64(headDim), eps)
            }
            #expect(Self.bits(got) == Self.bits(want), "\(path) rows \(rows) heads \(heads) × \(headDim)")
        }
    }

    @Test("ra_glu_quant (2-thread pool) equals ra_silu_mul / scalar ra_gelu_mul and ra_quantize_row per row, bit for bit, on every path",
          arguments: [(1, 1536, Int32(RA_Q8_1)), (70, 96, Int32(RA_Q8_1)), (5, 100, -1), (3, 333, -1), (17, 64, Int32(RA_Q8_0))] as [(Int, Int, Int32)])
    func gluQuant(rows: Int, n: Int, qtype: Int32) throws {
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        var rng = SeededRandom(seed: UInt64(rows * 7 + n))
        // GELU's edges (±10, F16 overflow, subnormals, signed zero, infinities) among random values
        let edges: [Float] = [.nan, -.nan, 10, -10, 9.999, -9.999, 65519, 65520, -70000, 1e-6, -3e-8, 0, -0.0, .infinity, -.infinity, 0x1p-25]
        let g0 = (0..<rows * n).map { i in i % 11 == 5 ? edges[i / 11 % edges.count] : rng.float(in: -12...12) }
        let u = (0..<rows * n).map { _ in rng.float(in: -3...3) }
        let rowBytes = qtype >= 0 ? Int(ra_row_bytes(qtype, Int64(n))) : 0
        for path in [KPath.scalar] + KPath.simd {
            for gelu in [false, true] {
                var g = g0
                var q = [UInt8](repeating: 0, count: rows * rowBytes)
                // GeGLU's reference runs on the scalar path: every SIMD path must give the scalar loop's bits (SwiGLU's
                // AVX2 exp is its own, so its reference is the path's ra_silu_mul); the quantization is the path's.
                (gelu ? KPath.scalar : path).run {
                    g.withUnsafeMutableBufferPointer { gp in
                        u.withUnsafeBufferPointer { up in
                            for r in 0..<rows {
                                let gr = gp.baseAddress! + r * n, ur = up.baseAddress! + r * n
                                if gelu { ra_gelu_mul(nil, gr, ur, Int64(n)) } else { ra_silu_mul(nil, gr, ur, Int64(n)) }
                            }
                        }
                    }
                }
                if qtype >= 0 {
                    path.run {
                        g.withUnsafeMutableBufferPointer { gp in
                            for r in 0..<rows {
                                q.withUnsafeMutableBytes { ra_quantize_row(qtype, gp.baseAddress! + r * n, $0.baseAddress! + r * rowBytes, Int64(n)) }
                            }
                        }
                    }
                }
                var fg = g0
                var fq = [UInt8](repeating: 0, count: rows * rowBytes)
                path.run {
                    fq.withUnsafeMutableBytes { qp in
                        ra_glu_quant(pool, &fg, u, Int64(n), Int64(rows), gelu ? 1 : 0, qtype, qtype >= 0 ? qp.baseAddress : nil)
                    }
                }
                let what = "\(path) rows \(rows) n \(n) gelu \(gelu)"
                #expect(Self.bits(fg) == Self.bits(g), "gated rows: \(what)")
                #expect(fq == q, "quantised rows: \(what)")
            }
        }
    }
}
