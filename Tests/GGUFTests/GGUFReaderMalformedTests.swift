import Foundation
import Testing
import RunAnywhereGGUF
import RunAnywhereTestSupport

/// A small well-formed file with metadata of several types and four tensors.
func malformedBase() -> GGUFWriter {
    var w = GGUFWriter()
    w.set("general.architecture", .string("llama"))
    w.set("general.alignment", .uint32(32))
    w.set("t.array", .array([.string("a"), .string("bc")]))
    w.set("t.nested", .array([.array([.int8(1)]), .array([.int8(2), .int8(3)])]))
    w.set("t.f32", .float32(1.5))
    w.set("t.bool", .bool(true))
    w.addTensor(name: "a", shape: [8, 2], floats: (0..<16).map(Float.init))
    w.addTensor(name: "b", shape: [32], type: .q8_0, data: GGUFWriter.encode((0..<32).map(Float.init), as: .q8_0))
    w.addTensor(name: "c", shape: [4], type: .f16, data: GGUFWriter.encode([1, 2, 3, 4], as: .f16))
    w.addTensor(name: "d", shape: [3], floats: [7, 8, 9])
    return w
}

/// Writes `bytes` to a file in `dir` and opens it, returning the error it throws (nil when it opens).
func openError(_ bytes: Data, in dir: TemporaryDirectory, name: String = "m.gguf") throws -> GGUFError? {
    let path = dir.path + "/" + name
    try bytes.write(to: URL(fileURLWithPath: path))
    do {
        _ = try GGUFFile(path: path)
        return nil
    } catch let error as GGUFError {
        return error
    }
}

extension Data {
    /// Overwrites `count` bytes at `offset` with the little-endian bytes of `value`.
    mutating func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        Swift.withUnsafeBytes(of: value.littleEndian) { raw in
            for (i, b) in raw.enumerated() { self[startIndex + offset + i] = b }
        }
    }
}

@Suite("GGUF reader rejects malformed files with a useful error")
struct GGUFReaderMalformedTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory(prefix: "gguf-malformed") }

    private func expectInvalid(_ data: Data, mentioning words: [String], kind: GGUFError.Kind = .invalidFormat,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try openError(data, in: dir)
        #expect(error?.kind == kind, "got \(String(describing: error))", sourceLocation: sourceLocation)
        for w in words {
            #expect(error?.message.contains(w) == true, "\(String(describing: error?.message)) should mention \(w)", sourceLocation: sourceLocation)
        }
    }

    @Test("the base fixture itself is valid")
    func baseIsValid() throws {
        #expect(try openError(malformedBase().data(), in: dir) == nil)
        dir.remove()
    }

    @Test("a missing file, a directory and an empty file are reported")
    func ioErrors() throws {
        defer { dir.remove() }
        do {
            _ = try GGUFFile(path: dir.path + "/does-not-exist.gguf")
            Issue.record("opened a missing file")
        } catch let e as GGUFError {
            #expect(e.kind == .io)
            #expect(e.message.contains("does-not-exist.gguf"))
            #expect(e.message.contains("No such file"))
        }
        do {
            _ = try GGUFFile(path: dir.path)
            Issue.record("opened a directory")
        } catch let e as GGUFError {
            #expect(e.kind == .io)
        }
        try expectInvalid(Data(), mentioning: ["0 bytes"])
    }

    @Test("wrong magic, GGUF v1, a future version and big-endian files are rejected")
    func header() throws {
        defer { dir.remove() }
        var d = malformedBase().data()
        d[0] = UInt8(ascii: "X")
        try expectInvalid(d, mentioning: ["magic"])
        d = malformedBase().data()
        d.put(UInt32(1), at: 4)
        try expectInvalid(d, mentioning: ["version 1"], kind: .unsupported)
        d.put(UInt32(4), at: 4)
        try expectInvalid(d, mentioning: ["version 4"], kind: .unsupported)
        d.put(UInt32(3).byteSwapped, at: 4)
        try expectInvalid(d, mentioning: ["big-endian"], kind: .unsupported)
    }

    @Test("a file cut anywhere fails cleanly and names what is missing")
    func truncation() throws {
        defer { dir.remove() }
        let (full, layout) = malformedBase().encode()
        for cut in [30, layout.metadataEntryOffsets[2] + 3, layout.tensorInfoOffsets[1] + 9, layout.directoryEnd - 1] {
            try expectInvalid(full.prefix(cut), mentioning: ["truncated"])
        }
        try expectInvalid(full.prefix(layout.tensorDataOffsets[3] + 4), mentioning: ["tensor d extends past end of file"])
    }

    @Test("huge counts and lengths are refused before anything is allocated")
    func hugeCounts() throws {
        defer { dir.remove() }
        let (base, layout) = malformedBase().encode()
        for (offset, what) in [(layout.tensorCountOffset, "tensor count"), (layout.metadataCountOffset, "metadata entry count"),
                               (layout.metadataEntryOffsets[1], "length of key"), (layout.tensorInfoOffsets[0], "length of name")] {
            for huge in [UInt64.max, UInt64(Int.max), 1 << 40, UInt64(base.count)] {
                var d = base
                d.put(huge, at: offset)
                try expectInvalid(d, mentioning: [what])
            }
        }
        var d = base  // element count of t.array: after key, type (4) and element type (4)
        d.put(UInt64.max / 2, at: layout.metadataValueTypeOffsets[2] + 8)
        try expectInvalid(d, mentioning: ["element count of array t.array"])
    }

    @Test("unknown value types, bad bools, bad alignment and duplicate keys are rejected")
    func badMetadata() throws {
        defer { dir.remove() }
        let (base, layout) = malformedBase().encode()
        var d = base
        d.put(UInt32(13), at: layout.metadataValueTypeOffsets[0])
        try expectInvalid(d, mentioning: ["general.architecture", "unknown value type 13"])
        d = base
        d.put(UInt32(77), at: layout.metadataValueTypeOffsets[2] + 4)
        try expectInvalid(d, mentioning: ["t.array", "unknown value type 77"])
        d = base
        d[layout.tensorInfoOffsets[0] - 1] = 2  // t.bool's value byte is the last byte before the directory
        try expectInvalid(d, mentioning: ["t.bool", "byte value 2"])

        var w = malformedBase()
        w.set("general.alignment", .uint32(48))
        try expectInvalid(w.data(), mentioning: ["alignment", "48", "power of two"])
        w.set("general.alignment", .uint32(0))
        try expectInvalid(w.data(), mentioning: ["alignment"])
        w.set("general.alignment", .uint64(32))
        try expectInvalid(w.data(), mentioning: ["general.alignment must be a uint32"])
        w = malformedBase()
        w.appendDuplicate("t.f32", .float32(2))
        try expectInvalid(w.data(), mentioning: ["t.f32", "more than once"])
    }

    @Test("arrays nested deeper than 16 levels are refused (no stack exhaustion)")
    func deepNesting() throws {
        defer { dir.remove() }
        var value: GGUFValue = .array([.uint8(1)])
        for _ in 0..<17 { value = .array([value]) }
        var w = GGUFWriter()
        w.set("deep", value)
        try expectInvalid(w.data(), mentioning: ["deep", "nests arrays"])
        var ok: GGUFValue = .array([.uint8(1)])
        for _ in 0..<15 { ok = .array([ok]) }
        w.set("deep", ok)
        #expect(try openError(w.data(), in: dir) == nil)

        // A hostile file claiming 100,000 levels within a few bytes each.
        var hostile = Data()
        hostile.append(contentsOf: [0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0])
        hostile.append(contentsOf: bytes([UInt64(0), 1]))
        hostile.append(contentsOf: bytes([UInt64(1)]) + [UInt8(ascii: "k")] + bytes([UInt32(9)]))
        for _ in 0..<100_000 { hostile.append(contentsOf: bytes([UInt32(9)]) + bytes([UInt64(1)])) }
        try expectInvalid(hostile, mentioning: ["nests arrays"])
    }

    @Test("bad tensor entries are rejected, naming the tensor")
    func badTensors() throws {
        defer { dir.remove() }
        let (base, layout) = malformedBase().encode()
        var d = base
        d.put(UInt32(4), at: layout.tensorTypeOffsets[1])   // a removed ggml type id
        try expectInvalid(d, mentioning: ["tensor b", "ggml type 4"], kind: .unsupported)
        d = base
        d.put(UInt32(0xFFFF_FFFF), at: layout.tensorTypeOffsets[1])
        try expectInvalid(d, mentioning: ["tensor b"], kind: .unsupported)
        d = base
        d.put(UInt32(0), at: layout.tensorDimensionCountOffsets[0])
        try expectInvalid(d, mentioning: ["tensor a", "0 dimensions"])
        d = base
        d.put(UInt32(5), at: layout.tensorDimensionCountOffsets[0])
        try expectInvalid(d, mentioning: ["tensor a", "5 dimensions"])
        d = base
        d.put(UInt64(0), at: layout.tensorDimensionCountOffsets[0] + 4 + 8)
        try expectInvalid(d, mentioning: ["tensor a", "dimension 1 = 0"])
        d = base
        d.put(UInt64(bitPattern: -8), at: layout.tensorDimensionCountOffsets[0] + 4)
        try expectInvalid(d, mentioning: ["tensor a", "dimension 0 = -8"])
        d = base
        d.put(UInt64(1 << 40), at: layout.tensorDimensionCountOffsets[0] + 4)
        d.put(UInt64(1 << 40), at: layout.tensorDimensionCountOffsets[0] + 12)
        try expectInvalid(d, mentioning: ["tensor a", "overflows"])
        d = base
        d.put(UInt64(1 << 20), at: layout.tensorDimensionCountOffsets[0] + 4)
        try expectInvalid(d, mentioning: ["tensor a"])
        d = base
        d.put(UInt64(16), at: layout.tensorDimensionCountOffsets[1] + 4)  // Q8_0 row of 16
        try expectInvalid(d, mentioning: ["tensor b", "row length 16", "block size 32"])

        var w = malformedBase()
        w.addTensor(name: "a", shape: [1], floats: [0])
        try expectInvalid(w.data(), mentioning: ["tensor a appears more than once"])
    }

    @Test("misaligned, overlapping and out-of-file tensor offsets are rejected")
    func badOffsets() throws {
        defer { dir.remove() }
        let (base, layout) = malformedBase().encode()
        var d = base
        d.put(UInt64(64 + 4), at: layout.tensorOffsetFieldOffsets[1])
        try expectInvalid(d, mentioning: ["tensor b", "not a multiple of the alignment 32"])
        d = base
        d.put(UInt64(0), at: layout.tensorOffsetFieldOffsets[2])
        try expectInvalid(d, mentioning: ["overlap", "tensor", "c"])
        d = base
        d.put(UInt64(base.count), at: layout.tensorOffsetFieldOffsets[3])
        try expectInvalid(d, mentioning: ["tensor d extends past end of file"])
        d = base
        d.put(UInt64.max & ~31, at: layout.tensorOffsetFieldOffsets[3])
        try expectInvalid(d, mentioning: ["tensor d"])
        d = base
        d.put(UInt64(Int.max) + 1 - 32, at: layout.tensorOffsetFieldOffsets[3])
        try expectInvalid(d, mentioning: ["tensor d"])
    }

    @Test("a huge array of tiny elements is refused beyond the metadata element budget")
    func metadataBudget() throws {
        defer { dir.remove() }
        var d = Data()
        d.append(contentsOf: [0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0])
        d.append(contentsOf: bytes([UInt64(0), 1]))
        d.append(contentsOf: bytes([UInt64(1)]) + [UInt8(ascii: "k")] + bytes([UInt32(9), UInt32(0)]) + bytes([UInt64(1 << 23 + 1)]))
        d.append(Data(count: 1 << 23 + 1))
        try expectInvalid(d, mentioning: ["refusing"])
    }

    @Test("a hostile 100,000-character key or tensor name is shortened in the error message")
    func longNames() throws {
        defer { dir.remove() }
        var w = GGUFWriter()
        let longKey = String(repeating: "k\u{7}", count: 50_000)
        w.set(longKey, .uint8(1))
        var (d, layout) = w.encode()
        d.put(UInt32(42), at: layout.metadataValueTypeOffsets[0])
        let error = try #require(try openError(d, in: dir))
        #expect(error.message.count < 400)
        #expect(error.message.contains("k?k?k?"))
        #expect(error.message.contains("…"))

        w = GGUFWriter()
        w.addTensor(name: String(repeating: "t", count: 100_000), shape: [1], floats: [1])
        (d, layout) = w.encode()
        d.put(UInt64(d.count), at: layout.tensorOffsetFieldOffsets[0])
        let tensorError = try #require(try openError(d, in: dir))
        #expect(tensorError.message.count < 400)
        #expect(tensorError.message.contains("extends past end of file"))
    }
}
