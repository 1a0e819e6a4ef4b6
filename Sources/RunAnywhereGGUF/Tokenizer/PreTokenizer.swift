/// The pre-tokenizers of byte-level BPE vocabularies, chosen by `tokenizer.ggml.pre`.
///
/// Each splits a text fragment into words before BPE merging, following the split regex of the
/// model family as llama.cpp applies it. They are hand-written scanners over code points
/// classified by Unicode general category (`CodepointClass`), not a regex engine.
/// Words always cover the fragment exactly, in order.
enum PreTokenizer: Sendable, Hashable {
    /// GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
    case gpt2
    /// Llama 3 (and Qwen2 with `maxDigits` 1): case-insensitive contractions,
    /// `[^\r\n\p{L}\p{N}]?\p{L}+`, `\p{N}{1,maxDigits}`, ` ?[^\s\p{L}\p{N}]+[\r\n]*`,
    /// `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
    case llama3(maxDigits: Int)
    /// StarCoder / SmolLM / Command-R ...: every number character alone, then GPT-2.
    case digitsThenGPT2
    /// llama.cpp's default chain: `[\p{P}$+<=>^~|]+`, GPT-2, `\p{N}+`, `[0-9][0-9][0-9]`.
    case defaultChain
    /// Falcon: ``[\p{P}$+<=>^~|`]+``, GPT-2, `[0-9][0-9][0-9]`.
    case falcon
    /// DeepSeek LLM: `[\r\n]`, `\s?[Latin-like letters]+`, `\s?[ASCII/CJK punctuation]+`,
    /// `\s+$`, `[CJK]+`, `\p{N}+`.
    case deepseekLLM

    /// Splits code points `0..<count` of a decoded fragment; appends the end index of each word.
    func split(_ fragment: DecodedFragment, into ends: inout [Int32]) {
        let count = fragment.codepoints.count
        guard count > 0 else { return }
        fragment.codepoints.withUnsafeBufferPointer { cps in
            fragment.classes.withUnsafeBufferPointer { cls in
                let text = ScanText(cps: cps, cls: cls)
                switch self {
                case .gpt2:
                    text.splitGPT2(0, count, &ends)
                case .llama3(let maxDigits):
                    text.splitLlama3(0, count, maxDigits: maxDigits, &ends)
                case .digitsThenGPT2:
                    var pieces = [Int32]()
                    text.regexPass(in: [0, Int32(count)], &pieces) { p, _ in
                        text.cls[p] & CodepointClass.number != 0 ? p + 1 : nil
                    }
                    text.eachPiece(pieces) { s, e in text.splitGPT2(s, e, &ends) }
                case .defaultChain, .falcon:
                    let isFalcon = self == .falcon
                    var pass1 = [Int32]()
                    text.regexPass(in: [0, Int32(count)], &pass1) { p, end in
                        var q = p
                        while q < end, text.isDefaultPunctuation(q, withBacktick: isFalcon) { q += 1 }
                        return q > p ? q : nil
                    }
                    var pass2 = [Int32]()
                    text.eachPiece(pass1) { s, e in text.splitGPT2(s, e, &pass2) }
                    var pass3 = [Int32]()
                    if isFalcon {
                        pass3 = pass2
                    } else {
                        text.regexPass(in: [0] + pass2, &pass3) { p, end in
                            var q = p
                            while q < end, text.cls[q] & CodepointClass.number != 0 { q += 1 }
                            return q > p ? q : nil
                        }
                    }
                    text.regexPass(in: [0] + pass3, &ends) { p, end in
                        guard p + 3 <= end else { return nil }
                        for k in p..<(p + 3) where !(0x30...0x39).contains(text.cps[k]) { return nil }
                        return p + 3
                    }
                case .deepseekLLM:
                    text.splitDeepSeekLLM(count, &ends)
                }
            }
        }
    }
}

/// Read-only view of a decoded fragment for the scanners.
struct ScanText {
    let cps: UnsafeBufferPointer<UInt32>
    let cls: UnsafeBufferPointer<UInt8>

    static let outOfRange: UInt32 = 0xFFFF_FFFF

    @inline(__always) func cp(_ i: Int, _ end: Int) -> UInt32 { i < end ? cps[i] : ScanText.outOfRange }
    @inline(__always) func cl(_ i: Int, _ end: Int) -> UInt8 { i < end ? cls[i] : 0 }

    /// Calls `body` with each piece of a list of piece ends (the first piece starts at 0).
    func eachPiece(_ ends: [Int32], _ body: (Int, Int) -> Void) {
        var start = 0
        for e in ends {
            body(start, Int(e))
            start = Int(e)
        }
    }

    /// One regex pass in the manner of llama.cpp's `std::regex` splitting: inside each piece,
    /// matches are searched left to right; every match and every gap between matches becomes a
    /// piece. `boundaries` starts with the start of the first piece, followed by piece ends.
    /// `match(p, end)` returns the end of a match starting at `p`, or nil.
    func regexPass(in boundaries: [Int32], _ out: inout [Int32], _ match: (Int, Int) -> Int?) {
        guard boundaries.count >= 2 else { return }
        for k in 1..<boundaries.count {
            let start = Int(boundaries[k - 1]), end = Int(boundaries[k])
            var p = start
            var gapStart = start
            while p < end {
                if let m = match(p, end), m > p {
                    if p > gapStart { out.append(Int32(p)) }
                    out.append(Int32(m))
                    p = m
                    gapStart = m
                } else {
                    p += 1
                }
            }
            if gapStart < end { out.append(Int32(end)) }
        }
    }

    /// `[\p{P}\$\+<=>\^~\|]` as llama.cpp evaluates it (ASCII list plus non-ASCII punctuation).
    @inline(__always)
    func isDefaultPunctuation(_ i: Int, withBacktick: Bool) -> Bool {
        let c = cps[i]
        if c < 0x80 {
            switch UInt8(c) {
            case 0x21...0x23, 0x25...0x2A, 0x2C...0x2F, 0x3A, 0x3B, 0x3F, 0x40, 0x5B...0x5D, 0x5F, 0x7B, 0x7D:
                return true
            case UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: ">"),
                 UInt8(ascii: "^"), UInt8(ascii: "~"), UInt8(ascii: "|"):
                return true
            case UInt8(ascii: "`"):
                return withBacktick
            default:
                return false
            }
        }
        let k = cls[i]
        return k & CodepointClass.punctuation != 0 && k & CodepointClass.whitespace == 0
    }

    /// GPT-2 split of `[start, end)`; appends word ends.
    func splitGPT2(_ start: Int, _ end: Int, _ ends: inout [Int32]) {
        let letter = CodepointClass.letter, number = CodepointClass.number, space = CodepointClass.whitespace
        var pos = start
        while pos < end {
            let c = cps[pos]
            let f = cls[pos]
            // 's|'t|'re|'ve|'m|'ll|'d
            if c == 0x27, pos + 1 < end {
                let n = cps[pos + 1]
                if n == 0x73 || n == 0x74 || n == 0x6D || n == 0x64 {
                    pos += 2; ends.append(Int32(pos)); continue
                }
                if pos + 2 < end {
                    let nn = cps[pos + 2]
                    if (n == 0x72 && nn == 0x65) || (n == 0x76 && nn == 0x65) || (n == 0x6C && nn == 0x6C) {
                        pos += 3; ends.append(Int32(pos)); continue
                    }
                }
            }
            let isSpace = c == 0x20
            let f2 = isSpace ? cl(pos + 1, end) : f
            //  ?\p{L}+
            if f2 & letter != 0 {
                if isSpace { pos += 1 }
                while cl(pos, end) & letter != 0 { pos += 1 }
                ends.append(Int32(pos)); continue
            }
            //  ?\p{N}+
            if f2 & number != 0 {
                if isSpace { pos += 1 }
                while cl(pos, end) & number != 0 { pos += 1 }
                ends.append(Int32(pos)); continue
            }
            //  ?[^\s\p{L}\p{N}]+
            if f2 & (space | letter | number) == 0 && f2 != 0 {
                if isSpace { pos += 1 }
                while true {
                    let g = cl(pos, end)
                    guard g & (space | letter | number) == 0 && g != 0 else { break }
                    pos += 1
                }
                ends.append(Int32(pos)); continue
            }
            var spaces = 0
            while cl(pos + spaces, end) & space != 0 { spaces += 1 }
            // \s+(?!\S)
            if spaces > 1 && pos + spaces < end {
                pos += spaces - 1; ends.append(Int32(pos)); continue
            }
            // \s+
            if spaces > 0 {
                pos += spaces; ends.append(Int32(pos)); continue
            }
            pos += 1
            ends.append(Int32(pos))
        }
    }

    /// Llama 3 / Qwen2 split of `[start, end)`; appends word ends.
    func splitLlama3(_ start: Int, _ end: Int, maxDigits: Int, _ ends: inout [Int32]) {
        let letter = CodepointClass.letter, number = CodepointClass.number, space = CodepointClass.whitespace
        var pos = start
        while pos < end {
            let c = cps[pos]
            let f = cls[pos]
            // (?i:'s|'t|'re|'ve|'m|'ll|'d)
            if c == 0x27, pos + 1 < end {
                let n = asciiLower(cps[pos + 1])
                if n == 0x73 || n == 0x74 || n == 0x6D || n == 0x64 {
                    pos += 2; ends.append(Int32(pos)); continue
                }
                if pos + 2 < end {
                    let nn = asciiLower(cps[pos + 2])
                    if (n == 0x72 && nn == 0x65) || (n == 0x76 && nn == 0x65) || (n == 0x6C && nn == 0x6C) {
                        pos += 3; ends.append(Int32(pos)); continue
                    }
                }
            }
            // [^\r\n\p{L}\p{N}]?\p{L}+
            if !(c == 0x0D || c == 0x0A || f & number != 0) {
                if f & letter != 0 || cl(pos + 1, end) & letter != 0 {
                    pos += 1
                    while cl(pos, end) & letter != 0 { pos += 1 }
                    ends.append(Int32(pos)); continue
                }
            }
            // \p{N}{1,maxDigits}
            if f & number != 0 {
                var groupStart = pos
                while cl(pos, end) & number != 0 {
                    pos += 1
                    if pos - groupStart >= maxDigits {
                        ends.append(Int32(pos))
                        groupStart = pos
                    }
                }
                if pos > groupStart { ends.append(Int32(pos)) }
                continue
            }
            //  ?[^\s\p{L}\p{N}]+[\r\n]*
            let isSpace = c == 0x20
            let f2 = isSpace ? cl(pos + 1, end) : f
            if f2 & (space | letter | number) == 0 && f != 0 {
                if isSpace { pos += 1 }
                while true {
                    let g = cl(pos, end)
                    guard g & (space | letter | number) == 0 && g != 0 else { break }
                    pos += 1
                }
                while true {
                    let g = cp(pos, end)
                    guard g == 0x0D || g == 0x0A else { break }
                    pos += 1
                }
                ends.append(Int32(pos)); continue
            }
            var spaces = 0
            var lastNewlineEnd = -1
            while cl(pos + spaces, end) & space != 0 {
                let g = cps[pos + spaces]
                if g == 0x0D || g == 0x0A { lastNewlineEnd = pos + spaces + 1 }
                spaces += 1
            }
            // \s*[\r\n]+
            if lastNewlineEnd > 0 {
                pos = lastNewlineEnd; ends.append(Int32(pos)); continue
            }
            // \s+(?!\S)
            if spaces > 1 && pos + spaces < end {
                pos += spaces - 1; ends.append(Int32(pos)); continue
            }
            // \s+
            if spaces > 0 {
                pos += spaces; ends.append(Int32(pos)); continue
            }
            pos += 1
            ends.append(Int32(pos))
        }
    }

    @inline(__always) private func asciiLower(_ c: UInt32) -> UInt32 {
        (0x41...0x5A).contains(c) ? c + 0x20 : c
    }
}

extension PreTokenizer {
    /// What llama.cpp configures for a `tokenizer.ggml.pre` name.
    struct Settings {
        var preTokenizer: PreTokenizer
        /// Emit a word that is itself a token directly, without merging (Llama 3).
        var ignoreMerges = false
        /// Default for `add_bos_token` when the metadata does not say.
        var addBOS = false
        /// Detokenizing removes spaces before punctuation and contractions.
        var cleanSpaces = true
    }

    /// The settings for a BPE pre-tokenizer name.
    /// - Throws: `GGUFError(.unsupported)` naming an unknown pre-tokenizer.
    static func settings(named name: String) throws -> Settings {
        switch name {
        case "default", "":
            return Settings(preTokenizer: .defaultChain)
        case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano":
            return Settings(preTokenizer: .llama3(maxDigits: 3), ignoreMerges: true, addBOS: true)
        case "dbrx", "smaug-bpe":
            return Settings(preTokenizer: .llama3(maxDigits: 3))
        case "deepseek-llm":
            return Settings(preTokenizer: .deepseekLLM, cleanSpaces: false)
        case "falcon":
            return Settings(preTokenizer: .falcon)
        case "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2":
            return Settings(preTokenizer: .digitsThenGPT2)
        case "command-r", "smollm":
            return Settings(preTokenizer: .digitsThenGPT2, cleanSpaces: false)
        case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
             "modern-bert", "mpt", "olmo", "jais", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe":
            return Settings(preTokenizer: .gpt2)
        case "trillion", "granite-docling":
            return Settings(preTokenizer: .gpt2, cleanSpaces: false)
        case "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open":
            return Settings(preTokenizer: .llama3(maxDigits: 1), cleanSpaces: false)
        case "stablelm2", "megrez":
            return Settings(preTokenizer: .llama3(maxDigits: 1))
        default:
            throw GGUFError(.unsupported, "unknown BPE pre-tokenizer \"\(name)\" (tokenizer.ggml.pre)")
        }
    }
}
