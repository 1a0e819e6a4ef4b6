import CKernels
import Testing

/// Block layouts decoded from hand-built blocks whose values follow from the format's definition.
@Suite("ggml block formats")
struct BlockFormatTests {
    @Test("type table gives ggml's block sizes, block bytes and dot pairing")
    func typeTable() {
        let expected: [(KType, Int, Int, KType?)] = [
            (.f32, 1, 4, .f32), (.f16, 1, 2, .f16), (.bf16, 1, 2, .bf16),
            (.q4_0, 32, 18, .q8_0), (.q4_1, 32, 20, .q8_1), (.q5_0, 32, 22, .q8_0), (.q5_1, 32, 24, .q8_1),
            (.q8_0, 32, 34, .q8_0), (.q8_1, 32, 36, nil), (.q2_K, 256, 84, .q8_K), (.q3_K, 256, 110, .q8_K),
            (.q4_K, 256, 144, .q8_K), (.q5_K, 256, 176, .q8_K), (.iq4_NL, 32, 18, .q8_0), (.iq4_XS, 256, 136, .q8_K),
            (.q6_K, 256, 210, .q8_K), (.q8_K, 256, 292, nil),
        ]
        for (t, size, bytes, dot) in expected {
            #expect(ra_type_supported(t.id) == 1, "\(t)")
            #expect(t.blockSize == size, "\(t)")
            #expect(t.blockBytes == bytes, "\(t)")
            #expect(ra_vec_dot_type(t.id) == (dot?.id ?? -1), "\(t)")
        }
        #expect(ra_row_bytes(KType.q4_K.id, 4096) == 16 * 144)
        #expect(ra_row_bytes(KType.q4_0.id, 33) == -1)
        for unsupported: Int32 in [4, 5, 16, 17, 18, 19, 21, 22, 99, -1] {   // (Q4_2, Q4_3, the IQ1/IQ2/IQ3 types, ...)
            #expect(ra_type_supported(unsupported) == 0)
            #expect(ra_type_block_size(unsupported) == 0)
            #expect(ra_row_bytes(unsupported, 256) == 0)
            #expect(ra_vec_dot_type(unsupported) == -1)
        }
    }

    @Test("F32, F16 and BF16 rows decode element by element")
    func floatRows() {
        let f16: [UInt8] = [0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B, 0x01, 0x00, 0x00, 0x7C, 0x00, 0x80]
        let d = Kernels.dequantize(.f16, f16, count: 6)
        #expect(d[0] == 1 && d[1] == -2 && d[2] == 65504 && d[3] == 0x1p-24 && d[4] == .infinity)
        #expect(d[5] == 0 && d[5].sign == .minus)
        let bf: [UInt8] = [0x80, 0x3F, 0x40, 0xC0, 0x80, 0x7F]
        #expect(Kernels.dequantize(.bf16, bf, count: 3) == [1, -3, .infinity])
        var f32 = [UInt8](repeating: 0, count: 8)
        f32.putFloat(1.5, at: 0)
        f32.putFloat(-7.25, at: 4)
        #expect(Kernels.dequantize(.f32, f32, count: 2) == [1.5, -7.25])
    }

    @Test("Q4_0: low nibbles are elements 0-15, high nibbles 16-31, offset 8")
    func q4_0() {
        var b = [UInt8](repeating: 0x9F, count: 18)   // low nibble 15, high nibble 9
        b.putHalf(0.5, at: 0)
        b[2] = 0x80                                    // element 0: 0 - 8, element 16: 8 - 8
        let y = Kernels.dequantize(.q4_0, b, count: 32)
        #expect(y[0] == -4 && y[16] == 0)
        #expect(y[1...15].allSatisfy { $0 == 3.5 })    // (15 - 8) * 0.5
        #expect(y[17...31].allSatisfy { $0 == 0.5 })   // (9 - 8) * 0.5
    }

    @Test("Q4_1: nibble times d plus m")
    func q4_1() {
        var b = [UInt8](repeating: 0x3A, count: 20)
        b.putHalf(0.5, at: 0)
        b.putHalf(-1, at: 2)
        let y = Kernels.dequantize(.q4_1, b, count: 32)
        #expect(y[0..<16].allSatisfy { $0 == 4 })      // 10 * 0.5 - 1
        #expect(y[16..<32].allSatisfy { $0 == 0.5 })   // 3 * 0.5 - 1
    }

    @Test("Q5_0 and Q5_1: bit j of qh is the fifth bit of element j (bit j+16 of element j+16)")
    func q5() {
        // qh little-endian: bit 0 (element 0) and bit 17 (element 17) set
        var b0 = [UInt8](repeating: 0x21, count: 22)
        b0.putHalf(1, at: 0)
        b0[2] = 0x01; b0[3] = 0x00; b0[4] = 0x02; b0[5] = 0x00
        let y0 = Kernels.dequantize(.q5_0, b0, count: 32)
        #expect(y0[0] == 1 && y0[1] == -15 && y0[15] == -15)   // (1|16)-16, 1-16
        #expect(y0[16] == -14 && y0[17] == 2 && y0[31] == -14) // 2-16, (2|16)-16

        var b1 = [UInt8](repeating: 0x21, count: 24)
        b1.putHalf(2, at: 0)
        b1.putHalf(1, at: 2)
        b1[4] = 0x01; b1[5] = 0x00; b1[6] = 0x02; b1[7] = 0x00
        let y1 = Kernels.dequantize(.q5_1, b1, count: 32)
        #expect(y1[0] == 35 && y1[1] == 3 && y1[16] == 5 && y1[17] == 37)
    }

    @Test("Q8_0, Q8_1 and Q8_K: int8 times the scale")
    func q8() {
        var b = [UInt8](repeating: 0, count: 34)
        b.putHalf(0.25, at: 0)
        for j in 0..<32 { b[2 + j] = UInt8(bitPattern: Int8(j - 16)) }
        #expect(Kernels.dequantize(.q8_0, b, count: 32) == (0..<32).map { Float($0 - 16) * 0.25 })

        var b1 = [UInt8](repeating: 0, count: 36)
        b1.putHalf(-2, at: 0)
        for j in 0..<32 { b1[4 + j] = UInt8(bitPattern: Int8(j)) }
        #expect(Kernels.dequantize(.q8_1, b1, count: 32) == (0..<32).map { Float($0) * -2 })

        var k = [UInt8](repeating: 0, count: 292)
        k.putFloat(0.125, at: 0)
        for j in 0..<256 { k[4 + j] = UInt8(j) }    // int8: 0...127, -128...-1
        let yk = Kernels.dequantize(.q8_K, k, count: 256)
        #expect(yk == (0..<256).map { Float(Int8(truncatingIfNeeded: $0)) * 0.125 })
    }

    /// Packs 8 six-bit scales and mins the way the K-quants store them in 12 bytes.
    private func packScales(_ sc: [UInt8], _ m: [UInt8]) -> [UInt8] {
        var s = [UInt8](repeating: 0, count: 12)
        for j in 0..<4 {
            s[j] = sc[j] | ((sc[j + 4] >> 4) << 6)
            s[j + 4] = m[j] | ((m[j + 4] >> 4) << 6)
            s[j + 8] = (sc[j + 4] & 15) | ((m[j + 4] & 15) << 4)
        }
        return s
    }

    @Test("Q4_K: six-bit scales and mins per 32 elements, low nibbles first in each 64")
    func q4_K() {
        let sc: [UInt8] = [1, 2, 3, 4, 40, 50, 60, 63], m: [UInt8] = [0, 5, 10, 15, 20, 33, 47, 63]
        var b = [UInt8](repeating: 0x5A, count: 144)   // low nibble 10, high nibble 5
        b.putHalf(1, at: 0)
        b.putHalf(0.5, at: 2)
        b.replaceSubrange(4..<16, with: packScales(sc, m))
        let y = Kernels.dequantize(.q4_K, b, count: 256)
        for j in 0..<8 {
            let q: Float = j % 2 == 0 ? 10 : 5
            let want = Float(sc[j]) * q - 0.5 * Float(m[j])
            #expect(y[(32 * j)..<(32 * j + 32)].allSatisfy { $0 == want }, "sub-block \(j)")
        }
    }

    @Test("Q5_K: like Q4_K with bit j of qh[l] as the fifth bit of sub-block j")
    func q5_K() {
        let sc: [UInt8] = [1, 2, 3, 4, 40, 50, 60, 63], m: [UInt8] = [0, 5, 10, 15, 20, 33, 47, 63]
        var b = [UInt8](repeating: 0x5A, count: 176)
        b.putHalf(1, at: 0)
        b.putHalf(0.5, at: 2)
        b.replaceSubrange(4..<16, with: packScales(sc, m))
        for l in 0..<32 { b[16 + l] = 0b1010_0110 }   // sub-blocks 1, 2, 5, 7 get +16
        let y = Kernels.dequantize(.q5_K, b, count: 256)
        for j in 0..<8 {
            let high: Float = (0b1010_0110 >> j) & 1 == 1 ? 16 : 0
            let q: Float = (j % 2 == 0 ? 10 : 5) + high
            let want = Float(sc[j]) * q - 0.5 * Float(m[j])
            #expect(y[(32 * j)..<(32 * j + 32)].allSatisfy { $0 == want }, "sub-block \(j)")
        }
    }

    @Test("Q6_K: four low bits in ql, two high bits in qh, int8 scale per 16 elements, offset 32")
    func q6_K() {
        var b = [UInt8](repeating: 0, count: 210)
        for i in 0..<128 { b[i] = 0x3C }                 // low nibble 12, high nibble 3
        for i in 0..<64 { b[128 + i] = 0b11_10_01_00 }   // high bits 0, 1, 2, 3 for the four quarters
        for k in 0..<16 { b[192 + k] = UInt8(bitPattern: Int8(k - 8)) }
        b.putHalf(0.5, at: 208)
        let y = Kernels.dequantize(.q6_K, b, count: 256)
        // quarter r of each 128 elements: q = (nibble | two high bits << 4) - 32; quarters 0/1 take the low
        // nibbles of ql[0..<32] / ql[32..<64], quarters 2/3 their high nibbles; qh bits 2r..2r+1
        let q: [Float] = [12 - 32, 12 + 16 - 32, 3 + 32 - 32, 3 + 48 - 32]
        for e in 0..<256 {
            let r = (e % 128) / 32
            let want = 0.5 * Float(e / 16 - 8) * q[r]
            #expect(y[e] == want, "element \(e)")
        }
    }

    @Test("Q2_K: a scale (low nibble) and min (high nibble) byte per 16 elements, two-bit quants four to a byte, d and dmin")
    func q2_K() {
        var b = [UInt8](repeating: 0, count: 84)
        for k in 0..<16 { b[k] = UInt8(k) | UInt8(15 - k) << 4 }   // scale k, min 15 - k
        for l in 0..<32 {
            b[16 + l] = 0b11_10_01_00        // first 128 elements: run c (bits 2c, 2c+1) holds c
            b[16 + 32 + l] = 0b00_01_10_11   // next 128: run c holds 3 - c
        }
        b.putHalf(0.5, at: 80)
        b.putHalf(0.25, at: 82)
        let y = Kernels.dequantize(.q2_K, b, count: 256)
        for e in 0..<256 {
            let c = (e % 128) / 32, k = e / 16
            let q = e < 128 ? c : 3 - c
            #expect(y[e] == 0.5 * Float(k) * Float(q) - 0.25 * Float(15 - k), "element \(e)")
        }
    }

    @Test("Q3_K: two low bits in qs, the third in hmask (clear: minus 4), six-bit scales in 12 bytes with offset 32")
    func q3_K() {
        var b = [UInt8](repeating: 0, count: 110)
        for l in 0..<32 { b[l] = 0b1010_0101 }   // hmask: bit 4h + c set for (h, c) = (0, 0), (0, 2), (1, 1), (1, 3)
        for l in 0..<32 {
            b[32 + l] = 0b11_10_01_00        // first 128 elements: run c's two low bits are c
            b[32 + 32 + l] = 0b00_01_10_11   // next 128: 3 - c
        }
        // scale k = 4k + 3 (0..63): its low four bits in byte k % 8 (low nibble for k < 8, high nibble above), its
        // top two bits in byte 8 + k % 4 at bits 2 (k / 4)
        let scales = (0..<16).map { 4 * $0 + 3 }
        for (k, s) in scales.enumerated() {
            b[96 + k % 8] |= UInt8(s & 15) << (k < 8 ? 0 : 4)
            b[96 + 8 + k % 4] |= UInt8(s >> 4) << (2 * (k / 4))
        }
        b.putHalf(0.5, at: 108)
        let y = Kernels.dequantize(.q3_K, b, count: 256)
        for e in 0..<256 {
            let h = e / 128, c = (e % 128) / 32
            let low = h == 0 ? c : 3 - c
            let high = (0b1010_0101 >> (4 * h + c)) & 1 == 1
            let q = low - (high ? 0 : 4)
            #expect(y[e] == 0.5 * Float(scales[e / 16] - 32) * Float(q), "element \(e)")
        }
    }

    static let iq4Levels: [Float] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]

    @Test("IQ4_NL: d times one of 16 non-linear levels, low nibbles elements 0-15, high nibbles 16-31")
    func iq4_NL() {
        var b = [UInt8](repeating: 0, count: 18)
        b.putHalf(0.5, at: 0)
        for j in 0..<16 { b[2 + j] = UInt8(j) | UInt8(15 - j) << 4 }
        let y = Kernels.dequantize(.iq4_NL, b, count: 32)
        for j in 0..<16 {
            #expect(y[j] == 0.5 * Self.iq4Levels[j], "element \(j)")
            #expect(y[j + 16] == 0.5 * Self.iq4Levels[15 - j], "element \(j + 16)")
        }
    }

    @Test("IQ4_XS: IQ4_NL's levels in 8 blocks of 32 under one d, each block's six-bit scale (4 bits in scales_l, 2 in scales_h) minus 32")
    func iq4_XS() {
        var b = [UInt8](repeating: 0, count: 136)
        b.putHalf(0.25, at: 0)
        let scales = (0..<8).map { 7 * $0 + 9 }   // 9 ... 58
        var high = 0
        for (j, s) in scales.enumerated() {
            b[4 + j / 2] |= UInt8(s & 15) << (4 * (j % 2))
            high |= (s >> 4) << (2 * j)
        }
        b[2] = UInt8(high & 0xFF)
        b[3] = UInt8(high >> 8)
        for k in 0..<128 { b[8 + k] = UInt8(k % 16) | UInt8((k / 16) % 16) << 4 }
        let y = Kernels.dequantize(.iq4_XS, b, count: 256)
        for e in 0..<256 {
            let j = e / 32, l = e % 32, byte = 16 * j + l % 16
            let nibble = l < 16 ? byte % 16 : (byte / 16) % 16
            #expect(y[e] == 0.25 * Float(scales[j] - 32) * Self.iq4Levels[nibble], "element \(e)")
        }
    }
}
