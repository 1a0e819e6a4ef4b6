/// Text to token ids, following llama.cpp's `llama_tokenize`.
extension TokenizerVocabulary {
    func encode(_ text: String, addSpecial: Bool, parseSpecial: Bool) -> [Int32] {
        let bytes = Array(text.utf8)
        let matcher = parseSpecial ? specialMatcherAll : specialMatcherUserDefined
        let fragments = matcher.partition(bytes)
        var output: [Int32] = []
        output.reserveCapacity(bytes.count / 3 + 4)
        if addSpecial && addBOS, let bos { output.append(bos) }
        switch kind {
        case .sentencePiece:
            var isPreviousSpecial = true
            var session = SentencePieceSession()
            for fragment in fragments {
                switch fragment {
                case .text(let range):
                    var escaped: [UInt8] = []
                    escaped.reserveCapacity(range.count + 3)
                    if addSpacePrefix && isPreviousSpecial { escaped.append(contentsOf: [0xE2, 0x96, 0x81]) }
                    for b in bytes[range] {
                        if b == 0x20 { escaped.append(contentsOf: [0xE2, 0x96, 0x81]) } else { escaped.append(b) }
                    }
                    if spmSplitsAtSpaces {
                        tokenizeSegments(escaped, &session, &output)
                    } else {
                        session.tokenize(escaped[...], vocabulary: self, into: &output)
                    }
                    isPreviousSpecial = false
                case .token(let id):
                    output.append(id)
                    isPreviousSpecial = true
                }
            }
        case .bytePairEncoding:
            bytes.withUnsafeBufferPointer { buf in
                var session = BPESession()   // its word cache points into `buf`
                for fragment in fragments {
                    switch fragment {
                    case .text(let range):
                        session.tokenize(UnsafeBufferPointer(rebasing: buf[range]), vocabulary: self, into: &output)
                    case .token(let id):
                        output.append(id)
                    }
                }
            }
        }
        if addSpecial && addEOS, let eos { output.append(eos) }
        return output
    }
}

extension TokenizerVocabulary {
    /// SentencePiece text cut before every `▁` that follows another character; each segment is
    /// merged on its own (see `spmSplitsAtSpaces`), repeated segments once per call.
    func tokenizeSegments(_ escaped: [UInt8], _ session: inout SentencePieceSession, _ output: inout [Int32]) {
        var cache = WordCache()   // keys point into `escaped`, which outlives it
        escaped.withUnsafeBufferPointer { buf in
            func segment(_ start: Int, _ end: Int) {
                let word = UnsafeBufferPointer(rebasing: buf[start..<end])
                guard word.count <= WordCache.maxWordLength else {
                    session.tokenize(escaped[start..<end], vocabulary: self, into: &output)
                    return
                }
                let hash = WordCache.hash(word)
                if cache.append(word, hash: hash, to: &output) { return }
                let before = output.count
                session.tokenize(escaped[start..<end], vocabulary: self, into: &output)
                cache.insert(word, hash: hash, ids: output[before...])
            }
            var segmentStart = 0
            var k = 1
            while k + 2 < buf.count {
                if buf[k] == 0xE2, buf[k + 1] == 0x96, buf[k + 2] == 0x81,
                   !(k >= 3 && buf[k - 3] == 0xE2 && buf[k - 2] == 0x96 && buf[k - 1] == 0x81) {
                    segment(segmentStart, k)
                    segmentStart = k
                    k += 3
                } else {
                    k += 1
                }
            }
            if segmentStart < buf.count { segment(segmentStart, buf.count) }
        }
    }
}

/// Length of a UTF-8 sequence from its first byte, as llama.cpp's `unicode_len_utf8`.
@inline(__always) func utf8SequenceLength(_ b: UInt8) -> Int {
    switch b >> 4 {
    case 0xC, 0xD: return 2
    case 0xE: return 3
    case 0xF: return 4
    default: return 1
    }
}

/// SentencePiece-style tokenization of one fragment (spaces already escaped to `▁`):
/// start from UTF-8 characters and repeatedly merge the adjacent pair whose concatenation is a
/// token with the highest score (ties: leftmost); characters left over become byte tokens.
struct SentencePieceSession {
    private var start: [Int32] = []
    private var length: [Int32] = []
    private var prev: [Int32] = []
    private var next: [Int32] = []
    private var heap = BinaryHeap<SPMBigram>()

    struct SPMBigram: HeapElement {
        var score: Float
        var left: Int32
        var right: Int32
        var size: Int32
        /// Max-heap by score; ties go to the leftmost pair.
        static func precedes(_ a: SPMBigram, _ b: SPMBigram) -> Bool {
            a.score > b.score || (a.score == b.score && a.left < b.left)
        }
    }

    mutating func tokenize(_ text: ArraySlice<UInt8>, vocabulary v: TokenizerVocabulary, into output: inout [Int32]) {
        start.removeAll(keepingCapacity: true); length.removeAll(keepingCapacity: true)
        prev.removeAll(keepingCapacity: true); next.removeAll(keepingCapacity: true)
        heap.removeAll()
        var offset = 0
        var index: Int32 = 0
        let base = text.startIndex
        while offset < text.count {
            let len = min(utf8SequenceLength(text[base + offset]), text.count - offset)
            start.append(Int32(offset)); length.append(Int32(len))
            offset += len
            prev.append(index - 1)
            next.append(offset == text.count ? -1 : index + 1)
            index += 1
        }
        guard !start.isEmpty else { return }
        text.withUnsafeBufferPointer { buf in
            for i in 1..<start.count { tryAddBigram(Int32(i - 1), Int32(i), buf, v) }
            while let bigram = heap.pop() {
                let l = Int(bigram.left), r = Int(bigram.right)
                if length[l] == 0 || length[r] == 0 || length[l] + length[r] != bigram.size { continue }
                length[l] += length[r]
                length[r] = 0
                next[l] = next[r]
                if next[r] >= 0 { prev[Int(next[r])] = bigram.left }
                tryAddBigram(prev[l], bigram.left, buf, v)
                tryAddBigram(bigram.left, next[l], buf, v)
            }
            var i: Int32 = 0
            while i != -1 {
                let s = Int(start[Int(i)]), n = Int(length[Int(i)])
                if let id = v.textTable.lookup(UnsafeBufferPointer(rebasing: buf[s..<(s + n)])) {
                    output.append(id)
                } else {
                    for k in s..<(s + n) {
                        let id = v.byteTokens[Int(buf[k])]
                        if id >= 0 { output.append(id) }
                    }
                }
                i = next[Int(i)]
            }
        }
    }

    private mutating func tryAddBigram(_ left: Int32, _ right: Int32, _ buf: UnsafeBufferPointer<UInt8>,
                                       _ v: TokenizerVocabulary) {
        guard left >= 0, right >= 0 else { return }
        let s = Int(start[Int(left)])
        let size = Int(length[Int(left)] + length[Int(right)])
        guard let id = v.textTable.lookup(UnsafeBufferPointer(rebasing: buf[s..<(s + size)])) else { return }
        heap.push(SPMBigram(score: v.scores[Int(id)], left: left, right: right, size: Int32(size)))
    }
}

/// Ordering for `BinaryHeap`.
protocol HeapElement {
    /// Whether `a` should come out of the heap before `b`.
    static func precedes(_ a: Self, _ b: Self) -> Bool
}

/// A binary heap; `pop` returns the element that precedes all others.
struct BinaryHeap<Element: HeapElement> {
    private var items: [Element] = []

    var isEmpty: Bool { items.isEmpty }

    mutating func removeAll() { items.removeAll(keepingCapacity: true) }

    mutating func push(_ element: Element) {
        items.append(element)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Element.precedes(items[i], items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> Element? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            let n = items.count
            while true {
                let l = 2 * i + 1, r = l + 1
                var best = i
                if l < n && Element.precedes(items[l], items[best]) { best = l }
                if r < n && Element.precedes(items[r], items[best]) { best = r }
                if best == i { break }
                items.swapAt(i, best)
                i = best
            }
        }
        return top
    }
}
