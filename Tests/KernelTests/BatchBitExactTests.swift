import CKernels
import Testing

extension DotProductTests {
    /// The block types whose batches are bit-identical to the single-row dot on every path.
    static let bitExactBatchTypes = [KType.q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q2_K, .q3_K, .q4_K, .q5_K, .q6_K, .iq4_NL, .iq4_XS]
    /// The types of 32-element blocks (the AVX2 panels that take the activation scales as floats).
    static let b32Types = [KType.q4_0, .q4_1, .q5_0, .q5_1, .q8_0]

    /// Whether the batches of `t` sum each activation row in exactly the order of the path's single-row dot: on
    /// scalar (it loops the dot), and on every SIMD path for the block types. On x86 the dot, the multi-row kernels
    /// and the panels (the 8-row AVX2 ones, dot_avx2*.c and matmul_avx2*.c; with VNNI the 16-row Q8_0, Q4_K and Q6_K
    /// ones of dot_avx512_impl.h) add exact integer sums with the AVX2 dots' fma order; the AVX-512 paths take the
    /// AVX2 dots for the block types.
    static func batchesBitExact(_ t: KType, on path: KPath) -> Bool {
        bitExactBatchTypes.contains { $0.id == t.id }
    }

    @Test("Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS batches are bit-identical to the single-row dot on every path (a prompt equals token by token)",
          arguments: bitExactBatchTypes)
    func blockBatchesBitExact(_ t: KType) {
        var rng = SeededRandom(seed: 1919 + UInt64(t.id))
        let rows = 11, stride = rows + 2
        let wrb = t.rowBytes, xrb = t.dotType.rowBytes
        let paths = ([KPath.scalar] + KPath.simd).filter { Self.batchesBitExact(t, on: $0) }
        #expect(paths.count >= 1)
        // odd and even block counts (Q4_0's dot sums alternate blocks into two accumulators; Q8_0's reduces 4 blocks
        // at a time), 1...9 activation rows (the multi kernels and panels take 4 at a time), extreme scales and values
        // (n = 576: SmolLM2's rows, 18 blocks; the AVX2 4- and 5-bit decode kernels take two rows and a 2-block tail at
        // once; n = 640: Gemma 3's, 20 blocks, no tail. Decode (nb = 1) also takes odd and even row counts and a single
        // row: the two-row kernel, its one-row remainder, the one-row kernel alone.)
        // Every block gets its own scales: a kernel that paired one row's scales with another's blocks would fail.
        // Saturating data (every quant at the top of its range, activations all +1 or -1): integer sums at their
        // limits (a 5-bit kernel that kept 16 products in an int16 lane would overflow).
        var scaleRng = SeededRandom(seed: 4242 + UInt64(t.id))
        for n in t.blockSize == 32 ? [32, 64, 96, 224, 544, 576, 640] : [256, 512, 1280] {
            for data in ["random", "extreme", "saturating"] {
                let extreme = data == "extreme"
                var w = [UInt8]()
                if data == "saturating" {
                    w = panelData(t, n, rows: rows, nb: 0, round: 2, &rng).0
                } else {
                    for _ in 0..<rows {
                        w += Kernels.randomWeights(t, n, &rng, extreme: extreme) {
                            scaleRng.float(in: 0.001...0.05) * (Bool.random(using: &scaleRng) ? 1 : -1)
                        }
                    }
                }
                for nb in [1, 2, 3, 4, 5, 7, 9] {
                    var x = [UInt8]()
                    if data == "saturating" {
                        x = panelData(t, n, rows: 0, nb: nb, round: 2, &rng).1
                    } else {
                        for _ in 0..<nb { x += Kernels.randomActivations(t, n, &rng, extreme: extreme) }
                    }
                    for path in paths {
                        for (r0, r1) in nb == 1 ? [(0, rows), (2, 9), (1, 5), (3, 9), (4, 5)] : [(0, rows), (2, 9)] {
                            let out = matmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path)
                            for b in 0..<nb {
                                let xRow = Array(x[(b * xrb(n))..<((b + 1) * xrb(n))])
                                for r in 0..<stride {
                                    let got = out[b * stride + r]
                                    guard (r0..<r1).contains(r) else {
                                        #expect(got == -12345, "\(t) \(path) n=\(n) nb=\(nb): wrote outside at b=\(b) r=\(r)")
                                        continue
                                    }
                                    let want = path.run { Kernels.dot(t, n, w, xRow, wOffset: r * wrb(n)) }
                                    #expect(got.bitPattern == want.bitPattern,
                                            "\(t) \(path) n=\(n) \(data) nb=\(nb) b=\(b) r=\(r): \(got) vs dot \(want)")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

extension DotProductTests {
    @Test("ra_matmul_jobs over the pool (activation scales converted once per product, shared by jobs on the same activations) equals ra_matmul_rows bit for bit, batches and decode (nb = 1: the rows kernels take the scales too)",
          arguments: b32Types, [6, 1])
    func jobsShareActivationScales(_ t: KType, nb: Int) throws {
        var rng = SeededRandom(seed: 7177 + UInt64(t.id) + UInt64(nb))
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        // three products of the same activations (as q, k and v), then one of other activations with more columns
        let shapes = [(rows: 72, n: 160), (rows: 24, n: 160), (rows: 40, n: 160), (rows: 48, n: 320)]
        let extreme = nb == 1   // decode: the largest block sums (the signed 4- and 5-bit types take o · Σy off)
        let ws = shapes.map { s in (0..<s.rows).flatMap { _ in Kernels.randomWeights(t, s.n, &rng, extreme: extreme) } }
        let xa = (0..<nb).flatMap { _ in Kernels.randomActivations(t, 160, &rng, extreme: extreme) }
        let xb = (0..<nb).flatMap { _ in Kernels.randomActivations(t, 320, &rng, extreme: extreme) }
        // one buffer each for the weights, the activations and the outputs; jobs point into them
        let wAll = ws.flatMap { $0 }, xAll = xa + xb
        let wOff = ws.indices.map { i in ws[0..<i].reduce(0) { $0 + $1.count } }
        let xOff = [0, 0, 0, xa.count]
        let oOff = shapes.indices.map { i in shapes[0..<i].reduce(0) { $0 + $1.rows * nb } }
        for path in [KPath.scalar] + KPath.simd {
            var out = [Float](repeating: .nan, count: shapes.reduce(0) { $0 + $1.rows * nb })
            path.run {
                wAll.withUnsafeBytes { w in xAll.withUnsafeBytes { x in out.withUnsafeMutableBufferPointer { o in
                    let jobs = shapes.indices.map { i in
                        ra_matmul_job(weight_type: t.id, w: w.baseAddress! + wOff[i], n: Int64(shapes[i].n), rows: Int64(shapes[i].rows),
                                      x: x.baseAddress! + xOff[i], nb: Int64(nb), out: o.baseAddress! + oOff[i], out_stride: Int64(shapes[i].rows))
                    }
                    jobs.withUnsafeBufferPointer { ra_matmul_jobs(pool, $0.baseAddress, Int32($0.count)) }
                } } }
            }
            let outs = shapes.indices.map { i in Array(out[oOff[i]..<(oOff[i] + shapes[i].rows * nb)]) }
            for (i, s) in shapes.enumerated() {
                let want = matmulRows(t, s.n, ws[i], i == 3 ? xb : xa, nb: nb, stride: s.rows, 0, s.rows, on: path)
                #expect(outs[i].map(\.bitPattern) == want.map(\.bitPattern), "\(t) \(path) job \(i)")
            }
        }
    }

    @Test("Jobs of different types on the same activations each get the side data they need (a Q8_0 batch's int16 activations are not taken from a Q4_0 job's scales; IQ4_NL's and Q8_0's are shared; IQ4_XS's Q8_K side data is its own), bit for bit ra_matmul_rows",
          arguments: [0, 1])
    func jobsOfMixedTypesShareActivations(set: Int) throws {
        var rng = SeededRandom(seed: 4080 + UInt64(set))
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        // Q4_0, IQ4_NL, Q5_0 and Q8_0 all multiply Q8_0 activations: the Q4_0 job comes first (scales only), then IQ4_NL's
        // (scales and int16 rows, which the later Q8_0 and IQ4_NL jobs may share); Q4_K, Q6_K and IQ4_XS multiply Q8_K ones
        let types = set == 0 ? [KType.q4_0, KType.iq4_NL, KType.q5_0, KType.q8_0, KType.iq4_NL, KType.q8_0]
                             : [KType.q4_K, KType.iq4_XS, KType.q6_K, KType.iq4_XS]
        let n = set == 0 ? 192 : 512, rows = 40, nb = 7
        let x = (0..<nb).flatMap { _ in Kernels.randomActivations(types[0], n, &rng) }
        let ws = types.map { t in (0..<rows).flatMap { _ in Kernels.randomWeights(t, n, &rng) } }
        let wAll = ws.flatMap { $0 }
        let wOff = ws.indices.map { i in ws[0..<i].reduce(0) { $0 + $1.count } }
        for path in [KPath.scalar] + KPath.simd {
            var out = [Float](repeating: .nan, count: types.count * rows * nb)
            path.run {
                wAll.withUnsafeBytes { w in x.withUnsafeBytes { xp in out.withUnsafeMutableBufferPointer { o in
                    let jobs = types.indices.map { i in
                        ra_matmul_job(weight_type: types[i].id, w: w.baseAddress! + wOff[i], n: Int64(n), rows: Int64(rows),
                                      x: xp.baseAddress!, nb: Int64(nb), out: o.baseAddress! + i * rows * nb, out_stride: Int64(rows))
                    }
                    jobs.withUnsafeBufferPointer { ra_matmul_jobs(pool, $0.baseAddress, Int32($0.count)) }
                } } }
            }
            for (i, t) in types.enumerated() {
                let want = matmulRows(t, n, ws[i], x, nb: nb, stride: rows, 0, rows, on: path)
                #expect(Array(out[(i * rows * nb)..<((i + 1) * rows * nb)]).map(\.bitPattern) == want.map(\.bitPattern), "\(t) \(path) job \(i)")
            }
        }
    }

    @Test("A decode dispatch (one activation row) in chunks that shrink toward its end covers every row once, bit for bit",
          arguments: [KType.q8_0, KType.q4_1])
    func decodeChunksCoverEveryRow(_ t: KType) throws {
        var rng = SeededRandom(seed: 9311 + UInt64(t.id))
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        // rows not multiples of 16; the last job long enough for a guided tail of several shrinking chunks
        let n = 256
        let shapes = [1001, 77, 9000]
        let x = Kernels.randomActivations(t, n, &rng)
        let ws = shapes.map { rows in (0..<rows).flatMap { _ in Kernels.randomWeights(t, n, &rng) } }
        let wAll = ws.flatMap { $0 }
        let wOff = ws.indices.map { i in ws[0..<i].reduce(0) { $0 + $1.count } }
        let oOff = shapes.indices.map { i in shapes[0..<i].reduce(0, +) }
        for path in [KPath.scalar] + KPath.simd {
            var out = [Float](repeating: .nan, count: shapes.reduce(0, +))
            path.run {
                wAll.withUnsafeBytes { w in x.withUnsafeBytes { xp in out.withUnsafeMutableBufferPointer { o in
                    let jobs = shapes.indices.map { i in
                        ra_matmul_job(weight_type: t.id, w: w.baseAddress! + wOff[i], n: Int64(n), rows: Int64(shapes[i]),
                                      x: xp.baseAddress!, nb: 1, out: o.baseAddress! + oOff[i], out_stride: Int64(shapes[i]))
                    }
                    jobs.withUnsafeBufferPointer { ra_matmul_jobs(pool, $0.baseAddress, Int32($0.count)) }
                } } }
            }
            for (i, rows) in shapes.enumerated() {
                let want = matmulRows(t, n, ws[i], x, nb: 1, stride: rows, 0, rows, on: path)
                #expect(Array(out[oOff[i]..<(oOff[i] + rows)]).map(\.bitPattern) == want.map(\.bitPattern), "\(t) \(path) job \(i)")
            }
        }
    }
}

extension DotProductTests {
    @Test("Q4_1, Q8_0, IQ4_NL and IQ4_XS batches on 16-row panels (AVX2; Q8_0's and the IQ4 types' in int16): a prompt's 70 activation rows, row ranges that start and end inside panels and the 8-row tail, random, extreme and saturating data, bit for bit the path's dot",
          arguments: [KType.q4_1, KType.q8_0, KType.iq4_NL, KType.iq4_XS])
    func sixteenRowPanelsBitExact(_ t: KType) {
        var rng = SeededRandom(seed: 1616 + UInt64(t.id))
        let rows = 45, stride = rows + 3   // two 16-row panels, one of 8 and 5 rows; from row 3: two of 16, 10 left
        let paths = ([KPath.scalar] + KPath.simd).filter { Self.batchesBitExact(t, on: $0) }
        for n in t.blockSize == 32 ? [32, 160, 576] : [256, 768] {
            for round in 0..<3 {
                for nb in [1, 3, 4, 6, 70] {
                    let (w, x) = panelData(t, n, rows: rows, nb: nb, round: round, &rng)
                    let xrb = t.dotType.rowBytes(n), wrb = t.rowBytes(n)
                    for path in paths {
                        for (r0, r1) in [(0, rows), (3, 44), (8, 24)] {
                            let out = matmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path)
                            for b in 0..<nb {
                                let xRow = Array(x[(b * xrb)..<((b + 1) * xrb)])
                                for r in 0..<stride {
                                    let got = out[b * stride + r]
                                    guard (r0..<r1).contains(r) else {
                                        #expect(got == -12345, "\(path) n=\(n) nb=\(nb) rows \(r0)..<\(r1): wrote outside at b=\(b) r=\(r)")
                                        continue
                                    }
                                    let want = path.run { Kernels.dot(t, n, w, xRow, wOffset: r * wrb) }
                                    #expect(got.bitPattern == want.bitPattern,
                                            "\(path) n=\(n) round \(round) nb=\(nb) rows \(r0)..<\(r1) b=\(b) r=\(r): \(got) vs dot \(want)")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
