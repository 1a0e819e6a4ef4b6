/// Byte-level BPE lookup tables (see `TokenizerVocabulary.buildBytePairTables`).
struct BytePairTables: Sendable {
    var raw: ByteStringTable
    var extras: [[UInt8]]
    var byteSymbols: [Int32]
    var merges: MergeTable

    static let empty = BytePairTables(raw: ByteStringTable(capacity: 1), extras: [],
                                      byteSymbols: [Int32](repeating: -1, count: 256), merges: MergeTable(capacity: 1))
}

/// The parts of building a vocabulary that derive tables from the token list.
extension TokenizerVocabulary {
    /// Recognises end-of-turn, FIM and end-of-generation tokens by their text as llama.cpp does,
    /// marks them as control tokens, and returns the end-of-generation set.
    static func detectSpecialTokens(table: ByteStringTable, attributes: inout [TokenAttributes], eos: Int32?,
                                    eot: inout Int32?, eom: inout Int32?) -> Set<Int32> {
        func find(_ texts: [String]) -> Int32? {
            for t in texts { if let id = table.lookup(Array(t.utf8)) { return id } }
            return nil
        }
        func markControl(_ id: Int32?) {
            if let id { attributes[Int(id)].insert(.control) }
        }
        if eot == nil {
            eot = find(["<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                        "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"])
            markControl(eot)
        }
        if eom == nil {
            eom = find(["<|eom_id|>"])
            markControl(eom)
        }
        markControl(find(["<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                          "<|code_prefix|>", "<|prefix|>"]))
        markControl(find(["<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                          "<|code_suffix|>", "<|suffix|>"]))
        markControl(find(["<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                          "<|code_middle|>", "<|middle|>"]))
        let fimPad = find(["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"])
        let fimRep = find(["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"])
        let fimSep = find(["<|file_sep|>"])
        markControl(fimPad); markControl(fimRep); markControl(fimSep)

        var eog = Set<Int32>()
        for id in [fimPad, fimRep, fimSep] { if let id { eog.insert(id) } }
        let eogTexts = ["<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
                        "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
                        "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
                        "<｜end▁of▁sentence｜>", "[e~["]
        for t in eogTexts {
            if let id = table.lookup(Array(t.utf8)) {
                eog.insert(id)
                attributes[Int(id)].insert(.control)
            }
        }
        for id in [eos, eot, eom] { if let id { eog.insert(id) } }
        // Harmony-style vocabularies: "<|end|>" ends a message, not the generation.
        if let end = table.lookup(Array("<|end|>".utf8)), eog.contains(end) {
            let has = { (t: String) in table.lookup(Array(t.utf8)).map { eog.contains($0) } ?? false }
            if (has("<|return|>") && (has("<|call|>") || has("<|calls|>"))) || (has("<|calls|>") && has("<|flush|>")) {
                eog.remove(end)
                attributes[Int(end)] = .userDefined
            }
        }
        if let s = table.lookup(Array("</s>".utf8)), eog.contains(s),
           let tr = table.lookup(Array("<|tool_response>".utf8)), eog.contains(tr) {
            eog.remove(s)
            attributes[Int(s)] = .normal
        }
        return eog
    }

    /// Builds the raw-byte symbol table (token ids, then extra ids for merge parts that are not
    /// tokens), the symbol of each byte, and the merge table, from byte-level token texts.
    static func buildBytePairTables(count n: Int, storage: [UInt8], offsets: [Int32], merges: [String]) -> BytePairTables {
        var raw = ByteStringTable(capacity: n + 1024)
        var extras: [[UInt8]] = []
        var byteSymbols = [Int32](repeating: -1, count: 256)
        var mergeTable = MergeTable(capacity: merges.count)
        do {
            var decoded: [UInt8] = []
            storage.withUnsafeBufferPointer { store in
                for i in 0..<n {
                    let text = UnsafeBufferPointer(rebasing: store[Int(offsets[i])..<Int(offsets[i + 1])])
                    if ByteLevelMapping.decode(utf8: text, into: &decoded), !decoded.isEmpty {
                        raw.insertIfAbsent(decoded, Int32(i))
                    }
                }
            }
            func intern(_ bytes: [UInt8]) -> Int32 {
                if let id = raw.lookup(bytes) { return id }
                let id = Int32(n + extras.count)
                extras.append(bytes)
                raw.insertIfAbsent(bytes, id)
                return id
            }
            for b in 0..<256 { byteSymbols[b] = intern([UInt8(b)]) }
            var left: [UInt8] = [], right: [UInt8] = []
            for (rank, line) in merges.enumerated() {
                // llama.cpp splits at the first space after the first character.
                var line = line
                let ok: Bool = line.withUTF8 { utf8 in
                    guard utf8.count >= 2, let split = utf8[1...].firstIndex(of: 0x20) else { return false }
                    return ByteLevelMapping.decode(utf8: UnsafeBufferPointer(rebasing: utf8[..<split]), into: &left)
                        && ByteLevelMapping.decode(utf8: UnsafeBufferPointer(rebasing: utf8[(split + 1)...]), into: &right)
                }
                guard ok, !left.isEmpty, !right.isEmpty else { continue }
                let l = intern(left), r = intern(right), result = intern(left + right)
                mergeTable.insertIfAbsent(l, r, rank: Int32(rank), result: result)
            }
        }
        return BytePairTables(raw: raw, extras: extras, byteSymbols: byteSymbols, merges: mergeTable)
    }

    /// What every token stands for (`llama_token_to_piece` with special = true), flat.
    static func buildPieces(kind: TokenizerKind, storage: [UInt8], offsets: [Int32],
                            attributes: [TokenAttributes]) -> ([UInt8], [Int32]) {
        let n = attributes.count
        var pieces: [UInt8] = []
        var pieceOffsets: [Int32] = [0]
        pieceOffsets.reserveCapacity(n + 1)
        for i in 0..<n {
            let text = storage[Int(offsets[i])..<Int(offsets[i + 1])]
            let a = attributes[i]
            if !a.isDisjoint(with: [.unknown, .control, .userDefined]) {
                pieces.append(contentsOf: text)
            } else if a.contains(.normal) {
                if kind == .sentencePiece {
                    TokenizerVocabulary.appendUnescapingSpaces(text, to: &pieces)
                } else {
                    TokenizerVocabulary.appendByteDecoded(text, to: &pieces)
                }
            } else if a.contains(.byte), kind == .sentencePiece, text.count >= 5 {
                let hexDigits = String(decoding: text.dropFirst(3).prefix(2), as: UTF8.self)
                pieces.append(UInt8(truncatingIfNeeded: Int(hexDigits, radix: 16) ?? 0))
            }
            pieceOffsets.append(Int32(pieces.count))
        }
        return (pieces, pieceOffsets)
    }

    /// Per-model whitespace stripping around special tokens, set by llama.cpp from the
    /// pre-tokenizer, architecture and model name (Phi-3: strip after special tokens).
    static func setStripAttributes(_ meta: GGUFTokenizer.Metadata, specials: [Int32], table: ByteStringTable,
                                   attributes: inout [TokenAttributes]) {
        func set(_ text: String, _ attribute: TokenAttributes, _ on: Bool) {
            guard let id = table.lookup(Array(text.utf8)) else { return }
            if on { attributes[Int(id)].insert(attribute) } else { attributes[Int(id)].remove(attribute) }
        }
        let pre = meta.pre ?? "", arch = meta.architecture ?? "", name = (meta.modelName ?? "").lowercased()
        if ["jina-v2-de", "jina-v2-es", "jina-v2-code"].contains(where: { pre.contains($0) })
            || ["nomic-bert-moe", "jina-bert-v3"].contains(where: { arch.contains($0) }) {
            set("<mask>", .lstrip, true)
        } else if name.contains("phi-3") || name.contains("phi3") {
            for id in specials { attributes[Int(id)].insert(.rstrip) }
            set("</s>", .rstrip, true)
            for text in ["<unk>", "<s>", "<|endoftext|>"] { set(text, .rstrip, false) }
        } else if name.contains("modern-bert") {
            set("[MASK]", .lstrip, true)
        }
    }
}
