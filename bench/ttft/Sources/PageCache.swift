#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file's pages in the page cache (for a cold start from disk).
enum PageCache {
    /// Asks the kernel to drop the file's clean pages from the page cache (Linux; elsewhere nothing happens).
    static func drop(_ path: String) {
        #if os(Linux)
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        close(fd)
        #endif
    }

    /// Bytes of the file in the page cache (mincore over a mapping of it), or nil when it cannot be told.
    static func residentBytes(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0 else { return nil }
        let size = Int(st.st_size)
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { return nil }
        defer { munmap(map, size) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vec = [UInt8](repeating: 0, count: (size + page - 1) / page)
        #if os(Linux)
        guard mincore(map, size, &vec) == 0 else { return nil }
        #else
        guard vec.withUnsafeMutableBufferPointer({ mincore(map, size, UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) }) == 0 else { return nil }
        #endif
        return vec.reduce(0) { $0 + Int($1 & 1) } * page
    }
}
