/// Byte-level BPE tokenization of one raw-text fragment: pre-tokenize into words, then merge
/// each word's bytes by merge rank (lowest first, ties leftmost), as llama.cpp's
/// `llm_tokenizer_bpe_session`. Symbols are raw-byte strings identified by id (vocabulary ids,
/// then extra ids for merge parts that are not tokens).
struct BPESession {
    private var fragment = DecodedFragment()
    private var wordEnds: [Int32] = []
    private var symbols: [Int32] = []
    private var pairRanks: [Int32] = []
    private var pairResults: [Int32] = []
    // Linked-list state for long words.
    private var prev: [Int32] = []
    private var next: [Int32] = []
    private var heap = BinaryHeap<BPEBigram>()
    private var cache = WordCache()

    /// Words longer than this use the heap instead of a quadratic scan.
    static let quadraticLimit = 48

    struct BPEBigram: HeapElement {
        var rank: Int32
        var left: Int32
        var right: Int32
        var leftSymbol: Int32
        var rightSymbol: Int32
        var result: Int32
        static func precedes(_ a: BPEBigram, _ b: BPEBigram) -> Bool {
            a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
        }
    }

    mutating func tokenize(_ bytes: UnsafeBufferPointer<UInt8>, vocabulary v: TokenizerVocabulary,
                           into output: inout [Int32]) {
        guard !bytes.isEmpty else { return }
        fragment.decode(bytes)
        wordEnds.removeAll(keepingCapacity: true)
        v.preTokenizer.split(fragment, into: &wordEnds)
        var startCp = 0
        for end in wordEnds {
            let s = Int(fragment.byteOffsets[startCp]), e = Int(fragment.byteOffsets[Int(end)])
            startCp = Int(end)
            let word = UnsafeBufferPointer(rebasing: bytes[s..<e])
            if word.count < 2 || word.count > WordCache.maxWordLength {
                encodeWord(word, v, &output)
                continue
            }
            let hash = WordCache.hash(word)
            if cache.append(word, hash: hash, to: &output) { continue }
            let before = output.count
            encodeWord(word, v, &output)
            cache.insert(word, hash: hash, ids: output[before...])
        }
    }

    private mutating func encodeWord(_ word: UnsafeBufferPointer<UInt8>, _ v: TokenizerVocabulary,
                                     _ output: inout [Int32]) {
        if word.count == 1 {
            emit(v.byteSymbols[Int(word[0])], v, &output)
            return
        }
        if v.ignoreMerges, let id = v.rawTable.lookup(word), Int(id) < v.count {
            output.append(id)
            return
        }
        if word.count > BPESession.quadraticLimit {
            encodeLongWord(word, v, &output)
            return
        }
        symbols.removeAll(keepingCapacity: true)
        for b in word { symbols.append(v.byteSymbols[Int(b)]) }
        pairRanks.removeAll(keepingCapacity: true)
        pairResults.removeAll(keepingCapacity: true)
        for i in 0..<(symbols.count - 1) {
            if let m = v.merges.lookup(symbols[i], symbols[i + 1]) {
                pairRanks.append(m.rank); pairResults.append(m.result)
            } else {
                pairRanks.append(Int32.max); pairResults.append(-1)
            }
        }
        var count = symbols.count
        while count > 1 {
            var best = -1
            var bestRank = Int32.max
            for i in 0..<(count - 1) where pairRanks[i] < bestRank {
                bestRank = pairRanks[i]
                best = i
            }
            if best < 0 { break }
            symbols[best] = pairResults[best]
            symbols.remove(at: best + 1)
            pairRanks.remove(at: best)
            pairResults.remove(at: best)
            count -= 1
            if best > 0 { updatePair(best - 1, v) }
            if best < count - 1 { updatePair(best, v) }
        }
        for i in 0..<count { emit(symbols[i], v, &output) }
    }

    @inline(__always)
    private mutating func updatePair(_ i: Int, _ v: TokenizerVocabulary) {
        if let m = v.merges.lookup(symbols[i], symbols[i + 1]) {
            pairRanks[i] = m.rank; pairResults[i] = m.result
        } else {
            pairRanks[i] = Int32.max; pairResults[i] = -1
        }
    }

    /// The same merge order with a priority queue (linear-logarithmic for long words).
    private mutating func encodeLongWord(_ word: UnsafeBufferPointer<UInt8>, _ v: TokenizerVocabulary,
                                         _ output: inout [Int32]) {
        let n = word.count
        symbols.removeAll(keepingCapacity: true)
        prev.removeAll(keepingCapacity: true)
        next.removeAll(keepingCapacity: true)
        heap.removeAll()
        for (i, b) in word.enumerated() {
            symbols.append(v.byteSymbols[Int(b)])
            prev.append(Int32(i - 1))
            next.append(i + 1 < n ? Int32(i + 1) : -1)
        }
        for i in 1..<n { addBigram(Int32(i - 1), Int32(i), v) }
        while let bigram = heap.pop() {
            let l = Int(bigram.left), r = Int(bigram.right)
            // Skip pairs that are no longer adjacent or whose symbols changed since.
            guard symbols[l] == bigram.leftSymbol, symbols[r] == bigram.rightSymbol,
                  next[l] == bigram.right else { continue }
            symbols[l] = bigram.result
            symbols[r] = -1
            next[l] = next[r]
            if next[r] >= 0 { prev[Int(next[r])] = bigram.left }
            next[r] = -2
            addBigram(prev[l], bigram.left, v)
            addBigram(bigram.left, next[l], v)
        }
        var i: Int32 = 0
        while i >= 0 {
            emit(symbols[Int(i)], v, &output)
            i = next[Int(i)]
        }
    }

    private mutating func addBigram(_ left: Int32, _ right: Int32, _ v: TokenizerVocabulary) {
        guard left >= 0, right >= 0 else { return }
        let ls = symbols[Int(left)], rs = symbols[Int(right)]
        guard let m = v.merges.lookup(ls, rs) else { return }
        heap.push(BPEBigram(rank: m.rank, left: left, right: right, leftSymbol: ls, rightSymbol: rs, result: m.result))
    }

    /// Appends a final symbol: its token id, or (for a symbol that is not a token) the tokens of
    /// its single mapped bytes, as llama.cpp does.
    @inline(__always)
    private func emit(_ symbol: Int32, _ v: TokenizerVocabulary, _ output: inout [Int32]) {
        if Int(symbol) < v.count {
            output.append(symbol)
            return
        }
        let raw = v.extraSymbolBytes[Int(symbol) - v.count]
        for b in ByteLevelMapping.encode(raw) {
            if let id = v.textTable.lookup([b]) { output.append(id) }
        }
    }
}

/// Ids of words already encoded during one `encode` call. Keys point into the caller's input
/// buffer, which outlives the session; common words are merged once per call.
struct WordCache {
    static let maxWordLength = 32
    static let maxEntries = 1 << 16

    private struct Entry {
        var hash: UInt64
        var key: UnsafePointer<UInt8>
        var keyLength: Int32
        var idsStart: Int32
        var idsCount: Int32
    }

    private var slots: [Int32] = []   // entry index + 1, or 0
    private var entries: [Entry] = []
    private var ids: [Int32] = []
    private var mask = 0

    @inline(__always)
    static func hash(_ word: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in word { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h ^ (h >> 31)
    }

    /// Appends the cached ids of `word` and returns true, or returns false when not cached.
    @inline(__always)
    func append(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64, to output: inout [Int32]) -> Bool {
        guard mask != 0, let base = word.baseAddress else { return false }
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let slot = Int(slots[i])
            if slot == 0 { return false }
            let e = entries[slot - 1]
            if e.hash == hash, Int(e.keyLength) == word.count, memcmpEqual(e.key, base, word.count) {
                output.append(contentsOf: ids[Int(e.idsStart)..<Int(e.idsStart + e.idsCount)])
                return true
            }
            i = (i + 1) & mask
        }
    }

    mutating func insert(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64, ids newIds: ArraySlice<Int32>) {
        guard entries.count < WordCache.maxEntries, let base = word.baseAddress else { return }
        if (entries.count + 1) * 2 > slots.count { grow() }
        entries.append(Entry(hash: hash, key: base, keyLength: Int32(word.count),
                             idsStart: Int32(ids.count), idsCount: Int32(newIds.count)))
        ids.append(contentsOf: newIds)
        place(entries.count - 1)
    }

    private mutating func place(_ e: Int) {
        var i = Int(truncatingIfNeeded: entries[e].hash) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = Int32(e + 1)
    }

    private mutating func grow() {
        let size = max(1024, slots.count * 2)
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        for e in 0..<entries.count { place(e) }
    }

    @inline(__always)
    private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var k = 0
        while k < n {
            if a[k] != b[k] { return false }
            k += 1
        }
        return true
    }
}
