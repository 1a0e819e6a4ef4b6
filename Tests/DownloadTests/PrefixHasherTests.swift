import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// A file open for reading and writing in a fresh temporary directory.
private struct ScratchFile {
    let dir: TemporaryDirectory
    let fd: Int32
    var path: String { dir.path + "/file.partial" }

    init() throws {
        dir = try TemporaryDirectory()
        fd = open(dir.path + "/file.partial", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
    }

    /// Writes `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try #require(pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset)) == bytes.count)
    }

    func discard() {
        _ = close(fd)
        dir.remove()
    }
}

@Suite("Hashing a download while it is written")
struct PrefixHasherTests {
    @Test("bytes gathered in the hasher's buffers are hashed from memory once written, not read back from the file")
    func handedBuffersAreHashedFromMemory() throws {
        let file = try ScratchFile()
        defer { file.discard() }
        let slot = 64 << 10
        let body = testBytes(8 * slot + 12_345)
        // Room for every buffer, so none has to wait for the hasher.
        let hasher = try PrefixHasher(fd: file.fd, path: file.path, slots: 10, slotBytes: slot)
        defer { hasher.stop() }
        let coalescer = WriteCoalescer(capacity: slot, handingTo: hasher)
        #expect(coalescer.isFillingHashersBuffer)
        // The file gets zeros where the body goes: a digest of the body shows it was hashed from the buffers.
        var position: Int64 = 0
        let zeros = [UInt8](repeating: 0, count: slot)
        let write: (UnsafeRawBufferPointer) throws -> Int64 = { chunk in
            let at = position
            try zeros.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<chunk.count]), at: at) }
            position += Int64(chunk.count)
            hasher.advance(to: position)
            return at
        }
        try body.withUnsafeBytes { bytes in
            // In libcurl's 16 KiB pieces.
            for start in stride(from: 0, to: bytes.count, by: 16 << 10) {
                try coalescer.add(UnsafeRawBufferPointer(rebasing: bytes[start..<min(bytes.count, start + (16 << 10))]), flush: write)
            }
            try coalescer.drain(write)
        }
        #expect(position == Int64(body.count))
        let digest = try hasher.finish(total: position, cancellation: CancellationFlag())
        #expect(digest == (try sha256Hex(body)))
        #expect(hasher.sources.fromMemory == 9)
        #expect(hasher.sources.readBack == 0)
    }

    @Test("a stretch written while every buffer was taken is read back from the file, before the next handed buffer")
    func gapBeforeAHandedBufferIsReadBack() throws {
        let file = try ScratchFile()
        defer { file.discard() }
        let slotBytes = 64 << 10
        let body = testBytes(3 * slotBytes)
        let hasher = try PrefixHasher(fd: file.fd, path: file.path, slots: 1, slotBytes: slotBytes)
        defer { hasher.stop() }
        let slot = try #require(hasher.borrow())
        #expect(hasher.borrow() == nil)
        try body.withUnsafeBytes { bytes in
            // The first two thirds go to the file only (the pool was empty) ...
            try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<(2 * slotBytes)]), at: 0)
            hasher.advance(to: Int64(2 * slotBytes))
            // ... the last third through the buffer, while the file holds zeros there.
            slot.buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[(2 * slotBytes)...]))
        }
        try [UInt8](repeating: 0, count: slotBytes).withUnsafeBytes { try file.write($0, at: Int64(2 * slotBytes)) }
        hasher.handOver(slot, count: slotBytes, at: Int64(2 * slotBytes))
        let digest = try hasher.finish(total: Int64(body.count), cancellation: CancellationFlag())
        #expect(digest == (try sha256Hex(body)))
        #expect(hasher.sources.fromMemory == 1)
        #expect(hasher.sources.readBack >= 1)
    }

    @Test("without buffers, everything written is read back and hashed in order")
    func readsBackWithoutPool() throws {
        let file = try ScratchFile()
        defer { file.discard() }
        let body = testBytes(5 << 20)   // more than one read-back batch
        let hasher = try PrefixHasher(fd: file.fd, path: file.path)
        defer { hasher.stop() }
        #expect(hasher.borrow() == nil)
        try body.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: 1 << 20) {
                try file.write(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + (1 << 20))]), at: Int64(start))
                hasher.advance(to: Int64(start + (1 << 20)))
            }
        }
        #expect(try hasher.finish(total: Int64(body.count), cancellation: CancellationFlag()) == sha256Hex(body))
        #expect(hasher.sources.fromMemory == 0)
    }

    @Test("buffers offered unwritten are written by the hashing thread, in order with the rest, and hashed")
    func offeredBuffersAreWrittenByTheHasher() throws {
        let file = try ScratchFile()
        defer { file.discard() }
        let slotBytes = 64 << 10
        let body = testBytes(6 * slotBytes + 4321)
        // Room for every buffer, so none has to wait for the hasher (and be read back).
        let hasher = try PrefixHasher(fd: file.fd, path: file.path, slots: 10, slotBytes: slotBytes) { chunk, offset in
            try file.write(chunk, at: offset)
        }
        defer { hasher.stop() }
        let coalescer = WriteCoalescer(capacity: slotBytes, handingTo: hasher)
        var position: Int64 = 0
        var offered = 0
        let write: (UnsafeRawBufferPointer) throws -> Int64 = { chunk in
            let at = position
            try file.write(chunk, at: at)
            position += Int64(chunk.count)
            hasher.advance(to: position)
            return at
        }
        let unwritten: WriteCoalescer.Unwritten = { slot, count in
            guard hasher.offer(slot, count: count, at: position) else { return false }
            position += Int64(count)
            offered += 1
            return true
        }
        try body.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: 16 << 10) {
                try coalescer.add(UnsafeRawBufferPointer(rebasing: bytes[start..<min(bytes.count, start + (16 << 10))]),
                                  flush: write, unwritten: unwritten)
            }
            try coalescer.drain(write, unwritten: unwritten)
        }
        #expect(position == Int64(body.count))
        // The first full buffer finds the thread idle, so at least that one went over unwritten.
        #expect(offered >= 1)
        hasher.waitForWrites()
        #expect(hasher.written(upTo: position) == position)
        let digest = try hasher.finish(total: position, cancellation: CancellationFlag())
        #expect(digest == (try sha256Hex(body)))
        #expect(hasher.sources.wroteHere == offered)
        #expect(hasher.sources.readBack == 0)
        // Every byte reached the file, whichever thread wrote it.
        var back = [UInt8](repeating: 0, count: body.count)
        #expect(back.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress, $0.count, 0) } == body.count)
        #expect(back == body)
    }

    @Test("an offer is declined while one offered is still unwritten or two buffers are queued; until written, it is not counted as written")
    func offersAreDeclinedWhenTheThreadIsBusy() throws {
        let file = try ScratchFile()
        defer { file.discard() }
        let slotBytes = 64 << 10
        // A writer that holds the thread in its first write until the test lets it go.
        let gate = DispatchSemaphore(value: 0)
        let hasher = try PrefixHasher(fd: file.fd, path: file.path, slots: 4, slotBytes: slotBytes) { chunk, offset in
            if offset == 0 { gate.wait() }
            try file.write(chunk, at: offset)
        }
        defer { hasher.stop() }
        let a = try #require(hasher.borrow()), b = try #require(hasher.borrow()), c = try #require(hasher.borrow())
        #expect(hasher.offer(a, count: slotBytes, at: 0))
        // The thread is held writing `a`: a second unwritten buffer waits for it, so the caller writes `b` itself.
        #expect(!hasher.offer(b, count: slotBytes, at: Int64(slotBytes)))
        #expect(hasher.written(upTo: Int64(2 * slotBytes)) == 0)
        try [UInt8](repeating: 7, count: slotBytes).withUnsafeBytes { try file.write($0, at: Int64(slotBytes)) }
        hasher.handOver(b, count: slotBytes, at: Int64(slotBytes))
        #expect(!hasher.offer(c, count: slotBytes, at: Int64(2 * slotBytes)))
        gate.signal()
        hasher.waitForWrites()
        #expect(hasher.written(upTo: Int64(2 * slotBytes)) == Int64(2 * slotBytes))
        hasher.giveBack(c)
    }

    @Test("a failed write of the hashing thread stops it with the writer's error, and the file counts as written only before it")
    func failedWriteIsReported() throws {
        let file = try ScratchFile()
        defer { file.discard() }
        let slotBytes = 64 << 10
        let hasher = try PrefixHasher(fd: file.fd, path: file.path, slots: 2, slotBytes: slotBytes) { _, _ in
            throw TransferError.permanent(.insufficientStorage(needed: 1 << 20, available: 0, path: file.dir.path))
        }
        defer { hasher.stop() }
        let body = testBytes(slotBytes)
        try body.withUnsafeBytes { try file.write($0, at: 0) }
        hasher.advance(to: Int64(slotBytes))
        let slot = try #require(hasher.borrow())
        #expect(hasher.offer(slot, count: slotBytes, at: Int64(slotBytes)))
        hasher.waitForWrites()
        #expect(hasher.written(upTo: Int64(2 * slotBytes)) == Int64(slotBytes))
        let error = try #require(hasher.writeError)
        #expect(isInsufficientStorage(error))
        #expect { try hasher.finish(total: Int64(2 * slotBytes), cancellation: CancellationFlag()) }
            throws: { isInsufficientStorage($0) }
    }
}

/// Whether `error` is the disk-full error a write gives (as the downloader throws it: permanent).
private func isInsufficientStorage(_ error: any Error) -> Bool {
    if case .permanent(let e) = error as? TransferError { return e.code == .insufficientStorage }
    return false
}
