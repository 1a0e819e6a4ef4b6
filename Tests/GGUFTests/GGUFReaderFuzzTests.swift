import Foundation
import Testing
import RunAnywhereGGUF
import RunAnywhereTestSupport

/// Feeds the reader thousands of mutated GGUF files. Each must either open and satisfy every
/// invariant of a valid file, or throw a `GGUFError`; a crash, hang or huge allocation fails the
/// run (the suite has a time limit and the process would die). The limit catches a hang, not a slow
/// run: Swift Testing counts it from the test's start, and on 2 cores a test may wait most of the
/// run for a thread while the kernel and speech suites hold both (578 s seen on a Zen 1 EPYC).
@Suite("GGUF reader survives mutated files", .timeLimit(.minutes(15)))
struct GGUFReaderFuzzTests {
    /// What happened to the mutated files.
    struct Outcome {
        var opened = 0
        var rejected: [GGUFError.Kind: Int] = [:]
        var total: Int { opened + rejected.values.reduce(0, +) }
    }

    /// A scratch directory for thousands of short-lived files: in RAM (/dev/shm) when the system
    /// has it, since on a disk file system the create/unlink churn is ~50x slower.
    static func scratchDirectory() throws -> String {
        let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : FileManager.default.temporaryDirectory.path
        let path = base + "/gguf-fuzz-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `data` to a fresh file in `dir` and opens it; checks the invariants of whatever opens.
    /// (A fresh name each time: rewriting a file that was just mapped is ~4x slower on ext4.)
    static func check(_ data: Data, in dir: String, _ outcome: inout Outcome, _ label: @autoclosure () -> String) throws {
        let path = dir + "/\(outcome.total).gguf"
        try data.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let file: GGUFFile
        do {
            file = try GGUFFile(path: path)
        } catch let error as GGUFError {
            outcome.rejected[error.kind, default: 0] += 1
            #expect(!error.message.isEmpty)
            return
        }
        outcome.opened += 1
        #expect(file.fileSize == data.count, "\(label())")
        #expect(file.alignment > 0 && file.alignment & (file.alignment - 1) == 0, "\(label())")
        #expect(file.metadataKeys.count == file.metadata.count, "\(label())")
        #expect(Set(file.tensors.map(\.name)).count == file.tensors.count, "\(label())")
        var end = file.dataOffset
        for t in file.tensors.sorted(by: { $0.offset < $1.offset }) {
            let ok = t.offset >= end && t.offset % file.alignment == 0 && t.offset + t.byteCount <= file.fileSize
                && !t.shape.isEmpty && t.shape.allSatisfy { $0 > 0 } && t.byteCount == t.rowCount * t.rowByteCount
            #expect(ok, "\(label()): tensor \(t.name) \(t.shape) at \(t.offset)+\(t.byteCount) in \(file.fileSize)")
            end = t.offset + t.byteCount
            // Touch the first and last byte: a bad bound would fault here.
            let bytes = file.bytes(of: t)
            _ = bytes[0] &+ bytes[bytes.count - 1]
        }
    }

    static let boundaryValues: [UInt64] = [0, 1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 255, 256, 4096, 65_536, 1 << 31, 1 << 32,
                                           1 << 40, 1 << 62, UInt64(Int.max), UInt64(Int.max) + 1, UInt64.max - 1, UInt64.max]

    @Test("truncating the file at every byte offset never crashes", arguments: [false, true])
    func truncations(tinyModel: Bool) throws {
        let dir = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer: GGUFWriter
        if tinyModel {
            var spec = TinyModelSpec()
            spec.vocabSize = 259
            spec.embeddingLength = 32
            spec.feedForwardLength = 32
            spec.headCount = 2
            spec.headCountKV = 1
            spec.blockCount = 1
            spec.weightType = .q8_0
            writer = GGUFWriter.tinyModel(spec)
        } else {
            writer = malformedBase()
        }
        let (base, layout) = writer.encode()
        var outcome = Outcome()
        // Every cut inside the header and directory; a stride through the data section up to the
        // end of the last tensor (the padding after it is optional).
        let dataEnd = layout.tensorDataOffsets[layout.tensorDataOffsets.count - 1] + writer.tensors[writer.tensors.count - 1].data.count
        var cuts = Array(0..<layout.dataOffset)
        cuts += Array(stride(from: layout.dataOffset, to: dataEnd, by: max(1, (dataEnd - layout.dataOffset) / 300)))
        for cut in cuts {
            try Self.check(base.prefix(cut), in: dir, &outcome, "cut at \(cut)")
        }
        #expect(outcome.opened == 0, "a truncated file opened")
        #expect(outcome.total == cuts.count)
        try Self.check(base, in: dir, &outcome, "whole file")
        #expect(outcome.opened == 1)
    }

    @Test("5,000 targeted and random mutations give a GGUFError or a valid file")
    func mutations() throws {
        let dir = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (base, layout) = malformedBase().encode()
        // bench/chaos/gguf-fuzz.sh runs this with many seeds (RUNANYWHERE_GGUF_FUZZ_SEED) for the long campaign.
        let seed = ProcessInfo.processInfo.environment["RUNANYWHERE_GGUF_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x6775_6666
        var rng = SeededGenerator(seed: seed)
        var outcome = Outcome()
        func pick<T>(_ values: [T]) -> T { values[Int(rng.next() % UInt64(values.count))] }
        func anyValue() -> UInt64 {
            switch rng.next() % 3 {
            case 0: return pick(Self.boundaryValues)
            case 1: return rng.next() % 1024
            default: return rng.next()
            }
        }
        let headerEnd = layout.directoryEnd
        for iteration in 0..<5000 {
            var d = base
            let strategy = iteration % 10
            switch strategy {
            case 0:  // a count or length field set to a boundary or random value
                let fields = [layout.tensorCountOffset, layout.metadataCountOffset] + layout.metadataEntryOffsets + layout.tensorInfoOffsets
                d.put(anyValue(), at: pick(fields))
            case 1:  // a metadata value type or array element type
                let at = pick(layout.metadataValueTypeOffsets)
                d.put(UInt32(truncatingIfNeeded: rng.next() % 2 == 0 ? rng.next() % 16 : rng.next()), at: at + (rng.next() % 2 == 0 ? 0 : 4))
            case 2:  // a tensor type
                d.put(UInt32(truncatingIfNeeded: rng.next() % 2 == 0 ? rng.next() % 48 : rng.next()), at: pick(layout.tensorTypeOffsets))
            case 3:  // a dimension count or a dimension
                let i = Int(rng.next() % UInt64(layout.tensorDimensionCountOffsets.count))
                if rng.next() % 3 == 0 {
                    d.put(UInt32(truncatingIfNeeded: anyValue()), at: layout.tensorDimensionCountOffsets[i])
                } else {
                    d.put(UInt64(bitPattern: pick([0, -1, -32, Int64.min])) &+ (rng.next() % 2 == 0 ? 0 : anyValue()),
                          at: layout.tensorDimensionCountOffsets[i] + 4)
                }
            case 4:  // a tensor offset: misaligned, another tensor's, past the end or random
                let i = Int(rng.next() % UInt64(layout.tensorOffsetFieldOffsets.count))
                let other = UInt64(pick(layout.tensorDataOffsets) - layout.dataOffset)
                let choices: [UInt64] = [other, other + 1 + rng.next() % 31, UInt64(base.count - layout.dataOffset),
                                         UInt64(base.count), anyValue(), (anyValue() & ~31)]
                d.put(pick(choices), at: layout.tensorOffsetFieldOffsets[i])
            case 5, 6:  // random byte flips in the header and directory
                for _ in 0..<(1 + rng.next() % 8) {
                    d[Int(rng.next() % UInt64(headerEnd))] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255)
                }
            case 7:  // random bytes anywhere
                for _ in 0..<(1 + rng.next() % 4) {
                    d[Int(rng.next() % UInt64(d.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
            case 8:  // insert or delete a few header bytes
                let at = Int(rng.next() % UInt64(headerEnd))
                let n = Int(1 + rng.next() % 8)
                if rng.next() % 2 == 0 {
                    d.insert(contentsOf: (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
                } else {
                    d.removeSubrange(at..<min(at + n, d.count))
                }
            default:  // a mutation and a truncation together
                d[Int(rng.next() % UInt64(headerEnd))] = UInt8(truncatingIfNeeded: rng.next())
                d = d.prefix(Int(rng.next() % UInt64(d.count)))
            }
            try Self.check(d, in: dir, &outcome, "mutation \(iteration) (strategy \(strategy))")
        }
        #expect(outcome.total == 5000)
        print("gguf fuzz: seed \(seed), \(outcome.total) cases, \(outcome.opened) opened valid, rejected \(outcome.rejected.map { "\($0.key): \($0.value)" }.sorted())")
        #expect(outcome.opened > 100, "some mutations (e.g. of string bytes or tensor data) leave a valid file")
        #expect((outcome.rejected[.invalidFormat] ?? 0) > 2000)
        #expect((outcome.rejected[.unsupported] ?? 0) > 10, "unknown tensor types and versions")
        #expect(outcome.rejected[.io] == nil)
    }

    @Test("a real model's header cut through every region, and 500 byte-flipped copies, never crash",
          .enabled(if: TestData.isAvailable, TestData.skipReason))
    func realHeader() throws {
        let dir = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = TestData.model("stories260K.gguf")
        let base = try Data(contentsOf: URL(fileURLWithPath: path))
        let dataOffset = try GGUFFile(path: path).dataOffset
        // Every byte of the fixed header and the tensor directory; every 7th through the vocabulary.
        let firstName = Data([17, 0, 0, 0, 0, 0, 0, 0] + Array("token_embd.weight".utf8))
        let directoryStart = try #require(base.range(of: firstName, in: 0..<dataOffset)).lowerBound
        let cuts = Array(0..<256) + Array(stride(from: 256, to: directoryStart, by: 7)) + Array(directoryStart..<dataOffset)
        var outcome = Outcome()
        for cut in cuts {
            try Self.check(base.prefix(cut), in: dir, &outcome, "stories260K cut at \(cut)")
        }
        #expect(outcome.opened == 0)
        var rng = SeededGenerator(seed: 260)
        for i in 0..<500 {
            var d = base
            for _ in 0..<(1 + rng.next() % 6) {
                d[Int(rng.next() % UInt64(dataOffset))] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255)
            }
            try Self.check(d, in: dir, &outcome, "stories260K flip set \(i)")
        }
        #expect(outcome.total == cuts.count + 500)
        #expect(outcome.opened > 0, "flips inside token strings leave a valid file")
    }
}
