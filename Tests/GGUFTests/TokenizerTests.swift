import Foundation
import RunAnywhereGGUF
import Testing

/// Tiny hand-built vocabularies: no shared data needed.
enum TinyVocab {
    /// SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, then `pieces` with scores.
    static func sentencePiece(_ pieces: [(String, Float)], extraTypes: [String: Int32] = [:],
                              addBOS: Bool? = nil, modelName: String? = nil) throws -> GGUFTokenizer {
        var tokens = ["<unk>", "<s>", "</s>"]
        var types: [Int32] = [2, 3, 3]
        var scores: [Float] = [0, 0, 0]
        for b in 0..<256 {
            tokens.append(String(format: "<0x%02X>", b)); types.append(6); scores.append(0)
        }
        for (text, score) in pieces {
            tokens.append(text); types.append(extraTypes[text] ?? 1); scores.append(score)
        }
        return try GGUFTokenizer(metadata: .init(model: "llama", pre: "default", tokens: tokens, scores: scores,
                                                 tokenTypes: types, addBOS: addBOS, modelName: modelName))
    }

    /// The GPT-2 byte-to-character mapping.
    static let byteChar: [Character] = {
        var map = [UInt32](repeating: 0, count: 256)
        var used = Set<Int>()
        for b in 0x21...0x7E { map[b] = UInt32(b); used.insert(b) }
        for b in 0xA1...0xAC { map[b] = UInt32(b); used.insert(b) }
        for b in 0xAE...0xFF { map[b] = UInt32(b); used.insert(b) }
        var next: UInt32 = 256
        for b in 0..<256 where !used.contains(b) { map[b] = next; next += 1 }
        return map.map { Character(Unicode.Scalar($0)!) }
    }()

    static func mapped(_ text: String) -> String { String(text.utf8.map { byteChar[Int($0)] }) }

    /// Byte-level BPE vocabulary: the 256 byte tokens (ids 0-255 in byte order), then the
    /// results of `merges` (raw text, left and right separated by "|", e.g. "h|e"), then `specials`.
    static func bpe(pre: String, merges: [String], specials: [(String, Int32)] = [],
                    addBOS: Bool? = nil, bos: Int? = nil) throws -> GGUFTokenizer {
        var tokens = (0..<256).map { String(byteChar[$0]) }
        var types = [Int32](repeating: 1, count: 256)
        var mergeLines: [String] = []
        for m in merges {
            let parts = m.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            mergeLines.append(mapped(parts[0]) + " " + mapped(parts[1]))
            let result = mapped(parts[0] + parts[1])
            if !tokens.contains(result) { tokens.append(result); types.append(1) }
        }
        for (text, type) in specials { tokens.append(text); types.append(type) }
        return try GGUFTokenizer(metadata: .init(model: "gpt2", pre: pre, tokens: tokens, tokenTypes: types,
                                                 merges: mergeLines, bosTokenId: bos, addBOS: addBOS))
    }
}

@Suite("SentencePiece tokenizer (hand-built vocabulary)")
struct SentencePieceTokenizerTests {
    static let pieces: [(String, Float)] = [
        ("▁", -1), ("h", -2), ("e", -2), ("l", -2), ("o", -2), ("w", -2), ("r", -2), ("d", -2),
        ("he", -3), ("ll", -1), ("hell", -4), ("hello", -5), ("▁hello", -6), ("▁w", -7), ("or", -8),
        ("▁wor", -9), ("ld", -10), ("▁world", -11),
    ]

    @Test("adds the ▁ prefix, merges by score and prepends BOS")
    func basicEncoding() throws {
        let t = try TinyVocab.sentencePiece(Self.pieces)
        let hello = try #require(t.tokenId(forText: "▁hello")), world = try #require(t.tokenId(forText: "▁world"))
        #expect(t.addsBOS)
        #expect(t.encode("hello world") == [1, hello, world])
        #expect(t.encode("hello world", addSpecial: false) == [hello, world])
        #expect(t.encode("", addSpecial: true) == [1])
        #expect(t.encode("", addSpecial: false) == [])
    }

    @Test("falls back to <0xXX> byte tokens for characters not in the vocabulary")
    func byteFallback() throws {
        let t = try TinyVocab.sentencePiece(Self.pieces)
        let ids = t.encode("é", addSpecial: false)
        let space = try #require(t.tokenId(forText: "▁"))
        let expected: [Int32] = [space, 3 + 0xC3, 3 + 0xA9]
        #expect(ids == expected)
        #expect(t.piece(for: 3 + 0xC3) == [0xC3])
        #expect(t.decode(ids) == "é")
    }

    @Test("decodes ▁ as spaces and drops the prefix space only without BOS")
    func decoding() throws {
        let t = try TinyVocab.sentencePiece(Self.pieces)
        #expect(t.decode(t.encode("hello world", addSpecial: false)) == "hello world")
        #expect(t.decode(t.encode("hello world")) == " hello world")
        #expect(t.decode(t.encode("hello world"), removeSpecial: false) == "<s> hello world")
        #expect(t.piece(for: 1) == Array("<s>".utf8))
    }

    @Test("control-token text is plain text unless parseSpecial is set")
    func controlTokens() throws {
        let t = try TinyVocab.sentencePiece(Self.pieces)
        let plain = t.encode("</s>", addSpecial: false)
        #expect(!plain.contains(2))
        #expect(t.encode("hello</s>", addSpecial: false, parseSpecial: true).last == 2)
        #expect(t.isEndOfGeneration(2))
        #expect(!t.isEndOfGeneration(1))
    }

    @Test("Phi-3 models drop the whitespace after special tokens, others keep it")
    func phi3RightStrip() throws {
        let pieces = Self.pieces + [("<|user|>", 0), ("<|end|>", 0), ("<|assistant|>", 0)]
        let types: [String: Int32] = ["<|user|>": 3, "<|end|>": 3, "<|assistant|>": 3]
        let phi = try TinyVocab.sentencePiece(pieces, extraTypes: types, modelName: "Phi-3-mini-4k-instruct")
        let other = try TinyVocab.sentencePiece(pieces, extraTypes: types)
        let user = try #require(phi.tokenId(forText: "<|user|>")), end = try #require(phi.tokenId(forText: "<|end|>"))
        let assistant = try #require(phi.tokenId(forText: "<|assistant|>"))
        let hello = try #require(phi.tokenId(forText: "▁hello"))
        let prompt = "<|user|>\nhello<|end|>\n<|assistant|>\n"
        #expect(phi.encode(prompt, addSpecial: false, parseSpecial: true) == [user, hello, end, assistant])
        let plain = other.encode(prompt, addSpecial: false, parseSpecial: true)
        #expect(plain.count > 4)
        #expect(plain.contains(3 + 0x0A))   // the newline survives as byte token <0x0A>
    }

    @Test("metadata add_bos_token false is respected")
    func addBOSOverride() throws {
        let t = try TinyVocab.sentencePiece(Self.pieces, addBOS: false)
        #expect(!t.addsBOS)
        #expect(t.encode("hello").first != 1)
    }
}

@Suite("Byte-level BPE tokenizer (hand-built vocabulary)")
struct BPETokenizerTests {
    @Test("merges by rank inside words split by the GPT-2 pre-tokenizer")
    func gpt2Merges() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: ["h|e", "l|l", "he|ll", "hell|o", " |w", " w|o"])
        let hello = try #require(t.tokenId(forText: "hello"))
        let spaceW = try #require(t.tokenId(forText: TinyVocab.mapped(" wo")))
        #expect(t.encode("hello wo") == [hello, spaceW])
        #expect(!t.addsBOS)
        // A merge never crosses a word boundary: "o" + " " is not merged even with a rule.
        #expect(t.decode(t.encode("hello wo")) == "hello wo")
    }

    @Test("maps UTF-8 bytes through the byte-level alphabet and back")
    func utf8Bytes() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: [])
        let ids = t.encode("é€", addSpecial: false)
        #expect(ids == [0xC3, 0xA9, 0xE2, 0x82, 0xAC])
        #expect(t.piece(for: 0xC3) == [0xC3])
        #expect(t.decode(ids) == "é€")
    }

    @Test("digits group by three for llama-bpe, one for qwen2, unlimited for gpt-2")
    func digitGrouping() throws {
        let merges = ["1|2", "12|3", "123|4"]
        let gpt2 = try TinyVocab.bpe(pre: "gpt-2", merges: merges)
        let llama3 = try TinyVocab.bpe(pre: "llama-bpe", merges: merges, addBOS: false)
        let qwen2 = try TinyVocab.bpe(pre: "qwen2", merges: merges)
        #expect(gpt2.encode("1234").count == 1)
        #expect(llama3.encode("1234").count == 2)
        #expect(qwen2.encode("1234").count == 4)
        let smollm = try TinyVocab.bpe(pre: "smollm", merges: merges)
        #expect(smollm.encode("1234").count == 4)
    }

    @Test("contractions are case-insensitive for llama-bpe and case-sensitive for gpt-2")
    func contractions() throws {
        let merges = ["'|S", "'|s"]
        let gpt2 = try TinyVocab.bpe(pre: "gpt-2", merges: merges)
        let llama3 = try TinyVocab.bpe(pre: "llama-bpe", merges: merges, addBOS: false)
        #expect(gpt2.encode("it's").count == 3)     // it | 's
        #expect(gpt2.encode("IT'S").count == 4)     // IT | ' | S (no upper-case contraction)
        #expect(llama3.encode("IT'S").count == 3)   // IT | 'S
    }

    @Test("llama-bpe adds BOS by default and emits whole-word tokens directly")
    func llama3Defaults() throws {
        let t = try TinyVocab.bpe(pre: "llama-bpe", merges: ["a|b", "ab|c"], specials: [("<|begin_of_text|>", 3)], bos: 258)
        #expect(t.addsBOS)
        #expect(t.encode("abc") == [258, 257])
    }

    @Test("long words merge in the same order as short ones")
    func longWords() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: ["a|a", "aa|aa"])
        let aaaa = try #require(t.tokenId(forText: "aaaa"))
        #expect(t.encode(String(repeating: "a", count: 40)) == [Int32](repeating: aaaa, count: 10))
        #expect(t.encode(String(repeating: "a", count: 400)) == [Int32](repeating: aaaa, count: 100))
        let aa = try #require(t.tokenId(forText: "aa"))
        #expect(t.encode(String(repeating: "a", count: 402)) == [Int32](repeating: aaaa, count: 100) + [aa])
    }

    @Test("long runs of whitespace and letters take linear time with every pre-tokenizer",
          arguments: ["gpt-2", "llama-bpe", "qwen2", "smollm", "deepseek-llm", "default"])
    func pathologicalInput(pre: String) throws {
        let t = try TinyVocab.bpe(pre: pre, merges: [" | ", "a|a"], addBOS: false)
        let text = String(repeating: " ", count: 100_000) + "x" + String(repeating: "a", count: 100_000) + "\n"
        let start = Date()
        let ids = t.encode(text)
        #expect(Date().timeIntervalSince(start) < 20)
        #expect(t.decode(ids) == text)
    }

    @Test("user-defined tokens are always split out; control tokens only with parseSpecial")
    func specialTokens() throws {
        let t = try TinyVocab.bpe(pre: "qwen2", merges: [],
                                  specials: [("<|im_end|>", 3), ("[PAD1]", 4), ("<tool>", 4)])
        let imEnd = try #require(t.tokenId(forText: "<|im_end|>"))
        let pad = try #require(t.tokenId(forText: "[PAD1]"))
        #expect(t.encode("a[PAD1]b") == [97, pad, 98])
        #expect(!t.encode("a<|im_end|>").contains(imEnd))
        #expect(t.encode("a<|im_end|>", parseSpecial: true) == [97, imEnd])
        #expect(t.isEndOfGeneration(imEnd))
        #expect(t.eotTokenId == imEnd)
        #expect(t.decode([97, imEnd]) == "a")
        #expect(t.decode([97, imEnd], removeSpecial: false) == "a<|im_end|>")
        #expect(t.piece(for: imEnd) == Array("<|im_end|>".utf8))
    }

    @Test("the longest special token wins where two overlap")
    func overlappingSpecials() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: [], specials: [("<ab>", 4), ("b>cde", 4)])
        let long = try #require(t.tokenId(forText: "b>cde"))
        // llama.cpp takes longer texts first: "b>cde" claims its bytes, so "<ab>" no longer fits.
        #expect(t.encode("<ab>cde") == [60, 97, long])
    }

    @Test("GPT-2 style decoding removes the space before punctuation and contractions")
    func cleanSpaces() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: [])
        #expect(t.decode(t.encode("Hi , there ! it 's")) == "Hi, there! it's")
        let q = try TinyVocab.bpe(pre: "qwen2", merges: [])
        #expect(q.decode(q.encode("Hi , there")) == "Hi , there")
    }
}

@Suite("Tokenizer metadata errors")
struct TokenizerErrorTests {
    @Test("unknown tokenizer models and pre-tokenizers are unsupported, naming them")
    func unsupported() {
        #expect(throws: GGUFError.self) { try GGUFTokenizer(metadata: .init(model: "bert", tokens: ["a"])) }
        do {
            _ = try GGUFTokenizer(metadata: .init(model: "gpt2", pre: "mystery", tokens: ["a"], merges: []))
            Issue.record("expected an error")
        } catch let error as GGUFError {
            #expect(error.kind == .unsupported)
            #expect(error.message.contains("mystery"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("a BPE vocabulary without merges, or with duplicate tokens, is invalid")
    func invalid() {
        #expect(throws: GGUFError(.invalidFormat, "BPE tokenizer without merges (tokenizer.ggml.merges is missing)")) {
            try GGUFTokenizer(metadata: .init(model: "gpt2", pre: "gpt-2", tokens: ["a"]))
        }
        #expect(throws: GGUFError.self) {
            try GGUFTokenizer(metadata: .init(model: "llama", tokens: ["a", "b", "a"]))
        }
        #expect(throws: GGUFError.self) {
            try GGUFTokenizer(metadata: .init(model: "llama", tokens: ["a"], scores: []))
        }
    }
}

@Suite("Streaming detokenizer")
struct StreamingDetokenizerTests {
    @Test("holds back a character split across byte tokens until it is complete")
    func splitCharacter() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: [])
        var d = StreamingDetokenizer(tokenizer: t)
        #expect(d.append(0x41) == "A")
        #expect(d.append(0xE2) == "")
        #expect(d.append(0x82) == "")
        #expect(d.append(0xAC) == "€")
        #expect(d.append(0xF0) == "")
        #expect(d.append(0x9F) == "")
        #expect(d.append(0xA6) == "")
        #expect(d.append(0x99) == "🦙")
        #expect(d.flush() == "")
    }

    @Test("emits a character together with following text, and U+FFFD for broken bytes")
    func brokenBytes() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: [])
        var d = StreamingDetokenizer(tokenizer: t)
        #expect(d.append(0xC3) == "")
        #expect(d.append(0x41) == "\u{FFFD}A")    // lead byte followed by ASCII: invalid, not held
        #expect(d.append(0xE2) == "")
        #expect(d.flush() == "\u{FFFD}")
        #expect(d.append(0x80) == "\u{FFFD}")      // lone continuation byte
    }

    @Test("control tokens produce no text unless asked for")
    func controlTokens() throws {
        let t = try TinyVocab.bpe(pre: "gpt-2", merges: [], specials: [("<|endoftext|>", 3)])
        let eos = try #require(t.tokenId(forText: "<|endoftext|>"))
        var plain = StreamingDetokenizer(tokenizer: t)
        #expect(plain.append(eos) == "")
        var raw = StreamingDetokenizer(tokenizer: t, renderSpecialTokens: true)
        #expect(raw.append(eos) == "<|endoftext|>")
    }

    @Test("concatenated stream equals decode for SentencePiece text with byte fallback")
    func matchesDecode() throws {
        let t = try TinyVocab.sentencePiece(SentencePieceTokenizerTests.pieces)
        let ids = t.encode("hello wörld 🦙 hello", addSpecial: false)
        var d = StreamingDetokenizer(tokenizer: t)
        var text = ""
        for id in ids {
            let chunk = d.append(id)
            #expect(!chunk.unicodeScalars.contains("\u{FFFD}"))
            text += chunk
        }
        text += d.flush()
        #expect(text == " hello wörld 🦙 hello")
    }
}
