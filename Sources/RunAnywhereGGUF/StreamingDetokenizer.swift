/// Turns generated tokens into text as they arrive, never emitting half a UTF-8 character.
///
/// A character split across tokens (common for emoji and CJK with byte-fallback or byte-level
/// vocabularies) is held back until its last byte arrives. Control tokens (`<|im_end|>`, EOS)
/// produce no text unless `renderSpecialTokens` is set.
///
/// ```swift
/// var detokenizer = StreamingDetokenizer(tokenizer: tokenizer)
/// for id in generated { print(detokenizer.append(id), terminator: "") }
/// print(detokenizer.flush())
/// ```
public struct StreamingDetokenizer: Sendable {
    private let tokenizer: GGUFTokenizer
    private let renderSpecialTokens: Bool
    private var pending: [UInt8] = []

    /// A detokenizer that renders control tokens as nothing.
    public init(tokenizer: GGUFTokenizer) {
        self.init(tokenizer: tokenizer, renderSpecialTokens: false)
    }

    /// A detokenizer; `renderSpecialTokens` writes control tokens as their text.
    public init(tokenizer: GGUFTokenizer, renderSpecialTokens: Bool) {
        self.tokenizer = tokenizer
        self.renderSpecialTokens = renderSpecialTokens
    }

    /// Adds a token; returns the text that is now complete (possibly empty).
    public mutating func append(_ id: Int32) -> String {
        pending.append(contentsOf: tokenizer.vocabulary.piece(id, special: renderSpecialTokens))
        let cut = StreamingDetokenizer.completePrefixLength(pending)
        guard cut > 0 else { return "" }
        let text = String(decoding: pending[..<cut], as: UTF8.self)
        pending.removeFirst(cut)
        return text
    }

    /// Returns whatever is still held back (an unfinished character becomes U+FFFD) and resets.
    public mutating func flush() -> String {
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    /// The length of the longest prefix that does not end inside an unfinished UTF-8 sequence.
    /// A trailing sequence is held back only while it could still become valid.
    static func completePrefixLength(_ bytes: [UInt8]) -> Int {
        let n = bytes.count
        var i = n - 1
        // Find the start of the last sequence (at most 3 continuation bytes back).
        while i >= 0, n - i <= 4, bytes[i] & 0xC0 == 0x80 { i -= 1 }
        guard i >= 0, n - i <= 4 else { return n }
        let lead = bytes[i]
        let needed: Int
        switch lead {
        case 0xC2...0xDF: needed = 2
        case 0xE0...0xEF: needed = 3
        case 0xF0...0xF4: needed = 4
        default: return n     // ASCII or a byte that can never start a sequence
        }
        return n - i < needed ? i : n
    }
}
