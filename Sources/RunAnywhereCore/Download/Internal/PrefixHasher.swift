import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Hashes a file from offset 0, in order, on a thread of its own, following the bytes writers report as
/// present: the download threads only write, and the digest is ready soon after the last byte.
///
/// Two ways in. A writer that fills its write buffers from the hasher's pool (``borrow()``) hands each one over
/// once written (``handOver(_:count:at:)``) and it is hashed from memory: the bytes are copied once, from
/// libcurl's buffer into the pool's, and not read back. Bytes reported with ``advance(to:)`` alone (several
/// connections writing ranges, a resumed prefix, a stretch written while the pool was empty) are read back
/// from the page cache through a small buffer.
///
/// A hasher made with a `writer` also takes buffers *unwritten* (``offer(_:count:at:)``) while it has at most
/// the one it is working on queued: it writes them itself, then hashes them. A one-connection download on a fast
/// link keeps the receiving thread busier than this one (receiving, gathering and writing against hashing);
/// writing the buffers this thread would otherwise wait for shares the work between the two cores.
///
/// `@unchecked Sendable`: besides its lock and atomics it holds only the pool's memory, and each slot belongs to
/// one side at a time (the writer between ``borrow()`` and ``handOver(_:count:at:)``, the thread after).
package final class PrefixHasher: @unchecked Sendable {
    /// One buffer of the pool, by number.
    package struct Slot {
        package let index: Int
        /// Where the buffer's memory starts (its length is ``PrefixHasher/slotBytes``).
        package let base: UnsafeMutableRawPointer
        package var buffer: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: base, count: bytes) }
        let bytes: Int
    }

    private struct Handed {
        var slot: Int
        var offset: Int64
        var count: Int
        /// Handed over to be written by this thread (``offer(_:count:at:)``), and not yet written.
        var unwritten = false
    }

    /// Writes all of a buffer at an offset of the file (the download's own write, with its disk-full error).
    package typealias Writer = (UnsafeRawBufferPointer, Int64) throws -> Void

    private struct State {
        var hashed: Int64 = 0
        var digest: String?
        var failure: RunAnywhereError?
        /// Why a buffer handed over unwritten could not be written (the writer's error, e.g. disk full).
        var writeFailure: (any Error)?
        var free: [Int] = []
        var handed: [Handed] = []
        /// Slots hashed from memory, and stretches read back from the file (for tests and the benchmark).
        var fromMemory = 0
        var readBack = 0
        /// Buffers this thread wrote (taken with ``offer(_:count:at:)``).
        var wroteHere = 0
    }

    private let fd: Int32
    private let path: String
    private let state: Mutex<State>
    private let available = Atomic<Int64>(0)
    private let writer: Writer?
    /// Set once a write of this thread failed; the error is `State.writeFailure`.
    private let writeFailed = Atomic<Bool>(false)
    /// Set when the thread has returned (done, stopped, or failed).
    private let ended = Atomic<Bool>(false)
    /// What the thread has hashed, for writers deciding whether to wake it.
    private let progress = Atomic<Int64>(0)
    /// 0 running, 1 stop once caught up with `available`, 2 stop now.
    private let mode = Atomic<Int>(0)
    private let sleeping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    /// The pool's memory: `slots` buffers of ``slotBytes`` (none for a hasher that only reads back).
    private let pool: UnsafeMutableRawBufferPointer?
    /// The size of each buffer of the pool.
    package let slotBytes: Int
    /// Bytes read back per system call when hashing from the file.
    static let readBytes = 256 << 10
    /// Without handed buffers, the thread waits for this many new bytes before reading back.
    static let batch: Int64 = 2 << 20

    /// Starts hashing the file open as `fd` (`path` is for messages), with a pool of `slots` buffers of
    /// `slotBytes` each for a writer to fill (none: every byte is read back). With a `writer`, it also takes
    /// filled buffers unwritten and writes them itself (``offer(_:count:at:)``).
    package init(fd: Int32, path: String, slots: Int = 0, slotBytes: Int = 0, writer: Writer? = nil) throws {
        self.fd = fd
        self.path = path
        self.writer = writer
        let slots = slotBytes > 0 ? max(0, slots) : 0
        self.slotBytes = slots > 0 ? slotBytes : 0
        pool = slots > 0 ? .allocate(byteCount: slots * slotBytes, alignment: 64) : nil
        state = Mutex(State(free: Array((0..<slots).reversed())))
        let thread = Thread { [self] in
            loop()
            ended.store(true, ordering: .sequentiallyConsistent)
            exited.signal()
        }
        thread.name = "RunAnywhere.download.hash"
        thread.start()
    }

    deinit { pool?.deallocate() }

    /// A free buffer of the pool to fill with the next bytes of the file, or nil when all are waiting to be hashed.
    package func borrow() -> Slot? {
        guard let pool, let base = pool.baseAddress else { return nil }
        guard let index = state.withLock({ $0.free.popLast() }) else { return nil }
        return Slot(index: index, base: base + index * slotBytes, bytes: slotBytes)
    }

    /// The first `count` bytes of `slot` are written at `offset` of the file: hash them from memory, then free the slot.
    /// Also reports the file as present up to their end.
    package func handOver(_ slot: Slot, count: Int, at offset: Int64) {
        state.withLock { $0.handed.append(Handed(slot: slot.index, offset: offset, count: count)) }
        advance(to: offset + Int64(count), handed: true)
    }

    /// Takes the first `count` bytes of `slot`, which belong at `offset` of the file, *unwritten*, when this thread
    /// has at most one buffer queued (the one it is working on, itself written): it writes them, then hashes them
    /// from memory.
    /// Returns false, leaving the slot with the caller (who writes it and calls ``handOver(_:count:at:)``), when
    /// more is queued, when a write of this thread failed or when the hasher has no writer.
    ///
    /// Until it is written, the file before `offset + count` is not complete: ``written(upTo:)`` says how much is.
    package func offer(_ slot: Slot, count: Int, at offset: Int64) -> Bool {
        guard writer != nil, !writeFailed.load(ordering: .relaxed), mode.load(ordering: .relaxed) == 0 else { return false }
        let taken = state.withLock { s in
            guard s.handed.count <= 1, s.handed.first?.unwritten != true else { return false }
            s.handed.append(Handed(slot: slot.index, offset: offset, count: count, unwritten: true))
            return true
        }
        if taken, sleeping.load(ordering: .sequentiallyConsistent) { wake.signal() }
        return taken
    }

    /// How much of the file's first `end` bytes is written for certain: `end`, or where the first buffer taken
    /// with ``offer(_:count:at:)`` and not yet written starts. What a journal may record as on disk.
    package func written(upTo end: Int64) -> Int64 {
        state.withLock { s in min(end, s.handed.first(where: { $0.unwritten })?.offset ?? end) }
    }

    /// Waits until the buffers taken with ``offer(_:count:at:)`` are written, or a write failed, or the thread
    /// stopped: a checkpoint then records all it can. Short: at most the buffer being hashed and one write.
    package func waitForWrites() {
        while !ended.load(ordering: .sequentiallyConsistent),
              state.withLock({ s in s.writeFailure == nil && s.handed.contains { $0.unwritten } }) {
            usleep(50)
        }
    }

    /// The error of a write this thread failed (disk full, say), once one has: the download stops with it.
    package var writeError: (any Error)? {
        guard writeFailed.load(ordering: .relaxed) else { return nil }
        return state.withLock { $0.writeFailure }
    }

    /// Gives `slot` back unused (the writer failed to write it or stops).
    package func giveBack(_ slot: Slot) {
        state.withLock { $0.free.append(slot.index) }
    }

    /// The first `bytes` of the file are written (or, within them, taken with ``offer(_:count:at:)``): hash up to there.
    package func advance(to bytes: Int64) {
        advance(to: bytes, handed: false)
    }

    private func advance(to bytes: Int64, handed: Bool) {
        if available.load(ordering: .relaxed) < bytes { available.store(bytes, ordering: .sequentiallyConsistent) }
        if sleeping.load(ordering: .sequentiallyConsistent),
           handed || bytes - progress.load(ordering: .relaxed) >= Self.batch {
            wake.signal()
        }
    }

    /// Slots hashed from memory, stretches read back from the file, and slots this thread wrote, so far.
    package var sources: (fromMemory: Int, readBack: Int, wroteHere: Int) {
        state.withLock { ($0.fromMemory, $0.readBack, $0.wroteHere) }
    }

    /// Hashes up to `total`, stops the thread and returns the digest (hex).
    /// - Throws: the writer's error when a buffer taken unwritten could not be written; `.storageFailure` when
    ///   the file could not be read back; `TransferError.cancelled`.
    package func finish(total: Int64, cancellation: CancellationFlag) throws -> String {
        advance(to: total)
        mode.store(1, ordering: .sequentiallyConsistent)
        wake.signal()
        while exited.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if cancellation.isCancelled {
                stop()
                throw TransferError.cancelled
            }
        }
        exited.signal()   // later calls to finish or stop return at once
        return try state.withLock { s in
            if let failure = s.writeFailure { throw failure }
            if let failure = s.failure { throw failure }
            guard s.hashed == total, let digest = s.digest else {
                throw RunAnywhereError(.storageFailure, "\(path) holds \(s.hashed) bytes, not the \(total) it should.")
            }
            return digest
        }
    }

    /// Stops the thread without a digest (the download failed or starts over).
    package func stop() {
        mode.store(2, ordering: .sequentiallyConsistent)
        wake.signal()
        exited.wait()
        exited.signal()
    }

    /// What the thread does next.
    private enum Step {
        case memory(Handed)
        case file(to: Int64)
        case release(Handed)
        case wait
        case done
    }

    private func next(hashed: Int64) -> Step {
        let mode = mode.load(ordering: .sequentiallyConsistent)
        if mode == 2 { return .done }
        let target = available.load(ordering: .sequentiallyConsistent)
        let first = state.withLock { $0.handed.first }
        if let first {
            if first.offset + Int64(first.count) <= hashed { return .release(first) }   // read back meanwhile
            if first.offset == hashed { return .memory(first) }
            // A stretch before it was written while the pool was empty (or it overlaps what was read back).
            return .file(to: max(hashed, first.offset < hashed ? first.offset + Int64(first.count) : first.offset))
        }
        if target - hashed >= Self.batch || (mode == 1 && hashed < target) { return .file(to: target) }
        return mode == 1 ? .done : .wait
    }

    private func loop() {
        var hashed: Int64 = 0
        let hasher: SHA256Hasher
        do { hasher = try SHA256Hasher() } catch {
            state.withLock { $0.failure = error as? RunAnywhereError ?? RunAnywhereError(.storageFailure, "\(error)") }
            return
        }
        // Read back through a buffer small enough to stay in this core's cache while it is hashed.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readBytes, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            switch next(hashed: hashed) {
            case .done:
                if mode.load(ordering: .sequentiallyConsistent) == 1 {
                    let digest = hasher.hexDigest()
                    state.withLock { $0.digest = digest }
                }
                return
            case .wait:
                sleeping.store(true, ordering: .sequentiallyConsistent)
                if case .wait = next(hashed: hashed) { _ = wake.wait(timeout: .now() + .milliseconds(50)) }
                sleeping.store(false, ordering: .sequentiallyConsistent)
                continue
            case .release(let handed):
                // Read back meanwhile (a buffer taken unwritten is never: the file before it is read back only
                // up to its offset); written anyway if it was not, so the file holds what was received.
                guard handed.unwritten ? write(handed, hashingWith: nil) : true else { return }
                state.withLock { s in
                    s.handed.removeFirst()
                    s.free.append(handed.slot)
                }
                continue
            case .memory(let handed):
                guard let base = pool?.baseAddress else { return }
                let start = base + handed.slot * slotBytes
                if handed.unwritten {
                    guard write(handed, hashingWith: hasher) else { return }
                } else {
                    hasher.update(UnsafeRawBufferPointer(start: start, count: handed.count))
                }
                hashed += Int64(handed.count)
                state.withLock { s in
                    s.handed.removeFirst()
                    s.free.append(handed.slot)
                    s.hashed = hashed
                    s.fromMemory += 1
                }
            case .file(let end):
                do {
                    try hashRead(hasher, from: hashed, to: end, buffer: buffer)
                } catch {
                    state.withLock { $0.failure = error }
                    return
                }
                hashed = end
                state.withLock { s in
                    s.hashed = hashed
                    s.readBack += 1
                }
            }
            progress.store(hashed, ordering: .relaxed)
        }
    }

    /// Writes a buffer taken with ``offer(_:count:at:)`` (the first of `handed`), hashing each piece after writing
    /// it when given a `hasher`, and marks it written. Pieces of ``readBytes``: each is hashed while the write
    /// has left it in this core's cache, and the file's lock (one writer at a time, per file) is never held long
    /// by this thread while the receiving thread waits to write. On failure, records the error and returns false:
    /// the thread stops, and the file counts as written only before the buffer.
    private func write(_ handed: Handed, hashingWith hasher: SHA256Hasher?) -> Bool {
        guard let writer, let base = pool?.baseAddress else { return false }
        let start = base + handed.slot * slotBytes
        var done = 0
        while done < handed.count {
            let piece = UnsafeRawBufferPointer(start: start + done, count: min(Self.readBytes, handed.count - done))
            do {
                try writer(piece, handed.offset + Int64(done))
            } catch {
                state.withLock { $0.writeFailure = error }
                writeFailed.store(true, ordering: .sequentiallyConsistent)
                return false
            }
            hasher?.update(piece)
            done += piece.count
        }
        state.withLock { s in
            if !s.handed.isEmpty { s.handed[0].unwritten = false }
            s.wroteHere += 1
        }
        return true
    }

    /// Hashes bytes [from, to) of the file, read back from the page cache through `buffer`.
    private func hashRead(_ hasher: SHA256Hasher, from: Int64, to: Int64,
                          buffer: UnsafeMutableRawBufferPointer) throws(RunAnywhereError) {
        _ = try hasher.update(readingFile: fd, path: path, from: from, to: to, through: buffer) {
            mode.load(ordering: .relaxed) == 2
        }
    }
}
