/// The DeepSeek LLM pre-tokenizer: a chain of six splitting passes, each applied to every piece
/// the previous one produced (as llama.cpp applies the family's list of regexes).
extension ScanText {
    /// Letters of the second pass (`\s?[...]+`): Latin, Greek, Cyrillic, Armenian, Georgian,
    /// Cherokee, letterlike symbols, Glagolitic, Coptic, fullwidth Latin and a few more.
    static let deepSeekLetterRanges: [ClosedRange<UInt32>] = [
        0x41...0x5A, 0x61...0x7A, 0xB5...0xB5, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x1BA, 0x1BC...0x1BF,
        0x1C4...0x293, 0x295...0x2AF, 0x370...0x373, 0x376...0x377, 0x37B...0x37D, 0x37F...0x37F,
        0x386...0x386, 0x388...0x38A, 0x38C...0x38C, 0x38E...0x3A1, 0x3A3...0x3F5, 0x3F7...0x481,
        0x48A...0x52F, 0x531...0x556, 0x10A0...0x10C5, 0x13A0...0x13F5, 0x13F8...0x13FD,
        0x1C90...0x1CBA, 0x1CBD...0x1CBF, 0x1D00...0x1D2B, 0x1D6B...0x1D77, 0x1D79...0x1D9A,
        0x1E00...0x1F15, 0x1F18...0x1F1D, 0x1F20...0x1F45, 0x1F48...0x1F4D, 0x1F50...0x1F57,
        0x1F59...0x1F59, 0x1F5B...0x1F5B, 0x1F5D...0x1F5D, 0x1F5F...0x1F7D, 0x1F80...0x1FB4,
        0x1FB6...0x1FBC, 0x1FBE...0x1FBE, 0x1FC2...0x1FC4, 0x1FC6...0x1FCC, 0x1FD0...0x1FD3,
        0x1FD6...0x1FDB, 0x1FE0...0x1FEC, 0x1FF2...0x1FF4, 0x1FF6...0x1FFC, 0x2102...0x2102,
        0x2107...0x2107, 0x210A...0x2113, 0x2115...0x2115, 0x2119...0x211D, 0x2124...0x2124,
        0x2126...0x2126, 0x2128...0x2128, 0x212A...0x212D, 0x212F...0x2134, 0x2139...0x2139,
        0x213C...0x213F, 0x2145...0x2149, 0x214E...0x214E, 0x2183...0x2184, 0x2C00...0x2C7B,
        0x2C7E...0x2CE4, 0x2CEB...0x2CEE, 0x2CF2...0x2CF3, 0xA640...0xA66D, 0xA680...0xA69B,
        0xA722...0xA76F, 0xA771...0xA787, 0xA78B...0xA78E, 0xAB70...0xABBF, 0xFB00...0xFB06,
        0xFB13...0xFB17, 0xFF21...0xFF3A, 0xFF41...0xFF5A, 0x10400...0x1044F, 0x104B0...0x104D3,
        0x104D8...0x104FB, 0x10C80...0x10CB2, 0x10CC0...0x10CF2, 0x118A0...0x118DF, 0x1E900...0x1E943,
    ]
    /// Punctuation of the third pass: ASCII `!-/`, `:-~`, fullwidth forms, curly quotes, CJK marks.
    static let deepSeekPunctuationRanges: [ClosedRange<UInt32>] = [
        0x21...0x2F, 0x3A...0x7E, 0xFF01...0xFF0F, 0xFF1A...0xFF5E, 0x2018...0x201F, 0x3000...0x3002,
    ]
    /// CJK of the fifth pass: U+4E00–U+9FA5, U+0800–U+4E00, U+AC00–U+D7FF.
    static let deepSeekCJKRanges: [ClosedRange<UInt32>] = [0x4E00...0x9FA5, 0x0800...0x4E00, 0xAC00...0xD7FF]

    /// The code point as the wide-character regex sees it: non-ASCII whitespace becomes U+000B.
    @inline(__always) func wide(_ i: Int) -> UInt32 {
        let c = cps[i]
        return c > 0x7F && cls[i] & CodepointClass.whitespace != 0 ? 0x0B : c
    }

    @inline(__always) func isWideSpace(_ i: Int) -> Bool {
        let c = wide(i)
        return c == 0x20 || (0x09...0x0D).contains(c)
    }

    @inline(__always) static func contains(_ ranges: [ClosedRange<UInt32>], _ c: UInt32) -> Bool {
        for r in ranges where r.contains(c) { return true }
        return false
    }

    /// `\s?[set]+` match at `p`.
    func matchOptionalSpaceRun(_ p: Int, _ end: Int, _ ranges: [ClosedRange<UInt32>]) -> Int? {
        var q = p
        if isWideSpace(q), q + 1 < end, ScanText.contains(ranges, wide(q + 1)) { q += 1 }
        guard ScanText.contains(ranges, wide(q)) else { return nil }
        while q < end, ScanText.contains(ranges, wide(q)) { q += 1 }
        return q
    }

    func splitDeepSeekLLM(_ count: Int, _ ends: inout [Int32]) {
        var pieces: [Int32] = [0, Int32(count)]
        var next: [Int32] = []
        func pass(_ match: (Int, Int) -> Int?) {
            next = [0]
            regexPass(in: pieces, &next, match)
            pieces = next
        }
        pass { p, _ in (cps[p] == 0x0D || cps[p] == 0x0A) ? p + 1 : nil }
        pass { p, end in matchOptionalSpaceRun(p, end, ScanText.deepSeekLetterRanges) }
        pass { p, end in matchOptionalSpaceRun(p, end, ScanText.deepSeekPunctuationRanges) }
        // \s+$: the leftmost match is the whitespace run that reaches the end of the piece.
        next = [pieces[0]]
        for k in 1..<pieces.count {
            let start = Int(pieces[k - 1]), end = Int(pieces[k])
            var t = end
            while t > start, isWideSpace(t - 1) { t -= 1 }
            if t > start && t < end { next.append(Int32(t)) }
            next.append(Int32(end))
        }
        pieces = next
        pass { p, end in
            var q = p
            while q < end, ScanText.contains(ScanText.deepSeekCJKRanges, wide(q)) { q += 1 }
            return q > p ? q : nil
        }
        pass { p, end in
            var q = p
            while q < end, cls[q] & CodepointClass.number != 0 { q += 1 }
            return q > p ? q : nil
        }
        ends.append(contentsOf: pieces.dropFirst())
    }
}
