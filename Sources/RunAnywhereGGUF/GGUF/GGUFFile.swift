#if canImport(Glibc)
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#elseif canImport(Darwin)
import Darwin
#endif
import CKernels

/// A GGUF model file, memory-mapped read-only and parsed.
///
/// Opening validates the whole header and tensor directory: every count, length, dimension,
/// offset and size is checked against the file size, so a truncated, corrupt or hostile file
/// throws a ``GGUFError`` instead of crashing or allocating without bound. Limits: arrays nest at
/// most 16 deep, all metadata arrays together hold at most 8,388,608 elements (real tokenizers use
/// about 1.5 million), tensors have 1 to 4 positive dimensions, tensor data is aligned, inside the
/// file and not overlapping, and names and keys are unique. Tensor data stays in
/// the mapping (`PROT_READ`, `MAP_PRIVATE`) and is never copied; the mapping lives as long as
/// this object.
///
/// ```swift
/// let file = try GGUFFile(path: "/models/qwen3-0.6b-q8_0.gguf")
/// print(file.string("general.architecture") ?? "?", file.tensors.count)
/// if let embd = file.tensor(named: "token_embd.weight") {
///     let bytes = file.data(of: embd)   // points into the mapping
/// }
/// ```
///
/// - Note: the file must not be truncated by another process while it is mapped (the kernel
///   would deliver SIGBUS on access to the lost pages).
public final class GGUFFile: @unchecked Sendable {
    /// The alignment of tensor data when `general.alignment` is absent.
    public static let defaultAlignment = 32

    /// The path the file was opened from.
    public let path: String
    /// GGUF format version (2 or 3).
    public let version: UInt32
    /// Size of the file in bytes.
    public let fileSize: Int
    /// Alignment of tensor data (`general.alignment`, default 32).
    public let alignment: Int
    /// Every metadata key and value.
    public let metadata: [String: GGUFValue]
    /// Metadata keys in the order they appear in the file.
    public let metadataKeys: [String]
    /// Every tensor, in file order.
    public let tensors: [GGUFTensorInfo]
    /// Absolute offset of the tensor data section.
    public let dataOffset: Int

    private let mapping: Mapping
    private let tensorIndex: [String: Int]

    /// Opens, maps and validates a GGUF v2 or v3 file.
    ///
    /// - Throws: ``GGUFError`` — `.io` when the file cannot be opened or mapped,
    ///   `.invalidFormat` when it is malformed (the message says what and where),
    ///   `.unsupported` for GGUF v1, big-endian files or unknown tensor types.
    public init(path: String) throws {
        self.path = path
        let mapping = try Mapping(path: path)
        var parser = GGUFParser(base: UnsafeRawPointer(mapping.base), count: mapping.size)
        let header: GGUFHeader
        do {
            header = try parser.parse()
        } catch let error as GGUFError {
            throw GGUFError(error.kind, "\(path): \(error.message)")
        }
        self.mapping = mapping
        fileSize = mapping.size
        version = header.version
        alignment = header.alignment
        metadata = header.metadata
        metadataKeys = header.metadataKeys
        tensors = header.tensors
        dataOffset = header.dataOffset
        var index: [String: Int] = [:]
        index.reserveCapacity(tensors.count)
        for (i, t) in tensors.enumerated() { index[t.name] = i }
        tensorIndex = index
    }

    /// The tensor with this name, or nil.
    public func tensor(named name: String) -> GGUFTensorInfo? {
        tensorIndex[name].map { tensors[$0] }
    }

    /// A pointer to the tensor's first byte inside the mapping (valid while this object lives).
    ///
    /// - Precondition: `tensor` came from this file's `tensors` (its bytes lie within the file).
    public func data(of tensor: GGUFTensorInfo) -> UnsafeRawPointer {
        precondition(tensor.offset >= 0 && tensor.byteCount >= 0 && tensor.offset <= fileSize - tensor.byteCount,
                     "tensor \(tensor.name) does not lie within \(path)")
        return UnsafeRawPointer(mapping.base) + tensor.offset
    }

    /// The tensor's bytes as a buffer inside the mapping (valid while this object lives).
    public func bytes(of tensor: GGUFTensorInfo) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: data(of: tensor), count: tensor.byteCount)
    }

    /// The whole file as a read-only buffer (valid while this object lives).
    public var fileBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: UnsafeRawPointer(mapping.base), count: mapping.size)
    }

    /// Asks the kernel to read the tensor data ahead of use (`MADV_WILLNEED`). A hint only.
    public func prefetchTensorData() {
        mapping.advise(MADV_WILLNEED, from: dataOffset)
    }

    /// Asks the kernel to back the whole mapping with huge pages where it has them (Linux: `MADV_HUGEPAGE`; nothing
    /// elsewhere). Pages the page cache reads in after this come in folios of up to 2 MiB, each mapped by one TLB entry
    /// instead of 512: decode streams every weight once per token, and on 4 KiB pages a TLB miss every 4 KiB held the
    /// row kernels to ~0.8× of their rate on 2 MiB pages (bench/results/engine-notes.md). Pages already cached keep the
    /// size they were read or written with. A hint only; returns whether the kernel took it.
    @discardableResult
    public func adviseHugePages() -> Bool {
        ra_advise_huge_pages(mapping.base, mapping.size) != 0
    }

    /// Tells the kernel tensor data will be accessed at random (`MADV_RANDOM`), turning off
    /// read-ahead. A hint only.
    public func adviseRandomAccess() {
        mapping.advise(MADV_RANDOM, from: dataOffset)
    }

    /// Drops this process's mapping of the header pages (metadata and tensor directory, everything before
    /// the page holding the first tensor byte) with `MADV_DONTNEED`, so they no longer count in its
    /// resident size. Everything parsed from them was copied at open; `fileBytes` stays valid, and
    /// reading the header again maps the pages back in from the page cache. For a 128k-token vocabulary
    /// the header is 7–8 MB.
    public func releaseHeaderPages() {
        mapping.release(before: dataOffset)
    }

    /// Drops this process's mapping of the whole pages inside `tensor`'s bytes (`MADV_DONTNEED`; pages it shares
    /// with a neighbour are kept), after the engine copied the tensor elsewhere: they no longer count in the resident
    /// size. The page cache keeps them, and reading the tensor again maps them back in.
    public func releasePages(of tensor: GGUFTensorInfo) {
        releasePages(of: tensor, bytes: 0..<tensor.byteCount)
    }

    /// Drops this process's mapping of the whole pages inside bytes `range` of `tensor` (offsets from its start,
    /// clamped to it), as ``releasePages(of:)`` does for all of them: a large tensor copied piece by piece lets go of
    /// each piece once it is copied.
    public func releasePages(of tensor: GGUFTensorInfo, bytes range: Range<Int>) {
        guard tensor.offset >= 0, tensor.byteCount > 0, tensor.offset <= fileSize - tensor.byteCount else { return }
        let lower = max(0, range.lowerBound), upper = min(tensor.byteCount, range.upperBound)
        guard upper > lower else { return }
        mapping.release(from: tensor.offset + lower, to: tensor.offset + upper)
    }
}

/// A read-only private mapping of a whole file; unmapped when released.
private final class Mapping {
    let base: UnsafeMutableRawPointer
    let size: Int

    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw GGUFError(.io, "cannot open \(path): \(Self.errorText())")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw GGUFError(.io, "cannot inspect \(path): \(Self.errorText())")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw GGUFError(.io, "\(path) is not a regular file")
        }
        let size = Int(info.st_size)
        guard size >= 24 else {
            throw GGUFError(.invalidFormat, "\(path): file is \(size) bytes, too small for a GGUF header (24 bytes)")
        }
        guard let pointer = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0),
              pointer != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw GGUFError(.io, "cannot map \(path) (\(size) bytes): \(Self.errorText())")
        }
        base = pointer
        self.size = size
    }

    func advise(_ advice: Int32, from offset: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0 else { return }
        let start = offset / page * page
        guard start < size else { return }
        _ = madvise(base + start, size - start, advice)
    }

    /// `MADV_DONTNEED` over the whole pages before `offset` (a page shared with data after it is kept).
    func release(before offset: Int) {
        release(from: 0, to: offset)
    }

    /// `MADV_DONTNEED` over the whole pages inside [start, end) (pages shared with bytes outside are kept).
    func release(from start: Int, to end: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0 else { return }
        let first = (max(0, start) + page - 1) / page * page
        let last = min(end, size) / page * page
        guard last > first else { return }
        _ = madvise(base + first, last - first, MADV_DONTNEED)
    }

    deinit { munmap(base, size) }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
