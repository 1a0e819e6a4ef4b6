/// The tokenizer stored in a GGUF file (`tokenizer.ggml.*`), matching llama.cpp token for token.
///
/// Supports SentencePiece-style vocabularies (`tokenizer.ggml.model = "llama"`: Llama 2,
/// TinyLlama, Mistral v0.1 ...) and byte-level BPE (`"gpt2"`) with the pre-tokenizers of
/// GPT-2, Llama 3, Qwen2/2.5/3, SmolLM, StarCoder, DeepSeek LLM and llama.cpp's default.
///
/// ```swift
/// let tokenizer = try GGUFTokenizer(file: GGUFFile(path: "qwen2.5-0.5b-instruct-q4_k_m.gguf"))
/// let ids = tokenizer.encode("Hello world")          // BOS added when the model wants one
/// let text = tokenizer.decode(ids)                    // "Hello world"
/// ```
///
/// Immutable after creation; safe to share between threads.
public final class GGUFTokenizer: Sendable {
    let vocabulary: TokenizerVocabulary

    /// Reads the tokenizer of a GGUF file.
    /// - Throws: `GGUFError`: `.invalidFormat` when the vocabulary is missing or malformed,
    ///   `.unsupported` for a tokenizer model or pre-tokenizer this code does not implement.
    public convenience init(file: GGUFFile) throws {
        try self.init(metadata: Metadata(file: file))
    }

    /// Builds a tokenizer from plain vocabulary data (what `tokenizer.ggml.*` holds).
    /// - Throws: `GGUFError` as `init(file:)`.
    public init(metadata: Metadata) throws {
        vocabulary = try TokenizerVocabulary(metadata)
    }

    /// Number of tokens in the vocabulary.
    public var vocabularySize: Int { vocabulary.count }
    /// The beginning-of-sequence token, if the vocabulary has one.
    public var bosTokenId: Int32? { vocabulary.bos }
    /// The end-of-sequence token, if the vocabulary has one.
    public var eosTokenId: Int32? { vocabulary.eos }
    /// The end-of-turn token (metadata, or recognised by text such as `<|im_end|>`, `<|eot_id|>`).
    public var eotTokenId: Int32? { vocabulary.eot }
    /// The unknown token, if any.
    public var unknownTokenId: Int32? { vocabulary.unk }
    /// The padding token, if any.
    public var paddingTokenId: Int32? { vocabulary.pad }
    /// Whether `encode(_:addSpecial: true)` starts with BOS (metadata, else llama.cpp's default).
    public var addsBOS: Bool { vocabulary.addBOS }
    /// Whether `encode(_:addSpecial: true)` ends with EOS.
    public var addsEOS: Bool { vocabulary.addEOS }
    /// Every token that ends generation (EOS, EOT and end-of-turn tokens such as `<|im_end|>`).
    public var endOfGenerationTokenIds: Set<Int32> { vocabulary.endOfGeneration }

    /// Tokenizes text as `llama_tokenize` does.
    /// - Parameters:
    ///   - addSpecial: add BOS/EOS where the model asks for them.
    ///   - parseSpecial: turn the text of control tokens (`<|im_start|>` ...) into those tokens;
    ///     when false such text is tokenized as plain text. User-defined tokens are always matched.
    public func encode(_ text: String, addSpecial: Bool = true, parseSpecial: Bool = false) -> [Int32] {
        vocabulary.encode(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    /// Turns token ids back into text, as `llama_detokenize`.
    /// - Parameter removeSpecial: drop a leading BOS / trailing EOS the model adds and render
    ///   control tokens as nothing; when false they are kept and written as their text.
    ///   Invalid UTF-8 (a sequence cut mid-character) becomes U+FFFD.
    public func decode(_ ids: [Int32], removeSpecial: Bool = true) -> String {
        let bytes = vocabulary.detokenize(ids, removeSpecial: removeSpecial, unparseSpecial: !removeSpecial)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The bytes a token stands for, as `llama_token_to_piece(special: true)`: SentencePiece `▁`
    /// becomes a space and `<0xXX>` that byte; byte-level BPE text maps back to raw bytes;
    /// control tokens give their text. Empty for an id outside the vocabulary.
    public func piece(for id: Int32) -> [UInt8] {
        Array(vocabulary.piece(id, special: true))
    }

    /// The bytes of a token as generated text shows it: like `piece(for:)`, but control and
    /// unknown tokens (BOS, `<|im_end|>` ...) are empty.
    public func visiblePiece(for id: Int32) -> [UInt8] {
        Array(vocabulary.piece(id, special: false))
    }

    /// The raw text of a token as stored in the vocabulary (e.g. `"▁Hello"`, `"Ġworld"`), or nil.
    public func tokenText(for id: Int32) -> String? {
        guard id >= 0, Int(id) < vocabulary.count else { return nil }
        return String(decoding: vocabulary.textBytes(of: Int(id)), as: UTF8.self)
    }

    /// The id of the token whose vocabulary text is exactly `text`, or nil.
    public func tokenId(forText text: String) -> Int32? {
        vocabulary.id(ofText: text)
    }

    /// Whether generating this token should end generation (EOS, EOT, `<|im_end|>` ...).
    public func isEndOfGeneration(_ id: Int32) -> Bool {
        vocabulary.endOfGeneration.contains(id)
    }

    /// Whether this is a control token (BOS, EOS, chat markers ...).
    public func isControl(_ id: Int32) -> Bool {
        guard id >= 0, Int(id) < vocabulary.count else { return false }
        return vocabulary.attributes[Int(id)].contains(.control)
    }
}
