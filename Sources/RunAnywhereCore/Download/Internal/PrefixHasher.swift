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
    }

    private struct State {
        var hashed: Int64 = 0
        var digest: String?
        var failure: RunAnywhereError?
        var free: [Int] = []
        var handed: [Handed] = []
        /// Slots hashed from memory, and stretches read back from the file (for tests and the benchmark).
        var fromMemory = 0
        var readBack = 0
    }

    private let fd: Int32
    private let path: String
    private let state: Mutex<State>
    private let available = Atomic<Int64>(0)
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
    /// `slotBytes` each for a writer to fill (none: every byte is read back).
    package init(fd: Int32, path: String, slots: Int = 0, slotBytes: Int = 0) throws {
        self.fd = fd
        self.path = path
        let slots = slotBytes > 0 ? max(0, slots) : 0
        self.slotBytes = slots > 0 ? slotBytes : 0
        pool = slots > 0 ? .allocate(byteCount: slots * slotBytes, alignment: 64) : nil
        state = Mutex(State(free: Array((0..<slots).reversed())))
        let thread = Thread { [self] in
            loop()
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

    /// Gives `slot` back unused (the writer failed to write it or stops).
    package func giveBack(_ slot: Slot) {
        state.withLock { $0.free.append(slot.index) }
    }

    /// The first `bytes` of the file are written: hash up to there.
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

    /// Slots hashed from memory and stretches read back from the file so far.
    package var sources: (fromMemory: Int, readBack: Int) {
        state.withLock { ($0.fromMemory, $0.readBack) }
    }

    /// Hashes up to `total`, stops the thread and returns the digest (hex).
    /// - Throws: `.storageFailure` when the file could not be read back; `TransferError.cancelled`.
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
                state.withLock { s in
                    s.handed.removeFirst()
                    s.free.append(handed.slot)
                }
                continue
            case .memory(let handed):
                guard let base = pool?.baseAddress else { return }
                let start = base + handed.slot * slotBytes
                hasher.update(UnsafeRawBufferPointer(start: start, count: handed.count))
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

    /// Hashes bytes [from, to) of the file, read back from the page cache through `buffer`.
    private func hashRead(_ hasher: SHA256Hasher, from: Int64, to: Int64,
                          buffer: UnsafeMutableRawBufferPointer) throws(RunAnywhereError) {
        _ = try hasher.update(readingFile: fd, path: path, from: from, to: to, through: buffer) {
            mode.load(ordering: .relaxed) == 2
        }
    }
}
