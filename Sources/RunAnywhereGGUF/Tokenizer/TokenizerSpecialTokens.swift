/// A piece of input after special tokens have been split out: raw text or a token.
enum TokenizerFragment: Sendable, Hashable {
    case text(Range<Int>)
    case token(Int32)
}

/// Finds special-token texts in input, in the order and with the precedence of llama.cpp's
/// `tokenizer_st_partition`: tokens are taken longest text first, each splitting every remaining
/// raw-text fragment at its leftmost non-overlapping occurrences (and dropping the whitespace
/// next to it for tokens with the lstrip / rstrip attribute).
struct SpecialTokenMatcher: Sendable {
    /// Token ids, longest text first.
    let tokens: [Int32]
    /// Text of each entry of `tokens`.
    let texts: [[UInt8]]
    /// Strip attributes of each entry of `tokens`.
    let strip: [TokenAttributes]
    /// For each first byte, the indices into `tokens` of the texts starting with it.
    let byFirstByte: [[Int32]]

    init(tokens: [Int32], storage: [UInt8], offsets: [Int32], attributes: [TokenAttributes]) {
        self.tokens = tokens
        var texts: [[UInt8]] = []
        var byFirst = [[Int32]](repeating: [], count: 256)
        for (k, id) in tokens.enumerated() {
            let t = Array(storage[Int(offsets[Int(id)])..<Int(offsets[Int(id) + 1])])
            texts.append(t)
            if let first = t.first { byFirst[Int(first)].append(Int32(k)) }
        }
        self.texts = texts
        self.strip = tokens.map { attributes[Int($0)].intersection([.lstrip, .rstrip]) }
        self.byFirstByte = byFirst
    }

    /// C `isspace`: space, tab, newline, vertical tab, form feed, carriage return.
    @inline(__always) private static func isSpace(_ b: UInt8) -> Bool {
        b == 0x20 || (0x09...0x0D).contains(b)
    }

    /// Splits `bytes` into raw-text fragments and special tokens.
    func partition(_ bytes: [UInt8]) -> [TokenizerFragment] {
        let n = bytes.count
        guard n > 0 else { return [] }
        guard !tokens.isEmpty else { return [.text(0..<n)] }
        // All occurrences (possibly overlapping) of every candidate text, per candidate.
        var occurrences: [Int32: [Int]] = [:]
        bytes.withUnsafeBufferPointer { buf in
            for i in 0..<n {
                let candidates = byFirstByte[Int(buf[i])]
                if candidates.isEmpty { continue }
                for k in candidates {
                    let t = texts[Int(k)]
                    if i + t.count > n { continue }
                    var equal = true
                    for j in 1..<max(t.count, 1) where buf[i + j] != t[j] { equal = false; break }
                    if equal { occurrences[k, default: []].append(i) }
                }
            }
        }
        if occurrences.isEmpty { return [.text(0..<n)] }
        // Claim occurrences in priority order; stripped whitespace is claimed without a token.
        var claimed = [Bool](repeating: false, count: n)
        var starts: [Int: Int32] = [:]   // start offset -> candidate index
        for k in occurrences.keys.sorted() {
            guard let list = occurrences[k] else { continue }
            let length = texts[Int(k)].count
            let strip = self.strip[Int(k)]
            var lastEnd = 0
            for s in list where s >= lastEnd {
                var free = true
                for j in s..<(s + length) where claimed[j] { free = false; break }
                if !free { continue }
                for j in s..<(s + length) { claimed[j] = true }
                starts[s] = k
                lastEnd = s + length
                if strip.contains(.lstrip) {
                    var j = s - 1
                    while j >= 0, !claimed[j], SpecialTokenMatcher.isSpace(bytes[j]) { claimed[j] = true; j -= 1 }
                }
                if strip.contains(.rstrip) {
                    var j = lastEnd
                    while j < n, !claimed[j], SpecialTokenMatcher.isSpace(bytes[j]) { claimed[j] = true; j += 1 }
                    lastEnd = j
                }
            }
        }
        var fragments: [TokenizerFragment] = []
        var i = 0
        while i < n {
            if let k = starts[i] {
                fragments.append(.token(tokens[Int(k)]))
                i += texts[Int(k)].count
            } else if claimed[i] {
                i += 1
            } else {
                var j = i + 1
                while j < n, !claimed[j] { j += 1 }
                fragments.append(.text(i..<j))
                i = j
            }
        }
        return fragments
    }
}
