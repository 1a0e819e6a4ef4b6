import CKernels
import Testing

/// Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, IQ4_XS, IQ4_NL, Q4_0, Q5_0, Q4_1, Q5_1 and Q8_0 rows repacked at load (RA_*_X8, x8.c): on every path, for decode and batches
/// and any range of whole groups of 8 rows, the products are the bits of the same rows in the file's layout (the
/// decode kernels of the groups, AVX2 or with AVX-512 VNNI's vpdpbusd; the panels packed from them; elsewhere the rows
/// converted back).
@Suite("Repacked rows")
struct RepackedRowsTests {
    /// `rows` rows of n elements of t repacked, or nil when the shape is refused.
    static func repack(_ t: KType, _ w: [UInt8], _ n: Int, rows: Int) -> [UInt8]? {
        let bytes = Int(ra_x8_bytes(t.id, Int64(n), Int64(rows)))
        guard bytes > 0 else { return nil }
        // 32-byte alignment, as the engine's pages give it: an Array's storage is only 16-byte aligned, so the copy
        // starts at the first aligned byte of a larger buffer and the result is returned from there.
        var out = [UInt8](repeating: 0, count: bytes)
        let ok = w.withUnsafeBytes { wp in
            let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
            defer { raw.deallocate() }
            guard ra_x8_repack(t.id, wp.baseAddress, Int64(n), Int64(rows), raw) == 1 else { return false }
            out.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: bytes)) }
            return true
        }
        return ok ? out : nil
    }

    /// ra_matmul_rows of `type` over rows r0..<r1 on `path`, with the weights at a 64-byte aligned address; every
    /// output slot outside the range keeps its sentinel.
    static func products(_ type: Int32, _ w: [UInt8], _ n: Int, _ x: [UInt8], nb: Int, stride: Int, _ r0: Int, _ r1: Int,
                         on path: KPath) -> [Float] {
        var out = [Float](repeating: -12345, count: stride * nb)
        let wp = UnsafeMutableRawPointer.allocate(byteCount: w.count, alignment: 64)
        defer { wp.deallocate() }
        w.withUnsafeBytes { wp.copyMemory(from: $0.baseAddress!, byteCount: w.count) }
        path.run {
            x.withUnsafeBytes { xp in
                out.withUnsafeMutableBufferPointer {
                    ra_matmul_rows(type, wp, Int64(n), xp.baseAddress, Int64(nb), $0.baseAddress, Int64(stride), Int64(r0), Int64(r1))
                }
            }
        }
        return out
    }

    static let types = [KType.q4_K, .q5_K, .q6_K, .q3_K, .q2_K, .iq4_XS, .iq4_NL, .q4_0, .q5_0, .q4_1, .q5_1, .q8_0]
    /// Bytes of one (super-)block of a group of 8 repacked rows of t, as ckernels.h states them.
    static func groupBytes(_ t: KType) -> Int {
        switch t.id {
        case Int32(RA_Q4_K): Int(RA_Q4_K_X8_GROUP_BYTES)
        case Int32(RA_Q5_K): Int(RA_Q5_K_X8_GROUP_BYTES)
        case Int32(RA_Q6_K): Int(RA_Q6_K_X8_GROUP_BYTES)
        case Int32(RA_Q3_K): Int(RA_Q3_K_X8_GROUP_BYTES)
        case Int32(RA_Q2_K): Int(RA_Q2_K_X8_GROUP_BYTES)
        case Int32(RA_IQ4_XS): Int(RA_IQ4_XS_X8_GROUP_BYTES)
        case Int32(RA_IQ4_NL): Int(RA_IQ4_NL_X8_GROUP_BYTES)
        case Int32(RA_Q4_0): Int(RA_Q4_0_X8_GROUP_BYTES)
        case Int32(RA_Q5_0): Int(RA_Q5_0_X8_GROUP_BYTES)
        case Int32(RA_Q4_1): Int(RA_Q4_1_X8_GROUP_BYTES)
        case Int32(RA_Q5_1): Int(RA_Q5_1_X8_GROUP_BYTES)
        default: Int(RA_Q8_0_X8_GROUP_BYTES)
        }
    }

    @Test("repacked rows give the bits of the file's rows on every path, decode and batches, any range of groups",
          arguments: types, ["random", "extreme", "saturating"])
    func sameBits(t: KType, data: String) {
        var rng = SeededRandom(seed: 8088 + UInt64(data.count) + UInt64(t.id))
        var scaleRng = SeededRandom(seed: 99 + UInt64(data.count) + UInt64(t.id))
        let x8 = ra_x8_type(t.id)
        let rows = 24, stride = rows + 3
        // 1, 2, 3 and 5 super-blocks a row (odd counts: the one-row dot pairs super-blocks and has a tail); the 32-element
        // types also 1, 2, 3, 5 and 18 blocks (their dot's 4 chains and their tails; SmolLM2's 576)
        for n in (t.blockSize == 32 ? [32, 64, 96, 160, 576] : []) + [256, 512, 768, 1280] {
            var w = [UInt8]()
            for _ in 0..<rows {
                var row = Kernels.randomWeights(t, n, &rng, extreme: data == "extreme") {
                    scaleRng.float(in: 0.001...0.05) * (Bool.random(using: &scaleRng) ? 1 : -1)
                }
                if data == "saturating" && t.id == Int32(RA_Q6_K) {   // quants 63 (ql, qh all ones), scales -128; d kept
                    for b in 0..<(n / t.blockSize) {
                        for k in 0..<192 { row[b * t.blockBytes + k] = 0xFF }
                        for k in 192..<208 { row[b * t.blockBytes + k] = 0x80 }
                    }
                } else if data == "saturating" {   // every quant at its top (15, 31; Q8_0's -128), every scale and min 63: int16 sums at their limits
                    let signed = [Int32(RA_Q4_0), Int32(RA_Q5_0), Int32(RA_Q8_0)].contains(t.id)
                    let halves = signed ? 2 : 4   // (d; d and m or dmin)
                    let top: UInt8 = t.id == Int32(RA_Q8_0) ? 0x80 : 0xFF
                    for b in 0..<(n / t.blockSize) { for k in halves..<t.blockBytes { row[b * t.blockBytes + k] = top } }
                }
                w += row
            }
            guard let packed = Self.repack(t, w, n, rows: rows) else {
                Issue.record("n \(n): \(rows) rows were not repacked")
                continue
            }
            #expect(packed.count == rows / 8 * n / t.blockSize * Self.groupBytes(t))
            #expect(Int(ra_row_bytes(x8, Int64(n))) * rows == packed.count)
            for nb in [1, 2, 3, 4, 5, 9] {
                var x = [UInt8]()
                for b in 0..<nb {
                    if data == "saturating" {
                        x += Kernels.quantize(t.dotType, [Float](repeating: b % 2 == 0 ? 1 : -1, count: n))
                    } else {
                        x += Kernels.randomActivations(t, n, &rng, extreme: data == "extreme")
                    }
                }
                for path in [KPath.scalar] + KPath.simd {
                    for (r0, r1) in [(0, rows), (8, rows), (8, 16), (0, 8)] {
                        let file = Self.products(t.id, w, n, x, nb: nb, stride: stride, r0, r1, on: path)
                        let repacked = Self.products(x8, packed, n, x, nb: nb, stride: stride, r0, r1, on: path)
                        let differing = zip(file, repacked).filter { $0.bitPattern != $1.bitPattern }.count
                        #expect(differing == 0, "\(t) \(data), n \(n), \(nb) activation rows, rows \(r0)..<\(r1) on \(path): \(differing) outputs differ")
                        let written = repacked.enumerated().filter { $0.element != -12345 }.map { $0.offset % stride }
                        #expect(written.allSatisfy { $0 >= r0 && $0 < r1 }, "\(path): wrote outside rows \(r0)..<\(r1)")
                        #expect(written.count == nb * (r1 - r0), "\(path): \(written.count) outputs written, expected \(nb * (r1 - r0))")
                    }
                }
            }
        }
    }

    @Test("a row of a repacked matrix converts to the floats of the file's row (a tied token embedding)", arguments: types)
    func dequantizedRows(t: KType) {
        var rng = SeededRandom(seed: 4242 + UInt64(t.id))
        let rows = 16, x8 = ra_x8_type(t.id)
        for n in (t.blockSize == 32 ? [32, 160] : []) + [256, 768] {
            var w = [UInt8]()
            for _ in 0..<rows { w += Kernels.randomWeights(t, n, &rng, extreme: true) { 0.01 } }
            guard let packed = Self.repack(t, w, n, rows: rows) else {
                Issue.record("n \(n): \(rows) rows were not repacked")
                continue
            }
            let rowBytes = w.count / rows
            for r in 0..<rows {
                var expected = [Float](repeating: 0, count: n), got = [Float](repeating: -7, count: n)
                w.withUnsafeBytes { ra_dequantize_row(t.id, $0.baseAddress! + r * rowBytes, &expected, Int64(n)) }
                packed.withUnsafeBytes { ra_x8_dequantize_row(x8, $0.baseAddress, Int64(n), Int64(r), &got) }
                let differing = zip(expected, got).filter { $0.bitPattern != $1.bitPattern }.count
                #expect(differing == 0, "\(t), n \(n), row \(r): \(differing) of \(n) values differ")
            }
        }
        // refused: not a repacked type, a row length it cannot have, a negative row; nothing written
        let packed = [UInt8](repeating: 0, count: 4096)
        for (type, n, r) in [(t.id, 256, 0), (x8, 255, 0), (x8, 0, 0), (x8, Int(RA_X8_MAX_COLUMNS) + 256, 0), (x8, 256, -1)] {
            var out = [Float](repeating: -7, count: 512)
            packed.withUnsafeBytes { ra_x8_dequantize_row(type, $0.baseAddress, Int64(n), Int64(r), &out) }
            #expect(out.allSatisfy { $0 == -7 }, "\(t): type \(type), n \(n), row \(r) wrote values")
        }
    }

    /// The groups' software prefetch (ra_x8_prefetch: per CPU, engine-bench --x8-prefetch) only moves bytes into the
    /// cache: decode gives the same bits with none and with any distance, on every path (the AVX2 groups take it; the
    /// others ignore it), and the setting keeps whole lines within its bounds. One test for all types: the setting is
    /// process-wide, so its cases must not run side by side.
    @Test("the repacked rows' prefetch distance never changes a product, and its setting is bounded")
    func prefetchKeepsBits() {
        let cpu = ra_x8_prefetch(Int32(RA_Q4_K))
        defer { ra_set_x8_prefetch(-1) }
        for t in Self.types {
            var rng = SeededRandom(seed: 4242 + UInt64(t.id)), scaleRng = SeededRandom(seed: 17 + UInt64(t.id))
            let x8 = ra_x8_type(t.id), rows = 16, n = t.blockSize == 32 ? 576 : 768
            var w = [UInt8]()
            for _ in 0..<rows { w += Kernels.randomWeights(t, n, &rng, extreme: false) { scaleRng.float(in: 0.001...0.05) } }
            guard let packed = Self.repack(t, w, n, rows: rows) else {
                Issue.record("\(t): \(rows) rows of \(n) were not repacked")
                continue
            }
            let x = Kernels.randomActivations(t, n, &rng, extreme: false)
            for path in [KPath.scalar] + KPath.simd {
                ra_set_x8_prefetch(0)
                let none = Self.products(x8, packed, n, x, nb: 1, stride: rows, 0, rows, on: path)
                for ahead: Int32 in [64, 1024, 4096, 65536] {
                    ra_set_x8_prefetch(ahead)
                    let with = Self.products(x8, packed, n, x, nb: 1, stride: rows, 0, rows, on: path)
                    #expect(zip(none, with).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(t) on \(path), \(ahead) bytes ahead")
                }
            }
        }
        for (asked, kept): (Int32, Int32) in [(0, 0), (100, 64), (4096, 4096), (1 << 20, 65536), (-1, cpu), (-7, cpu)] {
            ra_set_x8_prefetch(asked)
            for t in Self.types where asked >= 0 {
                #expect(ra_x8_prefetch(t.id) == kept, "\(t), asked \(asked)")
            }
            if asked < 0 { #expect(ra_x8_prefetch(Int32(RA_Q4_K)) == kept, "asked \(asked)") }
        }
    }

    @Test("jobs on the same activations over repacked and file rows of the Q8_K types (Q6_K's and repacked IQ4_XS's VNNI panels take the activations plus 128 as side data, IQ4_XS's file rows their int16 form, Q4_K none) each give ra_matmul_rows' bits on every path")
    func jobsOfQ8KTypesShareActivations() throws {
        var rng = SeededRandom(seed: 5150)
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        let n = 512, rows = 40, nb = 7
        // (type, repacked): the file rows' IQ4_XS side data comes first and is the longest of the Q8_K ones
        let specs: [(KType, Bool)] = [(.iq4_XS, false), (.q6_K, true), (.iq4_XS, true), (.q6_K, false), (.q4_K, true), (.iq4_XS, true)]
        let x = (0..<nb).flatMap { _ in Kernels.randomActivations(KType.q6_K, n, &rng) }
        var ws = [[UInt8]](), ids = [Int32]()
        for (t, repacked) in specs {
            let w = (0..<rows).flatMap { _ in Kernels.randomWeights(t, n, &rng) }
            ws.append(repacked ? try #require(Self.repack(t, w, n, rows: rows)) : w)
            ids.append(repacked ? ra_x8_type(t.id) : t.id)
        }
        // every matrix 64-byte aligned in one buffer, as the engine's weights are
        let offsets = ws.indices.map { i in ws[0..<i].reduce(0) { $0 + ($1.count + 63) / 64 * 64 } }
        let total = offsets.last! + ws.last!.count
        let wp = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64)
        defer { wp.deallocate() }
        for (i, w) in ws.enumerated() { w.withUnsafeBytes { (wp + offsets[i]).copyMemory(from: $0.baseAddress!, byteCount: w.count) } }
        for path in [KPath.scalar] + KPath.simd {
            var out = [Float](repeating: .nan, count: specs.count * rows * nb)
            path.run {
                x.withUnsafeBytes { xp in out.withUnsafeMutableBufferPointer { o in
                    let jobs = specs.indices.map { i in
                        ra_matmul_job(weight_type: ids[i], w: wp + offsets[i], n: Int64(n), rows: Int64(rows), x: xp.baseAddress!,
                                      nb: Int64(nb), out: o.baseAddress! + i * rows * nb, out_stride: Int64(rows))
                    }
                    jobs.withUnsafeBufferPointer { ra_matmul_jobs(pool, $0.baseAddress, Int32($0.count)) }
                } }
            }
            for i in specs.indices {
                let want = Self.products(ids[i], ws[i], n, x, nb: nb, stride: rows, 0, rows, on: path)
                let got = Array(out[(i * rows * nb)..<((i + 1) * rows * nb)])
                #expect(got.map(\.bitPattern) == want.map(\.bitPattern), "\(specs[i].0) repacked \(specs[i].1) on \(path), job \(i)")
            }
        }
    }

    @Test("types and shapes that cannot be repacked are refused and nothing is written")
    func refusedShapes() {
        let shapes = [(255, 8), (300, 8), (256, 12), (256, 0), (256, -8), (0, 8), (Int(RA_X8_MAX_COLUMNS) + 256, 8)]
        let cases = shapes.flatMap { s in Self.types.map { ($0, s.0, s.1) } }
            + [(KType.q4_K, 288, 8), (.q5_K, 288, 8), (.q6_K, 288, 8), (.q3_K, 288, 8), (.q2_K, 288, 8)]
            + [KType.q8_K, .f16, .f32].map { ($0, 256, 8) }
        for (t, n, rows) in cases {
            #expect(ra_x8_bytes(t.id, Int64(n), Int64(rows)) == -1, "\(t): n \(n), rows \(rows)")
            var dst = [UInt8](repeating: 0xA5, count: 64)
            let src = [UInt8](repeating: 0, count: 64)
            let ok = src.withUnsafeBytes { s in dst.withUnsafeMutableBytes { ra_x8_repack(t.id, s.baseAddress, Int64(n), Int64(rows), $0.baseAddress) } }
            #expect(ok == 0)
            #expect(dst.allSatisfy { $0 == 0xA5 })
        }
        for t in [KType.q8_K, .f16, .f32] { #expect(ra_x8_type(t.id) == -1) }
        for t in Self.types {
            #expect(ra_x8_bytes(t.id, Int64(RA_X8_MAX_COLUMNS), 8) > 0)
            #expect(ra_vec_dot_type(ra_x8_type(t.id)) == ra_vec_dot_type(t.id))
        }
    }
}
