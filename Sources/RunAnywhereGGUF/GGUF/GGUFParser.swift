/// Reads little-endian GGUF primitives from a byte range, checking every read against its end.
struct GGUFCursor {
    let base: UnsafeRawPointer
    let count: Int
    var offset: Int = 0

    var remaining: Int { count - offset }

    mutating func require(_ n: Int, _ what: @autoclosure () -> String) throws {
        guard n >= 0, n <= remaining else {
            throw GGUFError.invalid("\(what()) at offset \(offset) needs \(n) bytes but the file ends after \(remaining) more (truncated?)")
        }
    }

    mutating func scalar<T: FixedWidthInteger>(_: T.Type, _ what: @autoclosure () -> String) throws -> T {
        try require(MemoryLayout<T>.size, what())
        let v = T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += MemoryLayout<T>.size
        return v
    }

    mutating func u8(_ what: @autoclosure () -> String) throws -> UInt8 { try scalar(UInt8.self, what()) }
    mutating func u32(_ what: @autoclosure () -> String) throws -> UInt32 { try scalar(UInt32.self, what()) }
    mutating func u64(_ what: @autoclosure () -> String) throws -> UInt64 { try scalar(UInt64.self, what()) }

    /// A u64 count or size that must fit in `Int` and be at most `remaining / minBytesEach`.
    mutating func count(_ what: @autoclosure () -> String, minBytesEach: Int) throws -> Int {
        let at = offset
        let raw = try u64(what())
        let limit = minBytesEach > 0 ? remaining / minBytesEach : remaining
        guard raw <= UInt64(limit) else {
            let each = minBytesEach > 1 ? " entries of at least \(minBytesEach) bytes each" : " bytes"
            throw GGUFError.invalid("\(what()) at offset \(at) is \(raw), but only \(remaining) bytes follow: no room for \(raw)\(each) (truncated or corrupt?)")
        }
        return Int(raw)
    }

    mutating func string(_ what: @autoclosure () -> String) throws -> String {
        let length = try count("length of \(what())", minBytesEach: 1)
        let bytes = UnsafeRawBufferPointer(start: base + offset, count: length)
        offset += length
        return GGUFCursor.decodeUTF8(bytes)
    }

    /// Decodes UTF-8, replacing each maximal invalid subpart with U+FFFD (as the standard library
    /// does). Invalid input is repaired here, in one linear pass, rather than by the standard
    /// library's slower repairing initializer, so a hostile file full of bad bytes costs no more
    /// than a valid one.
    static func decodeUTF8(_ bytes: UnsafeRawBufferPointer) -> String {
        var i = 0
        while i < bytes.count, bytes[i] < 0x80 { i += 1 }  // ASCII prefix
        if i == bytes.count || validUTF8Prefix(bytes, from: i) == bytes.count {
            return String(decoding: bytes, as: UTF8.self)
        }
        var repaired: [UInt8] = []
        repaired.reserveCapacity(bytes.count + 16)
        var position = 0
        while position < bytes.count {
            let length = sequenceLength(bytes, at: position)
            if length.isValid {
                repaired.append(contentsOf: bytes[position..<position + length.count])
            } else {
                repaired.append(contentsOf: [0xEF, 0xBF, 0xBD])
            }
            position += length.count
        }
        return String(decoding: repaired, as: UTF8.self)
    }

    /// How far from `start` the bytes are valid UTF-8.
    private static func validUTF8Prefix(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var position = start
        while position < bytes.count {
            let length = sequenceLength(bytes, at: position)
            guard length.isValid else { return position }
            position += length.count
        }
        return position
    }

    /// The length of the sequence at `position`: a whole valid scalar, or the maximal invalid
    /// subpart (at least one byte) that a single U+FFFD replaces.
    private static func sequenceLength(_ bytes: UnsafeRawBufferPointer, at position: Int) -> (count: Int, isValid: Bool) {
        let lead = bytes[position]
        let needed: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // allowed range of the first continuation byte
        switch lead {
        case 0x00...0x7F: return (1, true)
        case 0xC2...0xDF: needed = 1
        case 0xE0: needed = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: needed = 2
        case 0xED: needed = 2; high = 0x9F
        case 0xF0: needed = 3; low = 0x90
        case 0xF1...0xF3: needed = 3
        case 0xF4: needed = 3; high = 0x8F
        default: return (1, false)
        }
        var count = 1
        while count <= needed {
            guard position + count < bytes.count else { return (count, false) }
            let b = bytes[position + count]
            let ok = count == 1 ? (b >= low && b <= high) : (b & 0xC0 == 0x80)
            guard ok else { return (count, false) }
            count += 1
        }
        return (count, true)
    }
}

/// Raw GGUF value type codes.
enum GGUFValueType: UInt32 {
    case uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, bool = 7
    case string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12

    /// The fewest bytes one value of this type can take in a file.
    var minimumEncodedSize: Int {
        switch self {
        case .uint8, .int8, .bool: return 1
        case .uint16, .int16: return 2
        case .uint32, .int32, .float32: return 4
        case .uint64, .int64, .float64, .string: return 8
        case .array: return 12
        }
    }
}

/// The result of parsing a GGUF header: everything but the mapping itself.
struct GGUFHeader {
    var version: UInt32 = 0
    var alignment: Int = GGUFFile.defaultAlignment
    var metadataKeys: [String] = []
    var metadata: [String: GGUFValue] = [:]
    var tensors: [GGUFTensorInfo] = []
    var dataOffset: Int = 0
}

/// Parses a GGUF v2/v3 header and tensor directory from a mapped file, validating every field.
struct GGUFParser {
    static let magic: UInt32 = 0x4655_4747  // "GGUF" read little-endian
    static let maximumNesting = 16
    static let maximumArrayElements = 1 << 23
    static let maximumDimensions = 4

    var cursor: GGUFCursor
    var arrayElementBudget = GGUFParser.maximumArrayElements

    init(base: UnsafeRawPointer, count: Int) {
        cursor = GGUFCursor(base: base, count: count)
    }

    mutating func parse() throws -> GGUFHeader {
        var header = GGUFHeader()
        guard cursor.count >= 24 else {
            throw GGUFError.invalid("file is \(cursor.count) bytes, too small for a GGUF header (24 bytes)")
        }
        let magic = try cursor.u32("magic")
        guard magic == Self.magic else {
            throw GGUFError.invalid("file does not start with the GGUF magic (found 0x\(String(magic.byteSwapped, radix: 16)))")
        }
        let version = try cursor.u32("version")
        if version != 0, version & 0xFFFF == 0 {
            throw GGUFError(.unsupported, "file is a big-endian GGUF (version field \(version.byteSwapped)); only little-endian files are supported")
        }
        guard version == 2 || version == 3 else {
            throw GGUFError(.unsupported, "GGUF version \(version) is not supported (only versions 2 and 3)")
        }
        header.version = version

        // A tensor entry takes at least 32 bytes, a metadata entry at least 13.
        let tensorCount = try cursor.count("tensor count", minBytesEach: 32)
        let metadataCount = try cursor.count("metadata entry count", minBytesEach: 13)

        header.metadataKeys.reserveCapacity(Self.reservation(metadataCount))
        header.metadata.reserveCapacity(Self.reservation(metadataCount))
        for index in 0..<metadataCount {
            let key = try cursor.string("key of metadata entry \(index)")
            let label = Self.shown(key)
            let typeCode = try cursor.u32("type of metadata \(label)")
            let value = try readValue(typeCode: typeCode, key: label, depth: 0)
            guard header.metadata.updateValue(value, forKey: key) == nil else {
                throw GGUFError.invalid("metadata key \(label) appears more than once")
            }
            header.metadataKeys.append(key)
        }

        if let alignmentValue = header.metadata["general.alignment"] {
            guard case .uint32(let a) = alignmentValue else {
                throw GGUFError.invalid("general.alignment must be a uint32, found GGUF type \(alignmentValue.typeCode)")
            }
            guard a > 0, a & (a - 1) == 0 else {
                throw GGUFError.invalid("general.alignment is \(a), not a power of two")
            }
            header.alignment = Int(a)
        }

        var entries: [(name: String, shape: [Int], type: GGMLType, relativeOffset: Int, byteCount: Int)] = []
        entries.reserveCapacity(Self.reservation(tensorCount))
        var names = Set<String>()
        names.reserveCapacity(Self.reservation(tensorCount))
        for index in 0..<tensorCount {
            let fullName = try cursor.string("name of tensor \(index)")
            let name = Self.shown(fullName)  // for messages
            guard names.insert(fullName).inserted else {
                throw GGUFError.invalid("tensor \(name) appears more than once")
            }
            let dimensionCount = try cursor.u32("dimension count of tensor \(name)")
            guard dimensionCount >= 1, dimensionCount <= Self.maximumDimensions else {
                throw GGUFError.invalid("tensor \(name) has \(dimensionCount) dimensions (must be 1...\(Self.maximumDimensions))")
            }
            var shape: [Int] = []
            shape.reserveCapacity(Int(dimensionCount))
            var elements = 1
            for d in 0..<Int(dimensionCount) {
                let raw = try cursor.u64("dimension \(d) of tensor \(name)")
                guard raw >= 1, raw <= UInt64(Int.max) else {
                    throw GGUFError.invalid("tensor \(name) has dimension \(d) = \(Int64(bitPattern: raw)); dimensions must be positive")
                }
                let (product, overflow) = elements.multipliedReportingOverflow(by: Int(raw))
                guard !overflow else {
                    throw GGUFError.invalid("tensor \(name) has an element count that overflows 64 bits")
                }
                elements = product
                shape.append(Int(raw))
            }
            let typeCode = try cursor.u32("type of tensor \(name)")
            guard let type = GGMLType(rawValue: typeCode) else {
                throw GGUFError(.unsupported, "tensor \(name) has ggml type \(typeCode), which this reader does not know")
            }
            let rawOffset = try cursor.u64("data offset of tensor \(name)")
            guard rawOffset <= UInt64(Int.max) else {
                throw GGUFError.invalid("tensor \(name) has data offset \(rawOffset), beyond any file")
            }
            guard shape[0] % type.blockSize == 0 else {
                throw GGUFError.invalid("tensor \(name) has row length \(shape[0]), not a multiple of the \(type.name) block size \(type.blockSize)")
            }
            let rows = elements / shape[0]
            guard let rowBytes = type.rowByteCount(elements: shape[0]) else {
                throw GGUFError.invalid("tensor \(name) has a row size that overflows")
            }
            let (byteCount, overflow) = rowBytes.multipliedReportingOverflow(by: rows)
            guard !overflow, byteCount <= cursor.count else {
                throw GGUFError.invalid("tensor \(name) (\(type.name), shape \(shape)) needs more bytes than the whole file has (\(cursor.count))")
            }
            entries.append((fullName, shape, type, Int(rawOffset), byteCount))
        }

        // Tensor data starts at the next multiple of the alignment after the directory.
        let directoryEnd = cursor.offset
        let (padded, overflow) = directoryEnd.addingReportingOverflow(header.alignment - 1)
        guard !overflow else { throw GGUFError.invalid("tensor data offset overflows") }
        header.dataOffset = padded & ~(header.alignment - 1)
        if !entries.isEmpty, header.dataOffset > cursor.count {
            throw GGUFError.invalid("tensor data section would start at \(header.dataOffset), past the end of the \(cursor.count)-byte file")
        }

        header.tensors.reserveCapacity(entries.count)
        for entry in entries {
            guard entry.relativeOffset % header.alignment == 0 else {
                throw GGUFError.invalid("tensor \(Self.shown(entry.name)) has data offset \(entry.relativeOffset), not a multiple of the alignment \(header.alignment)")
            }
            let (start, o1) = header.dataOffset.addingReportingOverflow(entry.relativeOffset)
            let (end, o2) = start.addingReportingOverflow(entry.byteCount)
            guard !o1, !o2, end <= cursor.count else {
                throw GGUFError.invalid("tensor \(Self.shown(entry.name)) extends past end of file (bytes \(start)..<\(o1 || o2 ? Int.max : end), file has \(cursor.count))")
            }
            header.tensors.append(GGUFTensorInfo(name: entry.name, shape: entry.shape, type: entry.type, offset: start, byteCount: entry.byteCount))
        }

        let byOffset = header.tensors.sorted { $0.offset < $1.offset }
        for (a, b) in zip(byOffset, byOffset.dropFirst()) where a.offset + a.byteCount > b.offset {
            throw GGUFError.invalid("tensors \(Self.shown(a.name)) and \(Self.shown(b.name)) overlap (bytes \(a.offset)..<\(a.offset + a.byteCount) and \(b.offset)..<\(b.offset + b.byteCount))")
        }
        return header
    }

    /// Capacity to reserve for `count` items announced by the file: counts are only bounded by
    /// the bytes left, so beyond 65,536 the collection grows as items actually parse instead.
    static func reservation(_ count: Int) -> Int { min(count, 1 << 16) }

    /// A key or tensor name as shown in an error message: at most 96 characters, control
    /// characters replaced, so a hostile name cannot flood a log or a terminal.
    static func shown(_ text: String) -> String {
        var result = ""
        for (i, scalar) in text.unicodeScalars.enumerated() {
            if i == 96 { return result + "…" }
            result.unicodeScalars.append(scalar.properties.generalCategory == .control ? "?" : scalar)
        }
        return result
    }

    /// Reads one value of type `typeCode`; `key` (already shortened) names it in errors.
    mutating func readValue(typeCode: UInt32, key: String, depth: Int) throws -> GGUFValue {
        guard let type = GGUFValueType(rawValue: typeCode) else {
            throw GGUFError.invalid("metadata \(key) has unknown value type \(typeCode)")
        }
        switch type {
        case .uint8: return .uint8(try cursor.u8(key))
        case .int8: return .int8(Int8(bitPattern: try cursor.u8(key)))
        case .uint16: return .uint16(try cursor.scalar(UInt16.self, key))
        case .int16: return .int16(Int16(bitPattern: try cursor.scalar(UInt16.self, key)))
        case .uint32: return .uint32(try cursor.u32(key))
        case .int32: return .int32(Int32(bitPattern: try cursor.u32(key)))
        case .uint64: return .uint64(try cursor.u64(key))
        case .int64: return .int64(Int64(bitPattern: try cursor.u64(key)))
        case .float32: return .float32(Float(bitPattern: try cursor.u32(key)))
        case .float64: return .float64(Double(bitPattern: try cursor.u64(key)))
        case .bool:
            let at = cursor.offset
            let byte = try cursor.u8(key)
            guard byte <= 1 else { throw GGUFError.invalid("metadata \(key) is a bool with byte value \(byte) at offset \(at)") }
            return .bool(byte == 1)
        case .string: return .string(try cursor.string("string \(key)"))
        case .array:
            guard depth < Self.maximumNesting else {
                throw GGUFError.invalid("metadata \(key) nests arrays more than \(Self.maximumNesting) deep")
            }
            let elementCode = try cursor.u32("element type of array \(key)")
            guard let elementType = GGUFValueType(rawValue: elementCode) else {
                throw GGUFError.invalid("metadata \(key) is an array of unknown value type \(elementCode)")
            }
            let n = try cursor.count("element count of array \(key)", minBytesEach: elementType.minimumEncodedSize)
            guard n <= arrayElementBudget else {
                throw GGUFError.invalid("metadata \(key) brings the number of array elements above \(Self.maximumArrayElements); refusing to load that much metadata")
            }
            arrayElementBudget -= n
            var elements: [GGUFValue] = []
            elements.reserveCapacity(Self.reservation(n))
            for _ in 0..<n {
                elements.append(try readValue(typeCode: elementCode, key: key, depth: depth + 1))
            }
            return .array(elements)
        }
    }
}
