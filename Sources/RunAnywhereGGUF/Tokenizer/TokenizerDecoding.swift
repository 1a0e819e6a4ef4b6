/// Token ids to text, following llama.cpp's `llama_token_to_piece` and `llama_detokenize`.
extension TokenizerVocabulary {
    /// The bytes of one token; control and unknown tokens are empty unless `special`.
    func piece(_ id: Int32, special: Bool) -> ArraySlice<UInt8> {
        guard id >= 0, Int(id) < count else { return [] }
        if !special && !attributes[Int(id)].isDisjoint(with: [.control, .unknown]) { return [] }
        return pieceBytes(of: Int(id))
    }

    /// The bytes of a token sequence, as `llama_detokenize(remove_special, unparse_special)`.
    func detokenize(_ ids: [Int32], removeSpecial: Bool, unparseSpecial: Bool) -> [UInt8] {
        var tokens = ids[...]
        var removeSpace = addSpacePrefix
        if removeSpecial && addBOS, let first = tokens.first, first == bos {
            removeSpace = false
            tokens = tokens.dropFirst()
        }
        if removeSpecial && addEOS, let last = tokens.last, last == eos {
            tokens = tokens.dropLast()
        }
        var text: [UInt8] = []
        for id in tokens {
            var piece = piece(id, special: unparseSpecial)
            if removeSpace, piece.first == 0x20 { piece = piece.dropFirst() }
            removeSpace = false
            text.append(contentsOf: piece)
        }
        if cleanSpaces { text = TokenizerVocabulary.cleanUpSpaces(text) }
        return text
    }

    /// llama.cpp's `clean_up_tokenization_spaces`: drop the space before `?!.,`, around a lone
    /// apostrophe, and before the contractions `'s 'm 're 've`.
    static func cleanUpSpaces(_ input: [UInt8]) -> [UInt8] {
        let space = UInt8(ascii: " "), quote = UInt8(ascii: "'")
        var text = input
        // First pass: " ?", " !", " .", " ,".
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        for (i, x) in text.enumerated() {
            if i > 0, text[i - 1] == space, x == UInt8(ascii: "?") || x == UInt8(ascii: "!")
                || x == UInt8(ascii: ".") || x == UInt8(ascii: ",") {
                out.removeLast()
            }
            out.append(x)
        }
        text = out
        // Second pass: " ' " becomes "'" (the space after it is consumed and reads as NUL later).
        out = []
        var source = text
        var i = 0
        while i < source.count {
            let x = source[i]
            if i > 0, x == quote, i + 1 < source.count, source[i - 1] == space, source[i + 1] == space {
                out.removeLast()
                source[i + 1] = 0
                out.append(x)
                i += 2
                continue
            }
            out.append(x)
            i += 1
        }
        text = out
        // Third pass: " 's", " 'm", " 're", " 've".
        out = []
        for (i, x) in text.enumerated() {
            if i > 0, text[i - 1] == space, x == quote, i + 1 < text.count {
                let x1 = text[i + 1]
                if x1 == UInt8(ascii: "s") || x1 == UInt8(ascii: "m") {
                    out.removeLast()
                } else if x1 != UInt8(ascii: "t") && x1 != UInt8(ascii: "d"), i + 2 < text.count {
                    let x2 = text[i + 2]
                    if (x1 == UInt8(ascii: "r") && x2 == UInt8(ascii: "e")) || (x1 == UInt8(ascii: "v") && x2 == UInt8(ascii: "e")) {
                        out.removeLast()
                    }
                }
            }
            out.append(x)
        }
        return out
    }
}
