import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's resident set size, for what a load really took and for `runanywhere bench`.
public enum ResidentMemory {
    /// Resident bytes now, or nil where it cannot be read (Linux `/proc/self/statm`; Darwin `task_info`).
    public static func bytes() -> Int64? {
        #if canImport(Darwin)
        var info = mach_task_basic_info()
        var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
        let status = withUnsafeMutablePointer(to: &info) {
            $0.withMemoryRebound(to: integer_t.self, capacity: Int(count)) { task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count) }
        }
        return status == KERN_SUCCESS ? Int64(info.resident_size) : nil
        #else
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
        #endif
    }
}
