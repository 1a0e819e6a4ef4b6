import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// This process's resident set size, for what a load really took and for `runanywhere bench`.
public enum ResidentMemory {
    /// Resident bytes now, or nil where it cannot be read (read from `/proc/self/statm`: Linux only so far).
    public static func bytes() -> Int64? {
        #if canImport(Glibc)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }
}
