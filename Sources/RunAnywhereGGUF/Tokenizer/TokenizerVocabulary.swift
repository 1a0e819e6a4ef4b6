/// Attributes of a token, as llama.cpp derives them from `tokenizer.ggml.token_type`.
struct TokenAttributes: OptionSet, Sendable, Hashable {
    let rawValue: UInt16
    static let unknown = TokenAttributes(rawValue: 1 << 0)
    static let unused = TokenAttributes(rawValue: 1 << 1)
    static let normal = TokenAttributes(rawValue: 1 << 2)
    static let control = TokenAttributes(rawValue: 1 << 3)
    static let userDefined = TokenAttributes(rawValue: 1 << 4)
    static let byte = TokenAttributes(rawValue: 1 << 5)
    /// Whitespace before the token is dropped when it is split out of text.
    static let lstrip = TokenAttributes(rawValue: 1 << 7)
    /// Whitespace after the token is dropped when it is split out of text.
    static let rstrip = TokenAttributes(rawValue: 1 << 8)

    init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The attributes for a GGUF token type (anything unknown is "undefined": no attribute).
    init(tokenType: Int32) {
        switch tokenType {
        case 1: self = .normal
        case 2: self = .unknown
        case 3: self = .control
        case 4: self = .userDefined
        case 5: self = .unused
        case 6: self = .byte
        default: self = []
        }
    }
}

/// Which algorithm a vocabulary uses.
enum TokenizerKind: Sendable, Hashable {
    /// SentencePiece-style: whole-text bigram merging by score, `▁` for spaces, `<0xXX>` byte fallback.
    case sentencePiece
    /// Byte-level BPE: pre-tokenizer, GPT-2 byte mapping, merges by rank.
    case bytePairEncoding
}

/// Everything a tokenizer needs, built once from `GGUFTokenizer.Metadata` and immutable after.
struct TokenizerVocabulary: Sendable {
    let kind: TokenizerKind
    let preTokenizer: PreTokenizer
    let count: Int

    // Token texts, flat.
    let textStorage: [UInt8]
    let textOffsets: [Int32]
    let textTable: ByteStringTable
    let scores: [Float]
    let attributes: [TokenAttributes]

    // What each token stands for (llama_token_to_piece with special = true), flat.
    let pieceStorage: [UInt8]
    let pieceOffsets: [Int32]

    // Special tokens.
    let bos: Int32?
    let eos: Int32?
    let eot: Int32?
    let eom: Int32?
    let unk: Int32?
    let sep: Int32?
    let pad: Int32?
    let endOfGeneration: Set<Int32>
    let addBOS: Bool
    let addEOS: Bool
    let addSpacePrefix: Bool
    let cleanSpaces: Bool
    let ignoreMerges: Bool

    /// Special tokens split out of text before tokenizing, longest text first: all of them when
    /// parsing special tokens, only the user-defined ones otherwise.
    let specialMatcherAll: SpecialTokenMatcher
    let specialMatcherUserDefined: SpecialTokenMatcher

    // SentencePiece: token for each byte (`<0xXX>`, else the one-character token).
    let byteTokens: [Int32]
    /// SentencePiece: no token has `▁` right after another character, so text can be cut before
    /// every `▁` that follows a non-`▁` character and the parts merged independently (same result).
    let spmSplitsAtSpaces: Bool

    // BPE, in raw-byte space: symbol id of each raw byte string (vocab ids first, then extra
    // symbols that only exist as merge parts), merges by symbol pair.
    let rawTable: ByteStringTable
    let extraSymbolBytes: [[UInt8]]
    let byteSymbols: [Int32]
    let merges: MergeTable

    @inline(__always) func text(of id: Int) -> UnsafeBufferPointer<UInt8>.SubSequence {
        textStorage.withUnsafeBufferPointer { $0[Int(textOffsets[id])..<Int(textOffsets[id + 1])] }
    }

    func textBytes(of id: Int) -> [UInt8] {
        Array(textStorage[Int(textOffsets[id])..<Int(textOffsets[id + 1])])
    }

    func pieceBytes(of id: Int) -> ArraySlice<UInt8> {
        pieceStorage[Int(pieceOffsets[id])..<Int(pieceOffsets[id + 1])]
    }

    func id(ofText text: String) -> Int32? {
        textTable.lookup(Array(text.utf8))
    }
}

extension TokenizerVocabulary {
    /// Builds the vocabulary as llama.cpp's `llama_vocab::load` does.
    /// - Throws: `GGUFError` for a malformed vocabulary or an unsupported model / pre-tokenizer.
    init(_ meta: GGUFTokenizer.Metadata) throws {
        let n = meta.tokens.count
        guard n > 0 else { throw GGUFError(.invalidFormat, "the tokenizer has an empty token list") }
        guard n < Int(Int32.max) else { throw GGUFError(.invalidFormat, "the tokenizer has too many tokens (\(n))") }

        var kind: TokenizerKind
        var pre = PreTokenizer.gpt2
        var bos: Int32? = nil, eos: Int32? = nil, unk: Int32? = nil
        var addBOS = false, addEOS = false, addSpacePrefix = false, cleanSpaces = false, ignoreMerges = false
        switch meta.model {
        case "llama":
            kind = .sentencePiece
            bos = 1; eos = 2; unk = 0
            addBOS = true; addSpacePrefix = true
        case "gpt2":
            kind = .bytePairEncoding
            bos = 11; eos = 11
            cleanSpaces = true
            guard meta.merges != nil else {
                throw GGUFError(.invalidFormat, "BPE tokenizer without merges (tokenizer.ggml.merges is missing)")
            }
            let settings = try PreTokenizer.settings(named: meta.pre ?? "default")
            pre = settings.preTokenizer
            ignoreMerges = settings.ignoreMerges
            addBOS = settings.addBOS
            cleanSpaces = settings.cleanSpaces
        default:
            throw GGUFError(.unsupported, "tokenizer model \"\(meta.model)\" is not supported (tokenizer.ggml.model; supported: llama, gpt2)")
        }
        if let value = meta.addSpacePrefix { addSpacePrefix = value }

        // Token texts, scores and attributes.
        if let scores = meta.scores, scores.count < n {
            throw GGUFError(.invalidFormat, "tokenizer.ggml.scores has \(scores.count) entries for \(n) tokens")
        }
        if let types = meta.tokenTypes, types.count < n {
            throw GGUFError(.invalidFormat, "tokenizer.ggml.token_type has \(types.count) entries for \(n) tokens")
        }
        var storage: [UInt8] = []
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(n + 1)
        var table = ByteStringTable(capacity: n)
        var attrs = [TokenAttributes](repeating: .normal, count: n)
        for i in 0..<n {
            var word = Array(meta.tokens[i].utf8)
            if word.isEmpty { word = Array("[EMPTY_\(i)]".utf8) }
            if let other = table.lookup(word) {
                throw GGUFError(.invalidFormat, "duplicate token in vocabulary: \"\(meta.tokens[i])\" has ids \(other) and \(i)")
            }
            table.insertIfAbsent(word, Int32(i))
            storage.append(contentsOf: word)
            guard storage.count < Int(Int32.max) else { throw GGUFError(.invalidFormat, "token texts are too large") }
            offsets.append(Int32(storage.count))
            if let types = meta.tokenTypes { attrs[i] = TokenAttributes(tokenType: types[i]) }
        }
        let scores = meta.scores.map { Array($0.prefix(n)) } ?? [Float](repeating: 0, count: n)

        // Special token ids: defaults, then metadata (ignored when out of range).
        func resolve(_ fallback: Int32?, _ value: Int?) -> Int32? {
            var id = fallback
            if let f = id, f >= n { id = nil }
            if let v = value, v >= 0, v < n { id = Int32(v) }
            return id
        }
        bos = resolve(bos, meta.bosTokenId)
        eos = resolve(eos, meta.eosTokenId)
        var eot = resolve(nil, meta.eotTokenId)
        var eom = resolve(nil, meta.eomTokenId)
        unk = resolve(unk, meta.unknownTokenId)
        let sep = resolve(nil, meta.separatorTokenId)
        let pad = resolve(nil, meta.paddingTokenId)
        if let value = meta.addBOS { addBOS = value }
        if let value = meta.addEOS { addEOS = value }
        if addBOS && bos == nil {
            throw GGUFError(.invalidFormat, "tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set")
        }
        if addEOS && eos == nil {
            throw GGUFError(.invalidFormat, "tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set")
        }

        // Recognise special tokens by their text, as llama.cpp does, and make them control tokens.
        let eog = TokenizerVocabulary.detectSpecialTokens(table: table, attributes: &attrs, eos: eos, eot: &eot, eom: &eom)

        self.kind = kind
        self.preTokenizer = pre
        self.count = n
        self.textStorage = storage
        self.textOffsets = offsets
        self.textTable = table
        self.scores = scores
        self.bos = bos; self.eos = eos; self.eot = eot; self.eom = eom
        self.unk = unk; self.sep = sep; self.pad = pad
        self.endOfGeneration = eog
        self.addBOS = addBOS; self.addEOS = addEOS
        self.addSpacePrefix = addSpacePrefix; self.cleanSpaces = cleanSpaces; self.ignoreMerges = ignoreMerges

        // Special-token matchers.
        var specials: [Int32] = []
        for i in 0..<n where !attrs[i].isDisjoint(with: [.control, .userDefined, .unknown]) { specials.append(Int32(i)) }
        specials.sort { a, b in
            let la = offsets[Int(a) + 1] - offsets[Int(a)], lb = offsets[Int(b) + 1] - offsets[Int(b)]
            return la != lb ? la > lb : a < b
        }
        TokenizerVocabulary.setStripAttributes(meta, specials: specials, table: table, attributes: &attrs)
        self.attributes = attrs
        self.specialMatcherAll = SpecialTokenMatcher(tokens: specials, storage: storage, offsets: offsets, attributes: attrs)
        self.specialMatcherUserDefined = SpecialTokenMatcher(
            tokens: specials.filter { attrs[Int($0)].isDisjoint(with: [.control, .unknown]) },
            storage: storage, offsets: offsets, attributes: attrs)

        // SentencePiece byte fallback tokens.
        var byteTokens = [Int32](repeating: -1, count: 256)
        if kind == .sentencePiece {
            let hex = Array("0123456789ABCDEF".utf8)
            for b in 0..<256 {
                let name: [UInt8] = [0x3C, 0x30, 0x78, hex[b >> 4], hex[b & 15], 0x3E]
                if let id = table.lookup(name) {
                    byteTokens[b] = id
                } else if let id = table.lookup([UInt8(b)]) {
                    byteTokens[b] = id
                } else if let unk {
                    byteTokens[b] = unk
                }
            }
        }
        self.byteTokens = byteTokens
        var splits = kind == .sentencePiece
        if splits {
            outer: for i in 0..<n {
                let t = storage[Int(offsets[i])..<Int(offsets[i + 1])]
                var k = t.startIndex + 1
                while k + 2 < t.endIndex {
                    if t[k] == 0xE2, t[k + 1] == 0x96, t[k + 2] == 0x81,
                       !(k - 3 >= t.startIndex && t[k - 3] == 0xE2 && t[k - 2] == 0x96 && t[k - 1] == 0x81) {
                        splits = false
                        break outer
                    }
                    k += 1
                }
            }
        }
        self.spmSplitsAtSpaces = splits

        // BPE tables in raw-byte space.
        let bpe = kind == .bytePairEncoding
            ? TokenizerVocabulary.buildBytePairTables(count: n, storage: storage, offsets: offsets, merges: meta.merges ?? [])
            : BytePairTables.empty
        self.rawTable = bpe.raw
        self.extraSymbolBytes = bpe.extras
        self.byteSymbols = bpe.byteSymbols
        self.merges = bpe.merges

        // Pieces (llama_token_to_piece with special = true).
        (pieceStorage, pieceOffsets) = TokenizerVocabulary.buildPieces(kind: kind, storage: storage, offsets: offsets,
                                                                        attributes: attrs)
    }

    /// Appends `text` with every U+2581 (`▁`) replaced by a space.
    static func appendUnescapingSpaces(_ text: ArraySlice<UInt8>, to out: inout [UInt8]) {
        var i = text.startIndex
        while i < text.endIndex {
            if text[i] == 0xE2, i + 2 < text.endIndex, text[i + 1] == 0x96, text[i + 2] == 0x81 {
                out.append(0x20)
                i += 3
            } else {
                out.append(text[i])
                i += 1
            }
        }
    }

    /// Appends the raw bytes a byte-level BPE token text stands for; characters outside the
    /// mapping are written as llama.cpp does (`[UNK_BYTE_0x..<text>]`).
    static func appendByteDecoded(_ text: ArraySlice<UInt8>, to out: inout [UInt8]) {
        let string = String(decoding: text, as: UTF8.self)
        for scalar in string.unicodeScalars {
            let v = scalar.value
            if v < 0x144, ByteLevelMapping.byteForCodepoint[Int(v)] >= 0 {
                out.append(UInt8(ByteLevelMapping.byteForCodepoint[Int(v)]))
            } else {
                out.append(contentsOf: Array("[UNK_BYTE_0x".utf8))
                for b in String(scalar).utf8 {
                    let hex = String(b, radix: 16)
                    out.append(contentsOf: Array((hex.count == 1 ? "0" + hex : hex).utf8))
                }
                out.append(contentsOf: text)
                out.append(0x5D)
            }
        }
    }
}
