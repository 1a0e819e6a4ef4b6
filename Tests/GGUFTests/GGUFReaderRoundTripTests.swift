import Foundation
import Testing
import RunAnywhereGGUF
import RunAnywhereTestSupport

/// Writes a GGUF with the test-support writer into a fresh temporary directory and opens it.
func roundTrip(_ writer: GGUFWriter, name: String = "model.gguf") throws -> (GGUFFile, TemporaryDirectory) {
    let dir = try TemporaryDirectory(prefix: "gguf-reader")
    let path = dir.path + "/" + name
    try writer.write(to: path)
    return (try GGUFFile(path: path), dir)
}

/// Little-endian bytes of a sequence of values, for raw tensor data.
func bytes<T: FixedWidthInteger>(_ values: [T]) -> [UInt8] {
    values.flatMap { v in withUnsafeBytes(of: v.littleEndian) { Array($0) } }
}

/// /proc/self/NAME as text. The kernel generates it a chunk per read(): one large buffer, so that other tests mapping
/// and unmapping files meanwhile cannot make an entry slip between chunks.
private func procSelf(_ name: String) -> String {
    let fd = open("/proc/self/" + name, O_RDONLY)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var text: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 22)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        text += buffer[0..<n]
    }
    return String(decoding: text, as: UTF8.self)
}

/// The `field` line (e.g. "Rss:") of every mapping of the file at `path` in /proc/self/smaps, in address order.
private func smapsLines(of path: String, field: String) -> [Substring] {
    var result: [Substring] = []
    var inside = false
    for line in procSelf("smaps").split(separator: "\n") {
        if line.first?.isHexDigit == true && line.contains("-") && line.split(separator: " ").count >= 5 {
            inside = line.hasSuffix(path)
        } else if inside && line.hasPrefix(field) {
            result.append(line)
        }
    }
    return result
}

@Suite("GGUF reader round trip with the writer")
struct GGUFReaderRoundTripTests {
    /// A tiny Qwen3-shaped Q8_0 model (64 wide, head_dim 32, FFN 96).
    static var tinyQwen3Q8: TinyModelSpec {
        var spec = TinyModelSpec()
        spec.architecture = .qwen3
        spec.weightType = .q8_0
        spec.embeddingLength = 64
        spec.headDim = 32
        spec.feedForwardLength = 96
        return spec
    }

    static let everyScalar: [(String, GGUFValue)] = [
        ("t.u8", .uint8(250)), ("t.i8", .int8(-7)), ("t.u16", .uint16(65_000)), ("t.i16", .int16(-30_000)),
        ("t.u32", .uint32(4_000_000_000)), ("t.i32", .int32(-2_000_000_000)),
        ("t.u64", .uint64(UInt64.max)), ("t.i64", .int64(Int64.min)),
        ("t.f32", .float32(-1.5e-7)), ("t.f64", .float64(1e300)),
        ("t.true", .bool(true)), ("t.false", .bool(false)),
        ("t.str", .string("héllo, 世界 🦙")), ("t.empty", .string("")),
    ]

    @Test("every metadata type, including nested and empty arrays, reads back unchanged")
    func everyMetadataType() throws {
        var w = GGUFWriter()
        for (k, v) in Self.everyScalar { w.set(k, v) }
        let strings: GGUFValue = .array(["a", "", "ünï", "<0x0A>"].map(GGUFValue.string))
        let nested: GGUFValue = .array([.array([.int32(1), .int32(2)]), .array([.int32(3)]), .array([])])
        let arrayOfStringArrays: GGUFValue = .array([strings, .array([.string("x")])])
        let floats: GGUFValue = .array([.float32(0.25), .float32(-3)])
        let bools: GGUFValue = .array([.bool(true), .bool(false)])
        w.set("a.strings", strings)
        w.set("a.nested", nested, emptyArrayElementType: 5)
        w.set("a.string_arrays", arrayOfStringArrays)
        w.set("a.floats", floats)
        w.set("a.bools", bools)
        w.set("a.empty", .array([]), emptyArrayElementType: 8)
        w.set("a.u64s", .array([.uint64(1), .uint64(UInt64.max)]))
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }

        #expect(file.version == 3)
        #expect(file.metadata.count == Self.everyScalar.count + 7)
        #expect(file.metadataKeys == w.entries.map(\.key))
        for (k, v) in Self.everyScalar {
            if case .float32(let f) = v {
                #expect(file.metadata[k] == .float32(f))
            } else {
                #expect(file.metadata[k] == v, "\(k)")
            }
        }
        #expect(file.metadata["a.strings"] == strings)
        #expect(file.metadata["a.nested"] == nested)
        #expect(file.metadata["a.string_arrays"] == arrayOfStringArrays)
        #expect(file.metadata["a.floats"] == floats)
        #expect(file.metadata["a.bools"] == bools)
        #expect(file.metadata["a.empty"] == .array([]))
        #expect(file.tensors.isEmpty)
    }

    @Test("typed look-ups convert integer widths, reject other types and out-of-range values")
    func typedAccessors() throws {
        var w = GGUFWriter()
        for (k, v) in Self.everyScalar { w.set(k, v) }
        w.set("a.strings", .array([.string("x"), .string("y")]))
        w.set("a.mixed", .array([.array([.string("x")])]))
        w.set("a.ints", .array([.uint8(1), .uint8(200)]))
        w.set("a.floats", .array([.float32(0.5), .float32(2)]))
        w.set("a.f64", .array([.float64(0.125)]))
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }

        #expect(file.int("t.u8") == 250)
        #expect(file.int("t.i8") == -7)
        #expect(file.int("t.u16") == 65_000)
        #expect(file.int("t.i16") == -30_000)
        #expect(file.int("t.u32") == 4_000_000_000)
        #expect(file.int("t.i32") == -2_000_000_000)
        #expect(file.int("t.u64") == nil, "UInt64.max does not fit in Int")
        #expect(file.int("t.i64") == Int(Int64.min))
        #expect(file.int("t.f32") == nil)
        #expect(file.int("t.str") == nil)
        #expect(file.double("t.f32") == Double(Float(-1.5e-7)))
        #expect(file.double("t.f64") == 1e300)
        #expect(file.double("t.i32") == -2_000_000_000)
        #expect(file.double("t.str") == nil)
        #expect(file.bool("t.true") == true)
        #expect(file.bool("t.false") == false)
        #expect(file.bool("t.u8") == nil)
        #expect(file.string("t.str") == "héllo, 世界 🦙")
        #expect(file.string("t.empty") == "")
        #expect(file.string("t.u8") == nil)
        #expect(file.stringArray("a.strings") == ["x", "y"])
        #expect(file.stringArray("a.mixed") == nil)
        #expect(file.stringArray("t.str") == nil)
        #expect(file.intArray("a.ints") == [1, 200])
        #expect(file.intArray("a.strings") == nil)
        #expect(file.floatArray("a.floats") == [0.5, 2])
        #expect(file.floatArray("a.f64") == [0.125])
        #expect(file.floatArray("a.strings") == nil)
        #expect(file.string("missing") == nil && file.int("missing") == nil && file.stringArray("missing") == nil)
    }

    @Test("tensors of several ggml types keep shape, type, size, alignment and bytes",
          arguments: [32, 64, 1, 4096])
    func tensors(alignment: Int) throws {
        var w = GGUFWriter()
        if alignment != 32 { w.set("general.alignment", .uint32(UInt32(alignment))) }
        w.set("general.architecture", .string("test"))
        let f32 = GGUFWriter.encode((0..<24).map(Float.init), as: .f32)
        let f16 = GGUFWriter.encode((0..<10).map { Float($0) / 4 }, as: .f16)
        let q8 = GGUFWriter.encode((0..<64).map { Float($0) - 32 }, as: .q8_0)
        var rng = SeededGenerator(seed: 9)
        let q4k = (0..<(2 * 144)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let q6k = (0..<(3 * 210)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let i32 = bytes([Int32(-1), 7, 1 << 30])
        let bf16 = bytes([UInt16(0x3F80), 0xC000])
        w.addTensor(name: "f32", shape: [4, 3, 2], type: .f32, data: f32)
        w.addTensor(name: "f16", shape: [10], type: .f16, data: f16)
        w.addTensor(name: "q8", shape: [32, 2], type: .q8_0, data: q8)
        w.addTensor(name: "q4k", shape: [256, 2], type: .q4_K, data: q4k)
        w.addTensor(name: "q6k", shape: [256, 1, 3, 1], type: .q6_K, data: q6k)
        w.addTensor(name: "i32", shape: [3], type: .i32, data: i32)
        w.addTensor(name: "bf16", shape: [2], type: .bf16, data: bf16)
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }

        #expect(file.alignment == alignment)
        #expect(file.dataOffset % alignment == 0)
        #expect(file.tensors.map(\.name) == ["f32", "f16", "q8", "q4k", "q6k", "i32", "bf16"])
        let expected: [(String, [Int], GGMLType, [UInt8])] = [
            ("f32", [4, 3, 2], .f32, f32), ("f16", [10], .f16, f16), ("q8", [32, 2], .q8_0, q8),
            ("q4k", [256, 2], .q4_K, q4k), ("q6k", [256, 1, 3, 1], .q6_K, q6k), ("i32", [3], .i32, i32), ("bf16", [2], .bf16, bf16),
        ]
        for (name, shape, type, data) in expected {
            let t = try #require(file.tensor(named: name))
            #expect(t.shape == shape)
            #expect(t.type == type)
            #expect(t.byteCount == data.count, "\(name)")
            #expect(t.offset % alignment == 0)
            #expect(Array(file.bytes(of: t)) == data, "\(name) bytes")
        }
        #expect(file.tensor(named: "q6k")?.elementCount == 768)
        #expect(file.tensor(named: "q6k")?.rowCount == 3)
        #expect(file.tensor(named: "q4k")?.rowByteCount == 144)
        #expect(file.tensor(named: "nope") == nil)
    }

    @Test("GGUF version 2 reads like version 3")
    func version2() throws {
        var w = GGUFWriter()
        w.version = 2
        w.set("k", .string("v"))
        w.addTensor(name: "t", shape: [2], floats: [1, 2])
        let (file, dir) = try roundTrip(w)
        defer { dir.remove() }
        #expect(file.version == 2)
        #expect(file.string("k") == "v")
        #expect(Array(file.bytes(of: try #require(file.tensor(named: "t")))) == GGUFWriter.encode([1, 2], as: .f32))
    }

    @Test("the F16 encoder rounds like the hardware conversion")
    func halfConversion() {
        var rng = SeededGenerator(seed: 3)
        var samples: [Float] = [0, -0, 1, -2, 65504, 65520, 1e-8, 6e-8, 3e-5, .infinity, -.infinity, 0.1, 1.0009765625, 1.00048828125]
        for _ in 0..<20_000 { samples.append(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))) }
        for _ in 0..<20_000 { samples.append(rng.normal(std: 10)) }
        for x in samples where !x.isNaN {
            #if arch(x86_64) || arch(arm64)
            #expect(GGUFWriter.halfBits(x) == Float16(x).bitPattern, "\(x)")
            #endif
        }
        #expect(GGUFWriter.halfBits(.nan) & 0x7C00 == 0x7C00 && GGUFWriter.halfBits(.nan) & 0x3FF != 0)
    }

    @Test("a tiny random model is deterministic per seed and lays out llama.cpp tensor names")
    func tinyModel() throws {
        var spec = Self.tinyQwen3Q8
        spec.tiedOutput = true
        let a = GGUFWriter.tinyModel(spec).data()
        #expect(a == GGUFWriter.tinyModel(spec).data())
        spec.seed = 2
        #expect(a != GGUFWriter.tinyModel(spec).data())

        let (file, dir) = try roundTrip(GGUFWriter.tinyModel(spec))
        defer { dir.remove() }
        #expect(file.tensor(named: "output.weight") == nil)
        #expect(file.tensor(named: "blk.1.attn_q.weight")?.shape == [64, 128])
        #expect(file.tensor(named: "blk.1.attn_k_norm.weight")?.shape == [32])
        #expect(file.tensor(named: "blk.0.ffn_down.weight")?.type == .q8_0)
        #expect(file.tensor(named: "blk.0.ffn_norm.weight")?.type == .f32)
        #expect(file.tensors.count == 1 + 1 + 2 * 11)
        #expect(file.stringArray("tokenizer.ggml.tokens")?.count == 300)
        #expect(file.stringArray("tokenizer.ggml.tokens")?[3 + 10] == "<0x0A>")
    }

    @Test("loading a model advises huge pages for its whole mapping (the smaps VmFlags say hg)",
          .enabled(if: FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled"),
                   "needs Linux with transparent huge pages"))
    func modelMappingAdvisedHugePages() throws {
        let spec = Self.tinyQwen3Q8
        let dir = try TemporaryDirectory(prefix: "gguf-huge")
        defer { dir.remove() }
        let path = dir.path + "/huge.gguf"
        try GGUFWriter.tinyModel(spec).write(to: path)
        // The VmFlags of every mapping of this path (madvise may split it into several).
        func flags() -> [Substring] { smapsLines(of: path, field: "VmFlags:") }
        let file = try GGUFFile(path: path)
        #expect(flags().allSatisfy { !$0.contains(" hg") }, "a file opened for inspection is not advised")
        let model = try GGUFModel(file: file)
        let advised = flags()
        #expect(!advised.isEmpty && advised.allSatisfy { $0.contains(" hg") }, "\(advised)")
        #expect(model.vocabularySize == spec.vocabSize)
    }

    @Test("the mapping is read-only and private, and goes away with the file object",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps"), "needs Linux /proc"))
    func mappingLifetime() throws {
        var w = GGUFWriter()
        w.addTensor(name: "t", shape: [1024], floats: (0..<1024).map(Float.init))
        let dir = try TemporaryDirectory(prefix: "gguf-mapping")
        defer { dir.remove() }
        let path = dir.path + "/mapped.gguf"
        try w.write(to: path)
        func mappings() -> [Substring] { procSelf("maps").split(separator: "\n").filter { $0.hasSuffix(path) } }
        var file: GGUFFile? = try GGUFFile(path: path)
        var lines = mappings()
        for _ in 0..<5 where lines.isEmpty { lines = mappings() }
        #expect(lines.count == 1)
        #expect(lines.first?.split(separator: " ").dropFirst().first == "r--p", "PROT_READ, MAP_PRIVATE")
        // Advice is only a hint: the bytes stay the same.
        file?.prefetchTensorData()
        file?.adviseRandomAccess()
        let t = try #require(file?.tensor(named: "t"))
        #expect(file.map { Array($0.bytes(of: t)) } == GGUFWriter.encode((0..<1024).map(Float.init), as: .f32))
        file = nil
        #expect(mappings().isEmpty, "unmapped when the GGUFFile is released")
    }

    @Test("releasing the header pages drops them from the resident size and keeps every parsed value and byte",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/smaps"), "needs Linux /proc"))
    func releaseHeaderPages() throws {
        // About 1.3 MB of metadata (a vocabulary-sized string array) before one small tensor.
        var w = GGUFWriter()
        let words = (0..<60_000).map { "token-\($0)-abcdefgh" }
        w.set("tokenizer.ggml.tokens", .array(words.map { .string($0) }))
        w.addTensor(name: "t", shape: [1024], floats: (0..<1024).map(Float.init))
        let dir = try TemporaryDirectory(prefix: "gguf-header")
        defer { dir.remove() }
        let path = dir.path + "/header.gguf"
        try w.write(to: path)
        /// Resident kB of this file's mapping, from its /proc/self/smaps entry.
        func residentKB() -> Int? {
            smapsLines(of: path, field: "Rss:").first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        }
        let file = try GGUFFile(path: path)
        #expect(file.dataOffset > 1_000_000)
        // Parsing read the whole header through the mapping.
        let before = try #require(residentKB())
        #expect(before * 1024 >= file.dataOffset - 4096, "parsed header resident: \(before) kB")
        file.releaseHeaderPages()
        let after = try #require(residentKB())
        #expect(after <= 8, "after release \(after) kB of the mapping stay resident (was \(before) kB)")
        // The parsed values were copies; the bytes fault back in from the file when read again.
        #expect(file.metadata["tokenizer.ggml.tokens"] == .array(words.map { .string($0) }))
        let t = try #require(file.tensor(named: "t"))
        #expect(Array(file.bytes(of: t)) == GGUFWriter.encode((0..<1024).map(Float.init), as: .f32))
        #expect(Array(file.fileBytes.prefix(4)) == Array("GGUF".utf8))
    }

    @Test("invalid UTF-8 in strings is repaired with U+FFFD exactly as the standard library repairs it")
    func invalidUTF8() throws {
        // The writer only writes valid strings, so build the file and patch string bytes in place.
        var rng = SeededGenerator(seed: 8)
        let interesting: [UInt8] = [0x41, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xA0, 0x9F, 0x90, 0x8F]
        let samples: [[UInt8]] = (0..<400).map { i in
            (0..<(1 + Int(rng.next() % 10))).map { _ in
                i % 2 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : interesting[Int(rng.next() % UInt64(interesting.count))]
            }
        }
        var w = GGUFWriter()
        w.set("s", .array(samples.map { .string(String(repeating: "x", count: $0.count)) }))
        var (data, layout) = w.encode()
        var offset = layout.metadataValueTypeOffsets[0] + 4 + 4 + 8
        for sample in samples {
            offset += 8
            data.replaceSubrange(offset..<offset + sample.count, with: sample)
            offset += sample.count
        }
        let dir = try TemporaryDirectory(prefix: "gguf-utf8")
        defer { dir.remove() }
        try data.write(to: URL(fileURLWithPath: dir.path + "/u.gguf"))
        let read = try #require(try GGUFFile(path: dir.path + "/u.gguf").stringArray("s"))
        #expect(read.count == samples.count)
        for (got, sample) in zip(read, samples) {
            #expect(Array(got.utf8) == Array(String(decoding: sample, as: UTF8.self).utf8), "\(sample)")
        }
        #expect(read.contains { $0.contains("\u{FFFD}") })
    }
}
