/// Gathers body bytes into large writes: libcurl hands them over 16 KiB at a time, and a `pwrite` per 16 KiB
/// costs more in system calls than copying them here first.
///
/// Given a ``PrefixHasher`` with a pool of buffers as large as its own, it gathers into the pool's buffers and
/// hands each one, once written, to the hasher, which hashes it from memory instead of reading the file back.
/// When the pool is empty (the hasher is behind) it gathers into its own buffer, which the hasher reads back.
/// A full buffer of the pool is first offered to the caller's `unwritten` (which may give it to the hasher's
/// thread to write, ``PrefixHasher/offer(_:count:at:)``); only when that declines is it written here.
final class WriteCoalescer {
    private let own: UnsafeMutableRawBufferPointer
    private var buffer: UnsafeMutableRawBufferPointer
    /// The hasher's buffer being filled, when `buffer` is one.
    private var slot: PrefixHasher.Slot?
    private let hasher: PrefixHasher?
    /// Bytes gathered and not yet handed on.
    private(set) var count = 0

    init(capacity: Int, handingTo hasher: PrefixHasher? = nil) {
        own = .allocate(byteCount: max(1, capacity), alignment: 64)
        buffer = own
        self.hasher = hasher?.slotBytes == own.count ? hasher : nil
        takeSlot()
    }

    deinit {
        if let slot { hasher?.giveBack(slot) }
        own.deallocate()
    }

    /// Whether the bytes being gathered go to the hasher from memory once written.
    var isFillingHashersBuffer: Bool { slot != nil }

    /// Called with a full buffer of the hasher's pool and its byte count before it is written: true when the
    /// callee took it over (the hasher's thread writes it), false to have it written by `flush`.
    typealias Unwritten = (PrefixHasher.Slot, Int) -> Bool

    /// Adds `bytes`, handing each full buffer (or a large input as it is) to `flush`, which writes it and
    /// returns the offset of the file it wrote it at; a buffer of the hasher's pool goes to `unwritten` first.
    func add(_ bytes: UnsafeRawBufferPointer, flush: (UnsafeRawBufferPointer) throws -> Int64,
             unwritten: Unwritten? = nil) rethrows {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count == 0, bytes.count >= buffer.count {
            _ = try flush(bytes)
            return
        }
        var offset = 0
        while offset < bytes.count {
            guard let target = buffer.baseAddress else { return }
            let n = min(buffer.count - count, bytes.count - offset)
            (target + count).copyMemory(from: source + offset, byteCount: n)
            count += n
            offset += n
            if count == buffer.count { try drain(flush, unwritten: unwritten) }
        }
    }

    /// Hands what is gathered to `unwritten` (a buffer of the hasher's pool) or to `flush`. The bytes count as
    /// handed on even when `flush` throws: it must account for what it managed to write, and the rest is
    /// fetched again.
    func drain(_ flush: (UnsafeRawBufferPointer) throws -> Int64, unwritten: Unwritten? = nil) rethrows {
        let n = count
        guard n > 0 else { return }
        count = 0
        if let slot, let unwritten, unwritten(slot, n) {
            self.slot = nil
            buffer = own
            takeSlot()
            return
        }
        let at = try flush(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        if let hasher, let slot {
            hasher.handOver(slot, count: n, at: at)
            self.slot = nil
            buffer = own
        }
        takeSlot()
    }

    /// Gathers the next bytes into a buffer of the hasher's pool, when one is free.
    private func takeSlot() {
        guard slot == nil, let hasher, let next = hasher.borrow() else { return }
        slot = next
        buffer = next.buffer
    }
}
