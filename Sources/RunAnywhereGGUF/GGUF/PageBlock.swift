import CKernels

/// One block of zeroed pages from the operating system holding several buffers, each 64-byte aligned.
/// Freed in one piece when the last reference goes, straight back to the system.
final class PageBlock: @unchecked Sendable {
    /// Where each buffer sits in the block.
    struct Layout {
        fileprivate var offsets: [Int] = []
        fileprivate var total = 0

        /// Bytes the block will have.
        var byteCount: Int { total }

        /// Reserves `bytes` and returns the slot to ask for later.
        mutating func add(_ bytes: Int) -> Int {
            offsets.append(total)
            total += (max(0, bytes) + 63) / 64 * 64
            return offsets.count - 1
        }
    }

    private let base: UnsafeMutableRawPointer
    private let layout: Layout
    /// Bytes in the block.
    let byteCount: Int

    /// Maps the pages for `layout`; throws `.io` naming `purpose` when the system refuses that much memory.
    init(_ layout: Layout, purpose: String = "the KV cache and buffers") throws {
        guard let base = ra_alloc_pages(layout.total) else {
            throw GGUFError(.io, "could not allocate \(layout.total) bytes for \(purpose)")
        }
        self.base = base
        self.layout = layout
        byteCount = layout.total
    }

    deinit { ra_free_pages(base, layout.total) }

    /// Asks for the block to be backed by huge pages where the system has them (a hint; ra_advise_huge_pages).
    func adviseHugePages() { _ = ra_advise_huge_pages(base, layout.total) }

    /// The buffer of `slot`, untyped.
    func raw(_ slot: Int) -> UnsafeMutableRawPointer { base + layout.offsets[slot] }

    /// The buffer of `slot` as `T`s (the pages start zeroed).
    func pointer<T>(_ slot: Int, as type: T.Type) -> UnsafeMutablePointer<T> {
        let start = raw(slot)
        let next = slot + 1 < layout.offsets.count ? layout.offsets[slot + 1] : layout.total
        return start.bindMemory(to: T.self, capacity: max(0, next - layout.offsets[slot]) / MemoryLayout<T>.stride)
    }
}
