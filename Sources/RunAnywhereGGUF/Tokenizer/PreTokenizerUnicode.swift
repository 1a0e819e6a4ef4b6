/// Unicode character classes used by the BPE pre-tokenizers.
///
/// Each code point gets a small bit set: its general-category family (letter, number,
/// punctuation, symbol, mark, other) plus whether it has the Unicode `White_Space` property.
/// The BMP is tabulated once (64 KiB); supplementary planes are classified on demand.
enum CodepointClass {
    static let letter: UInt8 = 0x01       // \p{L}
    static let number: UInt8 = 0x02       // \p{N}
    static let whitespace: UInt8 = 0x04   // White_Space
    static let punctuation: UInt8 = 0x08  // \p{P}
    static let symbol: UInt8 = 0x10       // \p{S}
    static let mark: UInt8 = 0x20         // \p{M}
    static let other: UInt8 = 0x40        // separators, controls, format, unassigned, private use

    /// Class of every code point in the Basic Multilingual Plane.
    static let bmpTable: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 0x10000)
        for cp in 0..<0x10000 { table[cp] = compute(UInt32(cp)) }
        return table
    }()

    /// Class bits of a code point (never zero for a valid code point).
    @inline(__always)
    static func of(_ cp: UInt32) -> UInt8 {
        if cp < 0x10000 { return bmpTable.withUnsafeBufferPointer { $0[Int(cp)] } }
        return compute(cp)
    }

    static func compute(_ cp: UInt32) -> UInt8 {
        guard let scalar = Unicode.Scalar(cp) else { return other }   // surrogate halves
        var bits: UInt8
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
            bits = letter
        case .decimalNumber, .letterNumber, .otherNumber:
            bits = number
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
             .initialPunctuation, .finalPunctuation, .otherPunctuation:
            bits = punctuation
        case .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            bits = symbol
        case .nonspacingMark, .spacingMark, .enclosingMark:
            bits = mark
        default:
            bits = other
        }
        if scalar.properties.isWhitespace { bits |= whitespace }
        return bits
    }
}

/// A text fragment decoded into code points, with the class of each and the UTF-8 byte
/// offset where each starts (plus one final offset = byte length).
struct DecodedFragment {
    var codepoints: [UInt32] = []
    var classes: [UInt8] = []
    var byteOffsets: [Int32] = []

    /// Decodes `bytes` (valid UTF-8; invalid sequences become U+FFFD one byte at a time).
    mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>) {
        codepoints.removeAll(keepingCapacity: true)
        classes.removeAll(keepingCapacity: true)
        byteOffsets.removeAll(keepingCapacity: true)
        codepoints.reserveCapacity(bytes.count)
        classes.reserveCapacity(bytes.count)
        byteOffsets.reserveCapacity(bytes.count + 1)
        let n = bytes.count
        var i = 0
        while i < n {
            let b0 = bytes[i]
            byteOffsets.append(Int32(i))
            if b0 < 0x80 {
                codepoints.append(UInt32(b0))
                classes.append(asciiClass[Int(b0)])
                i += 1
                continue
            }
            var cp: UInt32 = 0xFFFD
            var len = 1
            if b0 & 0xE0 == 0xC0, i + 1 < n, bytes[i + 1] & 0xC0 == 0x80 {
                cp = UInt32(b0 & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F); len = 2
            } else if b0 & 0xF0 == 0xE0, i + 2 < n, bytes[i + 1] & 0xC0 == 0x80, bytes[i + 2] & 0xC0 == 0x80 {
                cp = UInt32(b0 & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F); len = 3
            } else if b0 & 0xF8 == 0xF0, i + 3 < n, bytes[i + 1] & 0xC0 == 0x80, bytes[i + 2] & 0xC0 == 0x80,
                      bytes[i + 3] & 0xC0 == 0x80 {
                cp = UInt32(b0 & 0x07) << 18 | UInt32(bytes[i + 1] & 0x3F) << 12
                    | UInt32(bytes[i + 2] & 0x3F) << 6 | UInt32(bytes[i + 3] & 0x3F)
                len = 4
            }
            codepoints.append(cp)
            classes.append(CodepointClass.of(cp))
            i += len
        }
        byteOffsets.append(Int32(n))
    }
}

/// Classes of the 128 ASCII code points (same values as `CodepointClass.of`).
let asciiClass: [UInt8] = (0..<128).map { CodepointClass.compute(UInt32($0)) }

/// The GPT-2 byte-to-character mapping used by byte-level BPE vocabularies: printable bytes
/// stand for themselves, the other 68 bytes are moved to U+0100 and up, in byte order.
enum ByteLevelMapping {
    /// The code point that stands for each byte.
    static let codepointForByte: [UInt32] = {
        var map = [UInt32](repeating: 0, count: 256)
        var assigned = [Bool](repeating: false, count: 256)
        for b in 0x21...0x7E { map[b] = UInt32(b); assigned[b] = true }
        for b in 0xA1...0xAC { map[b] = UInt32(b); assigned[b] = true }
        for b in 0xAE...0xFF { map[b] = UInt32(b); assigned[b] = true }
        var next: UInt32 = 256
        for b in 0..<256 where !assigned[b] { map[b] = next; next += 1 }
        return map
    }()

    /// The byte each mapped code point stands for (code points 0..<0x144), or -1.
    static let byteForCodepoint: [Int16] = {
        var inverse = [Int16](repeating: -1, count: 0x144)
        for b in 0..<256 { inverse[Int(codepointForByte[b])] = Int16(b) }
        return inverse
    }()

    /// The raw bytes a mapped token text stands for, or nil if it has a character outside
    /// the mapping.
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            let v = scalar.value
            guard v < 0x144, byteForCodepoint[Int(v)] >= 0 else { return nil }
            out.append(UInt8(byteForCodepoint[Int(v)]))
        }
        return out
    }

    /// The raw bytes a mapped token text (as UTF-8) stands for, or nil if it has a character
    /// outside the mapping. Appends to `out` (which is cleared first).
    @inline(__always)
    static func decode(utf8 text: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        var i = 0
        let n = text.count
        while i < n {
            let b0 = text[i]
            var cp: Int
            if b0 < 0x80 {
                cp = Int(b0); i += 1
            } else if b0 & 0xE0 == 0xC0, i + 1 < n, text[i + 1] & 0xC0 == 0x80 {
                cp = Int(b0 & 0x1F) << 6 | Int(text[i + 1] & 0x3F); i += 2
            } else {
                return false
            }
            guard cp < 0x144 else { return false }
            let b = byteForCodepoint[cp]
            guard b >= 0 else { return false }
            out.append(UInt8(b))
        }
        return true
    }

    /// The mapped UTF-8 text for raw bytes.
    static func encode<S: Sequence>(_ bytes: S) -> [UInt8] where S.Element == UInt8 {
        var out: [UInt8] = []
        for b in bytes {
            let cp = codepointForByte[Int(b)]
            if cp < 0x80 {
                out.append(UInt8(cp))
            } else {
                out.append(UInt8(0xC0 | (cp >> 6)))
                out.append(UInt8(0x80 | (cp & 0x3F)))
            }
        }
        return out
    }
}
