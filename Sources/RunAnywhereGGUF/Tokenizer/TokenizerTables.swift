/// An open-addressing hash map from byte strings to token ids, looked up without allocating.
struct ByteStringTable: Sendable {
    private var storage: [UInt8] = []        // all keys, back to back
    private var keyStart: [Int32] = []       // per entry: offset of its key in `storage`
    private var keyLength: [Int32] = []
    private var values: [Int32] = []
    private var slots: [Int32]               // entry index + 1, or 0 for empty
    private var mask: Int

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
    }

    var count: Int { values.count }

    @inline(__always)
    static func hash(_ p: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in p { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        h ^= h >> 29
        return Int(truncatingIfNeeded: h)
    }

    /// The value stored for `key`, or nil.
    @inline(__always)
    func lookup(_ key: UnsafeBufferPointer<UInt8>) -> Int32? {
        var i = ByteStringTable.hash(key) & mask
        return storage.withUnsafeBufferPointer { store in
            while true {
                let slot = Int(slots[i])
                if slot == 0 { return nil }
                let e = slot - 1
                let len = Int(keyLength[e])
                if len == key.count {
                    let start = Int(keyStart[e])
                    var equal = true
                    var k = 0
                    while k < len {
                        if store[start + k] != key[k] { equal = false; break }
                        k += 1
                    }
                    if equal { return values[e] }
                }
                i = (i + 1) & mask
            }
        }
    }

    func lookup(_ key: [UInt8]) -> Int32? {
        key.withUnsafeBufferPointer { lookup($0) }
    }

    /// Inserts `key` → `value` unless `key` is already present; returns the stored value.
    @discardableResult
    mutating func insertIfAbsent(_ key: [UInt8], _ value: Int32) -> Int32 {
        if let existing = lookup(key) { return existing }
        if (values.count + 1) * 2 > slots.count { grow() }
        let e = values.count
        keyStart.append(Int32(storage.count))
        keyLength.append(Int32(key.count))
        storage.append(contentsOf: key)
        values.append(value)
        place(entry: e)
        return value
    }

    private mutating func place(entry e: Int) {
        let start = Int(keyStart[e]), len = Int(keyLength[e])
        let h = storage.withUnsafeBufferPointer { ByteStringTable.hash(UnsafeBufferPointer(rebasing: $0[start..<(start + len)])) }
        var i = h & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = Int32(e + 1)
    }

    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        mask = slots.count - 1
        for e in 0..<values.count { place(entry: e) }
    }
}

/// An open-addressing hash map from a pair of symbol ids to a BPE merge (rank and result).
struct MergeTable: Sendable {
    private var keys: [UInt64]
    private var ranks: [Int32]
    private var results: [Int32]
    private let mask: Int
    private static let empty = UInt64.max

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = [UInt64](repeating: MergeTable.empty, count: size)
        ranks = [Int32](repeating: 0, count: size)
        results = [Int32](repeating: 0, count: size)
        mask = size - 1
    }

    @inline(__always) private static func key(_ left: Int32, _ right: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: left)) << 32 | UInt64(UInt32(bitPattern: right))
    }

    @inline(__always) private static func slot(_ key: UInt64, _ mask: Int) -> Int {
        let h = key &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: h >> 32) & mask
    }

    /// Adds a merge unless the pair already has one (the first, lowest rank, wins).
    mutating func insertIfAbsent(_ left: Int32, _ right: Int32, rank: Int32, result: Int32) {
        let k = MergeTable.key(left, right)
        var i = MergeTable.slot(k, mask)
        while keys[i] != MergeTable.empty {
            if keys[i] == k { return }
            i = (i + 1) & mask
        }
        keys[i] = k
        ranks[i] = rank
        results[i] = result
    }

    /// The merge of `left` followed by `right`: its rank (lower merges first) and resulting symbol.
    @inline(__always)
    func lookup(_ left: Int32, _ right: Int32) -> (rank: Int32, result: Int32)? {
        let k = MergeTable.key(left, right)
        var i = MergeTable.slot(k, mask)
        return keys.withUnsafeBufferPointer { keys in
            while true {
                let stored = keys[i]
                if stored == k { return (ranks[i], results[i]) }
                if stored == MergeTable.empty { return nil }
                i = (i + 1) & mask
            }
        }
    }
}
