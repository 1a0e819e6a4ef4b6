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
    private var text = UTF8Accumulator()

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
        text.append(tokenizer.vocabulary.piece(id, special: renderSpecialTokens))
    }

    /// Returns whatever is still held back (an unfinished character becomes U+FFFD) and resets.
    public mutating func flush() -> String {
        text.flush()
    }
}
