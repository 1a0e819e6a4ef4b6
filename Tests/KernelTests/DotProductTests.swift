import CKernels
import Foundation
import Testing

/// Everything that switches the kernel path runs here, one test at a time: the mask is process-wide.
@Suite("dot products and matmul on every CPU path", .serialized)
struct DotProductTests {
    /// Elements per test row for a type: several blocks, odd counts for the float types (tails).
    static func lengths(_ t: KType) -> [Int] {
        switch t.blockSize {
        case 1: return [1, 7, 16, 17, 63, 64, 65, 129, 1000, 2048]
        case 32: return [32, 96, 256, 544, 2048]
        default: return [256, 768, 2048, 4096]
        }
    }

    @Test("dispatch honours the feature mask and never picks a path the CPU lacks")
    func dispatch() {
        let f = ra_cpu_features()
        ra_set_thread_features_mask(0)
        #expect(ra_kernel_path() == Int32(RA_PATH_SCALAR))
        ra_set_thread_features_mask(-1)
        let best = ra_kernel_path()
        #if arch(x86_64)
        let avx2: Int32 = Int32(RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C)
        let avx512: Int32 = avx2 | Int32(RA_CPU_AVX512F | RA_CPU_AVX512BW | RA_CPU_AVX512VL)
        let x86 = [RA_PATH_AVX2, RA_PATH_AVX2_VNNI, RA_PATH_AVX512, RA_PATH_AVX512_VNNI].map { Int32($0) }
        if x86.contains(best) { #expect(f & avx2 == avx2) }
        if best == Int32(RA_PATH_AVX2_VNNI) { #expect(f & Int32(RA_CPU_AVXVNNI) != 0 && f & avx512 != avx512) }
        if best == Int32(RA_PATH_AVX512) || best == Int32(RA_PATH_AVX512_VNNI) { #expect(f & avx512 == avx512) }
        if best == Int32(RA_PATH_AVX512_VNNI) { #expect(f & Int32(RA_CPU_AVX512VNNI) != 0) }
        #expect(f & Int32(RA_CPU_NEON | RA_CPU_DOTPROD) == 0)
        #expect(best == Int32(RA_PATH_SCALAR) || x86.contains(best))
        // AVX-VNNI without AVX-512 selects its own path; masked to plain AVX2 it is the AVX2 path
        ra_set_thread_features_mask(avx2)
        if f & avx2 == avx2 { #expect(ra_kernel_path() == Int32(RA_PATH_AVX2)) }
        ra_set_thread_features_mask(avx2 | Int32(RA_CPU_AVXVNNI))
        if f & avx2 == avx2 && f & Int32(RA_CPU_AVXVNNI) != 0 { #expect(ra_kernel_path() == Int32(RA_PATH_AVX2_VNNI)) }
        ra_set_thread_features_mask(-1)
        #elseif arch(arm64)
        // every aarch64 core has NEON; SDOT only where detected, and masking it off leaves plain NEON
        #expect(f & Int32(RA_CPU_NEON) != 0)
        #expect(best == Int32(f & Int32(RA_CPU_DOTPROD) != 0 ? RA_PATH_NEON_DOTPROD : RA_PATH_NEON))
        ra_set_thread_features_mask(Int32(RA_CPU_NEON))
        #expect(ra_kernel_path() == Int32(RA_PATH_NEON))
        ra_set_thread_features_mask(-1)
        #endif
        #expect(String(cString: ra_kernel_path_name(best)).isEmpty == false)
    }

    @Test("a thread's feature mask holds on that thread only, and a pool run carries it to its workers")
    func threadMaskReachesPoolWorkers() throws {
        let best = ra_kernel_path()
        let pool = try #require(ra_pool_create(3))
        defer { ra_pool_destroy(pool) }
        var seen = [Int32](repeating: -1, count: 3)
        func paths() -> [Int32] {
            seen.withUnsafeMutableBufferPointer { buf in
                ra_pool_run(pool, { ctx, ith, _ in
                    ctx!.assumingMemoryBound(to: Int32.self)[Int(ith)] = ra_kernel_path()
                }, buf.baseAddress)
            }
            return seen
        }
        ra_set_thread_features_mask(0)
        let masked = paths()
        let other = Thread.detachNewThreadAndWait { ra_kernel_path() }
        ra_set_thread_features_mask(-1)
        #expect(masked == [Int32](repeating: Int32(RA_PATH_SCALAR), count: 3))
        #expect(other == best, "another thread keeps the full path")
        #expect(paths() == [Int32](repeating: best, count: 3), "the next run without a mask uses the best path again")
    }

    @Test("scalar dot equals the dot of the decoded rows", arguments: KType.weights)
    func scalarMatchesDecodedRows(_ t: KType) {
        var rng = SeededRandom(seed: 11 + UInt64(t.id))
        for n in Self.lengths(t) {
            let w = Kernels.randomWeights(t, n, &rng), x = Kernels.randomActivations(t, n, &rng)
            let got = KPath.scalar.run { Kernels.dot(t, n, w, x) }
            let want = Kernels.referenceDot(t, n, w, x), mag = Kernels.magnitude(t, n, w, x)
            #expect(abs(Double(got) - want) <= 1e-5 * mag + 1e-30, "\(t) n=\(n): \(got) vs \(want)")
        }
    }

    /// Blocks whose every product and partial sum is exact in float (power-of-two scales, small ints).
    private func exactRows(_ t: KType, _ n: Int, _ rng: inout SeededRandom) -> ([UInt8], [UInt8]) {
        var w: [UInt8]
        switch t.name {
        case "F32", "F16", "BF16":
            w = Kernels.quantize(t, (0..<n).map { _ in Float(Int.random(in: -8...8, using: &rng)) * 0.25 })
        default:
            w = Kernels.randomWeights(t, n, &rng, extreme: n % 3 == 0, scales: { 0.0625 })
            if t.name == "Q6_K" {   // keep Q6_K's int8 scales to ±32 so sums stay far below 2^24
                for b in 0..<(n / 256) { for k in 0..<16 { w[210 * b + 192 + k] = UInt8(bitPattern: Int8.random(in: -32...31, using: &rng)) } }
            }
        }
        var x: [UInt8]
        let xt = t.dotType
        switch xt.name {
        case "F32", "F16", "BF16":
            x = Kernels.quantize(xt, (0..<n).map { _ in Float(Int.random(in: -8...8, using: &rng)) })
        case "Q8_0", "Q8_1":
            x = [UInt8](repeating: 0, count: xt.rowBytes(n))
            let qs = xt.name == "Q8_0" ? 2 : 4
            for b in 0..<(n / 32) {
                x.putHalf(0.015625, at: xt.blockBytes * b)
                var sum = 0
                for j in 0..<32 {
                    let v = Int8.random(in: -15...15, using: &rng)
                    sum += Int(v)
                    x[xt.blockBytes * b + qs + j] = UInt8(bitPattern: v)
                }
                if qs == 4 { x.putHalf(0.015625 * Float(sum), at: xt.blockBytes * b + 2) }
            }
        default:   // Q8_K
            x = [UInt8](repeating: 0, count: xt.rowBytes(n))
            for b in 0..<(n / 256) {
                x.putFloat(0.015625, at: 292 * b)
                for g in 0..<16 {
                    var s = 0
                    for j in 0..<16 {
                        let v = Int8.random(in: -15...15, using: &rng)
                        s += Int(v)
                        x[292 * b + 4 + 16 * g + j] = UInt8(bitPattern: v)
                    }
                    let u = UInt16(bitPattern: Int16(s))
                    x[292 * b + 260 + 2 * g] = UInt8(u & 0xFF)
                    x[292 * b + 261 + 2 * g] = UInt8(u >> 8)
                }
            }
        }
        return (w, x)
    }

    @Test("every SIMD path gives exactly the scalar result when all arithmetic is exact", arguments: KType.weights)
    func simdExactOnExactData(_ t: KType) {
        var rng = SeededRandom(seed: 21 + UInt64(t.id))
        for n in Self.lengths(t) {
            let (w, x) = exactRows(t, n, &rng)
            let want = KPath.scalar.run { Kernels.dot(t, n, w, x) }
            #expect(Double(want) == Kernels.referenceDot(t, n, w, x), "\(t) n=\(n) scalar")
            for path in KPath.simd {
                let got = path.run { Kernels.dot(t, n, w, x) }
                #expect(got == want, "\(t) n=\(n) \(path): \(got) vs scalar \(want)")
            }
        }
    }

    @Test("every SIMD path agrees with scalar on random and extreme data", arguments: KType.weights)
    func simdMatchesScalar(_ t: KType) {
        var rng = SeededRandom(seed: 31 + UInt64(t.id))
        var scaleRng = SeededRandom(seed: 51 + UInt64(t.id))
        let scaleChoices: [Float] = [1e-4, 0.01, 1, 60000, -0.5, 6e-8]
        for n in Self.lengths(t) {
            for round in 0..<4 {
                let extreme = round >= 2
                let w = Kernels.randomWeights(t, n, &rng, extreme: extreme,
                                              scales: { scaleChoices.randomElement(using: &scaleRng) ?? 1 })
                let x = Kernels.randomActivations(t, n, &rng, range: round == 3 ? 3e4 : 1, extreme: extreme)
                let want = KPath.scalar.run { Kernels.dot(t, n, w, x) }
                let mag = Kernels.magnitude(t, n, w, x)
                for path in KPath.simd {
                    let got = path.run { Kernels.dot(t, n, w, x) }
                    #expect(abs(Double(got) - Double(want)) <= 2e-5 * mag + 1e-30,
                            "\(t) n=\(n) round \(round) \(path): \(got) vs scalar \(want)")
                }
            }
        }
    }

    @Test("Q5_K gives bit-identical dots and matmuls on every path (integer sums per super-block, one fma order)")
    func q5KBitIdentical() {
        var rng = SeededRandom(seed: 71)
        for n in Self.lengths(.q5_K) {
            for extreme in [false, true] {
                let w = Kernels.randomWeights(.q5_K, n, &rng, extreme: extreme, scales: { 0.0137 })
                let x = Kernels.randomActivations(.q5_K, n, &rng, range: 7, extreme: extreme)
                let want = KPath.scalar.run { Kernels.dot(.q5_K, n, w, x) }
                for path in KPath.simd {
                    #expect(path.run { Kernels.dot(.q5_K, n, w, x) } == want, "n=\(n) \(path)")
                }
            }
        }
        // the multi-activation kernels of the batched matmul follow the same order
        let n = 512, rows = 5, nb = 7
        var w = [UInt8](), x = [UInt8]()
        for _ in 0..<rows { w += Kernels.randomWeights(.q5_K, n, &rng) }
        for _ in 0..<nb { x += Kernels.randomActivations(.q5_K, n, &rng) }
        func matmul() -> [Float] {
            var out = [Float](repeating: 0, count: rows * nb)
            w.withUnsafeBytes { wp in x.withUnsafeBytes { xp in out.withUnsafeMutableBufferPointer {
                ra_matmul_rows(KType.q5_K.id, wp.baseAddress, Int64(n), xp.baseAddress, Int64(nb), $0.baseAddress, Int64(rows), 0, Int64(rows))
            } } }
            return out
        }
        let want = KPath.scalar.run { matmul() }
        for path in KPath.simd { #expect(path.run { matmul() } == want, "\(path)") }
    }

    @Test("ra_vec_dot_function hands out the function ra_vec_dot uses on each path", arguments: KType.weights)
    func dotFunction(_ t: KType) throws {
        var rng = SeededRandom(seed: 61 + UInt64(t.id))
        let n = Self.lengths(t)[1]
        let w = Kernels.randomWeights(t, n, &rng), x = Kernels.randomActivations(t, n, &rng)
        for path in [KPath.scalar] + KPath.simd {
            let (f, want) = path.run { (ra_vec_dot_function(t.id), Kernels.dot(t, n, w, x)) }
            let fn = try #require(f, "\(t) \(path)")
            let got = w.withUnsafeBytes { wp in x.withUnsafeBytes { xp in fn(Int64(n), wp.baseAddress, xp.baseAddress) } }
            #expect(got == want, "\(t) \(path)")
        }
        #expect(ra_vec_dot_function(KType.q8_K.id) == nil)
        #expect(ra_vec_dot_function(99) == nil)
    }

    @Test("dot of a hand-built Q8_0 row with a known activation row")
    func knownDot() {
        var w = [UInt8](repeating: 0, count: 68)
        var x = [UInt8](repeating: 0, count: 68)
        for blk in 0..<2 {
            w.putHalf(blk == 0 ? 0.5 : 2, at: 34 * blk)
            x.putHalf(0.25, at: 34 * blk)
            for j in 0..<32 {
                w[34 * blk + 2 + j] = UInt8(bitPattern: Int8(j - 16))
                x[34 * blk + 2 + j] = 2
            }
        }
        // sum_j (j - 16) * 2 = -32 per block; -32 * (0.5 * 0.25) + -32 * (2 * 0.25) = -20
        for path in [KPath.scalar] + KPath.simd {
            #expect(path.run { Kernels.dot(.q8_0, 64, w, x) } == -20, "\(path)")
        }
    }

    /// ra_matmul_rows over rows r0..<r1 on `path` into nb output rows of `stride` floats, which start as -12345.
    func matmulRows(_ t: KType, _ n: Int, _ w: [UInt8], _ x: [UInt8], nb: Int, stride: Int, _ r0: Int, _ r1: Int,
                            on path: KPath) -> [Float] {
        var out = [Float](repeating: -12345, count: stride * nb)
        path.run {
            w.withUnsafeBytes { wp in
                x.withUnsafeBytes { xp in
                    out.withUnsafeMutableBufferPointer {
                        ra_matmul_rows(t.id, wp.baseAddress, Int64(n), xp.baseAddress, Int64(nb), $0.baseAddress, Int64(stride), Int64(r0), Int64(r1))
                    }
                }
            }
        }
        return out
    }

    /// ra_matmul_rows over rows r0..<r1 on `path`: every output within tolerance of the dot product on `ref`,
    /// nothing written outside those rows.
    private func checkMatmulRows(_ t: KType, _ n: Int, _ w: [UInt8], _ x: [UInt8], nb: Int, stride: Int, _ r0: Int, _ r1: Int,
                                 on path: KPath, against ref: KPath, _ label: String) {
        let wr = t.rowBytes(n), xr = t.dotType.rowBytes(n)
        let out = matmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path)
        for b in 0..<nb {
            for r in 0..<stride {
                let got = out[b * stride + r]
                guard (r0..<r1).contains(r) else {
                    #expect(got == -12345, "\(label) \(path) nb=\(nb) rows \(r0)..<\(r1): wrote outside at b=\(b) r=\(r)")
                    continue
                }
                let wRow = Array(w[(r * wr)..<((r + 1) * wr)]), xRow = Array(x[(b * xr)..<((b + 1) * xr)])
                let want = ref.run { Kernels.dot(t, n, wRow, xRow) }
                // Float weights (F32, F16, BF16): a batch sums in exactly the single-row dot's order, so a prompt
                // batch gives bit for bit what feeding it token by token gives (F16/BF16 activations would turn a
                // last-bit difference into a rounding flip downstream).
                if t.blockSize == 1 {
                    #expect(got.bitPattern == want.bitPattern, "\(label) \(path) nb=\(nb) b=\(b) r=\(r): \(got) vs \(want), not bit-identical")
                    continue
                }
                let mag = Kernels.magnitude(t, n, wRow, xRow)
                #expect(abs(Double(got) - Double(want)) <= 1e-6 * mag + 1e-30, "\(label) \(path) nb=\(nb) b=\(b) r=\(r): \(got) vs \(want)")
            }
        }
    }

    @Test("matmul_rows equals per-row dot products for odd row ranges and batch sizes", arguments: KType.weights)
    func matmulRows(_ t: KType) {
        var rng = SeededRandom(seed: 41 + UInt64(t.id))
        let n = t.blockSize == 1 ? 200 : (t.blockSize == 32 ? 320 : 512)
        let rows = 13, r0 = 3, r1 = 12, stride = rows + 4
        var w = [UInt8]()
        for _ in 0..<rows { w += Kernels.randomWeights(t, n, &rng) }
        for nb in [1, 2, 3, 5, 8, 9, 17] {
            var x = [UInt8]()
            for _ in 0..<nb { x += Kernels.randomActivations(t, n, &rng) }
            for path in [KPath.scalar] + KPath.simd {
                checkMatmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path, against: path, "\(t)")
            }
        }
    }

    @Test("Q8_0 batches (VNNI: panels of 16 weight rows stored as w + 128 × 8 activation rows) match scalar dots, -128 weights included")
    func q8_0Batches() {
        var rng = SeededRandom(seed: 808)
        let t = KType.q8_0, n = 1024, rows = 21   // one full panel and a partial one
        let wr = t.rowBytes(n), xr = t.dotType.rowBytes(n)
        for extreme in [false, true] {
            var w = [UInt8]()
            for _ in 0..<rows { w += Kernels.randomWeights(t, n, &rng, extreme: extreme) }
            for nb in [2, 8, 9, 16, 23] {
                var x = [UInt8]()
                for _ in 0..<nb { x += Kernels.randomActivations(t, n, &rng, extreme: extreme) }
                for path in KPath.simd {
                    var out = [Float](repeating: 0, count: rows * nb)
                    path.run {
                        w.withUnsafeBytes { wp in
                            x.withUnsafeBytes { xp in
                                out.withUnsafeMutableBufferPointer {
                                    ra_matmul_rows(t.id, wp.baseAddress, Int64(n), xp.baseAddress, Int64(nb), $0.baseAddress, Int64(rows), 0, Int64(rows))
                                }
                            }
                        }
                    }
                    for b in 0..<nb {
                        for r in 0..<rows {
                            let wRow = Array(w[(r * wr)..<((r + 1) * wr)]), xRow = Array(x[(b * xr)..<((b + 1) * xr)])
                            let want = KPath.scalar.run { Kernels.dot(t, n, wRow, xRow) }
                            let mag = Kernels.magnitude(t, n, wRow, xRow)
                            #expect(abs(Double(out[b * rows + r]) - Double(want)) <= 1e-6 * mag + 1e-30,
                                    "\(path) extreme=\(extreme) nb=\(nb) b=\(b) r=\(r): \(out[b * rows + r]) vs \(want)")
                        }
                    }
                }
            }
        }
    }

    @Test("Q6_K batches (VNNI: panels of 16 weight rows × 8 activation rows, partial panels included) match scalar dots")
    func q6_kBatches() {
        var rng = SeededRandom(seed: 606)
        let t = KType.q6_K, n = 768, rows = 21, stride = rows + 3
        for extreme in [false, true] {
            var w = [UInt8]()
            for _ in 0..<rows { w += Kernels.randomWeights(t, n, &rng, extreme: extreme) }
            for nb in [2, 7, 8, 9, 17] {
                var x = [UInt8]()
                for _ in 0..<nb { x += Kernels.randomActivations(t, n, &rng, extreme: extreme) }
                for (r0, r1) in [(0, rows), (3, 19), (5, 6)] {
                    for path in KPath.simd {
                        checkMatmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path, against: .scalar, "extreme=\(extreme)")
                    }
                }
            }
        }
    }

    @Test("Q4_K batches (VNNI: panels of 16 weight rows × 8 activation rows; otherwise 8-row AVX2 panels) match scalar dots")
    func q4_kBatches() {
        var rng = SeededRandom(seed: 404)
        let t = KType.q4_K, n = 1024, rows = 21, stride = rows + 3
        for extreme in [false, true] {
            var w = [UInt8]()
            for _ in 0..<rows { w += Kernels.randomWeights(t, n, &rng, extreme: extreme) }
            for nb in [2, 4, 7, 8, 9, 16] {
                var x = [UInt8]()
                for _ in 0..<nb { x += Kernels.randomActivations(t, n, &rng, extreme: extreme) }
                for (r0, r1) in [(0, rows), (3, 19), (5, 6)] {
                    for path in KPath.simd {
                        checkMatmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path, against: .scalar, "extreme=\(extreme)")
                    }
                }
            }
        }
    }

    /// Batches of every size up to the activation groups of the panel kernels (4 on AVX2, 8 on AVX-512) and past
    /// them, 32 (a prompt chunk), and row ranges that end inside a panel (8 rows on AVX2, 16 on AVX-512).
    static let panelBatches = Array(1...9) + [32]
    static let panelRanges = [(0, 17), (3, 12), (5, 6), (0, 8)]

    /// Random weights and activations, then the worst case for int16 pair sums: every weight quant at its largest
    /// (all-one bytes) against activations all at +127 or all at -127. Every block gets its own scales (either sign):
    /// a kernel that took one row's scales for another's would fail.
    func panelData(_ t: KType, _ n: Int, rows: Int, nb: Int, round: Int, _ rng: inout SeededRandom) -> ([UInt8], [UInt8]) {
        var w = [UInt8](), x = [UInt8]()
        let saturate = round >= 2
        var scaleRng = SeededRandom(seed: rng.next())
        let scale = { scaleRng.float(in: 0.001...0.05) * (Bool.random(using: &scaleRng) ? 1 : -1) }
        for _ in 0..<rows {
            if saturate {
                var row = Kernels.randomWeights(t, n, &rng, scales: scale)
                for b in 0..<(n / t.blockSize) {   // every byte but the half-precision scales
                    for k in 0..<t.blockBytes where !t.scaleOffsets.contains(where: { $0 == k || $0 + 1 == k }) {
                        row[b * t.blockBytes + k] = t.name == "Q8_0" ? 0x80 : 0xFF   // Q8_0: -128 everywhere
                    }
                }
                w += row
            } else {
                w += Kernels.randomWeights(t, n, &rng, extreme: round == 1, scales: scale)
            }
        }
        for b in 0..<nb {
            if saturate {
                x += Kernels.quantize(t.dotType, [Float](repeating: (b + round) % 2 == 0 ? 1 : -1, count: n))
            } else {
                x += Kernels.randomActivations(t, n, &rng, extreme: round == 1)
            }
        }
        return (w, x)
    }

    @Test("batch kernels (256-bit panels without VNNI, 512-bit with it) match scalar dots for batches 1...9 and 32, partial panels, several n; bit for bit the path's own dot",
          arguments: [KType.q4_K, KType.q5_K, KType.q8_0, KType.q6_K, KType.q4_1, KType.q3_K, KType.q2_K, KType.iq4_NL, KType.iq4_XS])
    func panelBatchesMatchScalar(_ t: KType) {
        var rng = SeededRandom(seed: 909 + UInt64(t.id))
        let ns = t.blockSize == 32 ? [32, 96, 160, 1024] : [256, 768, 1280]
        let rows = 17, stride = rows + 2
        for n in ns {
            for round in 0..<3 {
                for nb in Self.panelBatches where round == 0 || nb % 3 != 1 {
                    let (w, x) = panelData(t, n, rows: rows, nb: nb, round: round, &rng)
                    // scalar dots and magnitudes once, then every row range on every path
                    let wrb = t.rowBytes(n), xrb = t.dotType.rowBytes(n)
                    var want = [[Float]](), mag = [[Double]]()
                    for b in 0..<nb {
                        let xRow = Array(x[(b * xrb)..<((b + 1) * xrb)])
                        want.append((0..<rows).map { r in KPath.scalar.run { Kernels.dot(t, n, w, xRow, wOffset: r * wrb) } })
                        mag.append((0..<rows).map { r in Kernels.magnitude(t, n, Array(w[(r * wrb)..<((r + 1) * wrb)]), xRow) })
                    }
                    for (r0, r1) in Self.panelRanges {
                        for path in KPath.simd {
                            let out = matmulRows(t, n, w, x, nb: nb, stride: stride, r0, r1, on: path)
                            for b in 0..<nb {
                                for r in 0..<stride {
                                    let got = out[b * stride + r]
                                    if (r0..<r1).contains(r) {
                                        #expect(abs(Double(got) - Double(want[b][r])) <= 1e-6 * mag[b][r] + 1e-30,
                                                "\(path) n=\(n) round \(round) nb=\(nb) rows \(r0)..<\(r1) b=\(b) r=\(r): \(got) vs \(want[b][r])")
                                        if Self.batchesBitExact(t, on: path) {
                                            let dot = path.run { Kernels.dot(t, n, w, Array(x[(b * xrb)..<((b + 1) * xrb)]), wOffset: r * wrb) }
                                            #expect(got.bitPattern == dot.bitPattern,
                                                    "\(path) n=\(n) round \(round) nb=\(nb) b=\(b) r=\(r): \(got) vs the path's dot \(dot)")
                                        }
                                    } else {
                                        #expect(got == -12345, "\(path) n=\(n) nb=\(nb) rows \(r0)..<\(r1): wrote outside at b=\(b) r=\(r)")
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
