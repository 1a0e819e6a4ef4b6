import Foundation
import RunAnywhereGGUF

/// Builds GGUF files for tests: metadata of every type (arrays of strings, arrays of arrays),
/// tensors of any ggml type from raw bytes, alignment padding and a custom `general.alignment`.
///
/// By default it writes well-formed GGUF v3. For negative tests it can also write what a reader
/// must reject: raw type ids, zero dimensions, explicit (misaligned, overlapping or out-of-file)
/// tensor offsets, duplicate keys. ``encode()`` reports where each part landed so a test can
/// corrupt a chosen field.
///
/// ```swift
/// var writer = GGUFWriter()
/// writer.set("general.architecture", .string("llama"))
/// writer.addTensor(name: "w", shape: [4, 2], type: .f32, data: Array(repeating: 0, count: 32))
/// try writer.write(to: dir.path + "/model.gguf")
/// ```
public struct GGUFWriter: Sendable {
    /// One metadata entry as it will be written.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value.
        public var value: GGUFValue
        /// Element type code written for an empty array (or an array whose elements are themselves
        /// empty arrays); ignored otherwise. Default 0 (uint8).
        public var emptyArrayElementType: UInt32
    }

    /// One tensor as it will be written.
    public struct Tensor: Sendable, Hashable {
        /// The name.
        public var name: String
        /// Dimensions in ggml order (`shape[0]` = row length); written as given, even zero.
        public var shape: [Int]
        /// The ggml type id written (normally a `GGMLType.rawValue`).
        public var typeID: UInt32
        /// The raw tensor bytes.
        public var data: [UInt8]
        /// Offset relative to the data section, or nil to place it after the previous tensor,
        /// aligned. An explicit offset is written as given (the bytes are still appended in order).
        public var relativeOffset: UInt64?
    }

    /// Where the parts of an encoded file lie (absolute byte offsets).
    public struct Layout: Sendable, Hashable {
        /// Offset of the tensor count field (8 bytes).
        public var tensorCountOffset = 8
        /// Offset of the metadata count field (8 bytes).
        public var metadataCountOffset = 16
        /// Start of each metadata entry (its key length field), in order.
        public var metadataEntryOffsets: [Int] = []
        /// Offset of each metadata entry's value type field.
        public var metadataValueTypeOffsets: [Int] = []
        /// Start of each tensor info (its name length field), in order.
        public var tensorInfoOffsets: [Int] = []
        /// Offset of each tensor info's dimension count field.
        public var tensorDimensionCountOffsets: [Int] = []
        /// Offset of each tensor info's type field.
        public var tensorTypeOffsets: [Int] = []
        /// Offset of each tensor info's data offset field.
        public var tensorOffsetFieldOffsets: [Int] = []
        /// End of the tensor directory (before alignment padding).
        public var directoryEnd = 0
        /// Start of the tensor data section.
        public var dataOffset = 0
        /// Absolute start of each tensor's bytes.
        public var tensorDataOffsets: [Int] = []
        /// Total file size.
        public var fileSize = 0
    }

    /// The GGUF version written in the header (2 and 3 have the same little-endian layout).
    public var version: UInt32 = 3
    /// Metadata entries in file order.
    public var entries: [Entry] = []
    /// Tensors in file order.
    public var tensors: [Tensor] = []
    /// Byte written in padding (0 by default).
    public var paddingByte: UInt8 = 0

    /// Creates an empty writer (GGUF v3, no metadata, no tensors).
    public init() {}

    /// Data alignment: `general.alignment` when present as a positive uint32, else 32.
    public var alignment: Int {
        if let entry = entries.last(where: { $0.key == "general.alignment" }), case .uint32(let a) = entry.value, a > 0 {
            return Int(a)
        }
        return 32
    }

    /// Sets `key` to `value`, replacing an earlier entry with the same key (keeping its position).
    /// - Parameter emptyArrayElementType: element type code written when `value` is an empty array.
    public mutating func set(_ key: String, _ value: GGUFValue, emptyArrayElementType: UInt32 = 0) {
        let entry = Entry(key: key, value: value, emptyArrayElementType: emptyArrayElementType)
        if let i = entries.firstIndex(where: { $0.key == key }) {
            entries[i] = entry
        } else {
            entries.append(entry)
        }
    }

    /// Appends an entry even if the key exists already (to test duplicate-key rejection).
    public mutating func appendDuplicate(_ key: String, _ value: GGUFValue) {
        entries.append(Entry(key: key, value: value, emptyArrayElementType: 0))
    }

    /// Adds a tensor of a known type from its raw bytes.
    public mutating func addTensor(name: String, shape: [Int], type: GGMLType, data: [UInt8], relativeOffset: UInt64? = nil) {
        tensors.append(Tensor(name: name, shape: shape, typeID: type.rawValue, data: data, relativeOffset: relativeOffset))
    }

    /// Adds an F32 tensor from its values.
    public mutating func addTensor(name: String, shape: [Int], floats: [Float]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(floats.count * 4)
        for f in floats { withUnsafeBytes(of: f.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        addTensor(name: name, shape: shape, type: .f32, data: bytes)
    }

    /// Adds a tensor with a raw type id (possibly unknown) for negative tests.
    public mutating func addRawTensor(name: String, shape: [Int], typeID: UInt32, data: [UInt8], relativeOffset: UInt64? = nil) {
        tensors.append(Tensor(name: name, shape: shape, typeID: typeID, data: data, relativeOffset: relativeOffset))
    }

    /// The encoded file.
    public func data() -> Data { encode().data }

    /// Writes the encoded file to `path`, replacing what is there.
    public func write(to path: String) throws {
        try data().write(to: URL(fileURLWithPath: path))
    }

    /// The encoded file and where each part of it lies.
    public func encode() -> (data: Data, layout: Layout) {
        var out = ByteSink()
        var layout = Layout()
        out.u32(0x4655_4747)
        out.u32(version)
        out.u64(UInt64(tensors.count))
        out.u64(UInt64(entries.count))
        for entry in entries {
            layout.metadataEntryOffsets.append(out.count)
            out.string(entry.key)
            layout.metadataValueTypeOffsets.append(out.count)
            out.u32(entry.value.typeCode)
            out.value(entry.value, emptyArrayElementType: entry.emptyArrayElementType)
        }
        let align = alignment
        // Default placement: each tensor after the previous one, aligned.
        var next: UInt64 = 0
        var placements: [UInt64] = []
        for tensor in tensors {
            let offset = tensor.relativeOffset ?? next
            placements.append(offset)
            next = Self.align(UInt64(offset) &+ UInt64(tensor.data.count), to: UInt64(align))
        }
        for (tensor, offset) in zip(tensors, placements) {
            layout.tensorInfoOffsets.append(out.count)
            out.string(tensor.name)
            layout.tensorDimensionCountOffsets.append(out.count)
            out.u32(UInt32(tensor.shape.count))
            for d in tensor.shape { out.u64(UInt64(bitPattern: Int64(d))) }
            layout.tensorTypeOffsets.append(out.count)
            out.u32(tensor.typeID)
            layout.tensorOffsetFieldOffsets.append(out.count)
            out.u64(offset)
        }
        layout.directoryEnd = out.count
        out.pad(to: align, with: paddingByte)
        layout.dataOffset = out.count
        // Bytes go where their offset says when offsets are increasing; otherwise they are appended.
        for (tensor, offset) in zip(tensors, placements) {
            let wanted = layout.dataOffset + Int(clamping: offset)
            if wanted >= out.count, wanted - out.count < 1 << 20 {
                out.bytes.append(contentsOf: repeatElement(paddingByte, count: wanted - out.count))
            }
            layout.tensorDataOffsets.append(out.count)
            out.bytes.append(contentsOf: tensor.data)
        }
        if !tensors.isEmpty { out.pad(to: align, with: paddingByte) }
        layout.fileSize = out.count
        return (Data(out.bytes), layout)
    }

    static func align(_ value: UInt64, to alignment: UInt64) -> UInt64 {
        let r = value % alignment
        return r == 0 ? value : value &+ (alignment - r)
    }
}

/// Little-endian byte accumulator.
private struct ByteSink {
    var bytes: [UInt8] = []
    var count: Int { bytes.count }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }

    mutating func string(_ s: String) {
        let utf8 = Array(s.utf8)
        u64(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func pad(to alignment: Int, with byte: UInt8) {
        let r = bytes.count % alignment
        if r != 0 { bytes.append(contentsOf: repeatElement(byte, count: alignment - r)) }
    }

    mutating func value(_ value: GGUFValue, emptyArrayElementType: UInt32) {
        switch value {
        case .uint8(let v): u8(v)
        case .int8(let v): u8(UInt8(bitPattern: v))
        case .uint16(let v): u16(v)
        case .int16(let v): u16(UInt16(bitPattern: v))
        case .uint32(let v): u32(v)
        case .int32(let v): u32(UInt32(bitPattern: v))
        case .uint64(let v): u64(v)
        case .int64(let v): u64(UInt64(bitPattern: v))
        case .float32(let v): u32(v.bitPattern)
        case .float64(let v): u64(v.bitPattern)
        case .bool(let v): u8(v ? 1 : 0)
        case .string(let s): string(s)
        case .array(let elements):
            u32(elements.first?.typeCode ?? emptyArrayElementType)
            u64(UInt64(elements.count))
            for element in elements { self.value(element, emptyArrayElementType: emptyArrayElementType) }
        }
    }
}
