import Foundation
#if canImport(Darwin)
import Darwin
#endif

/// Facts about memory from the system: what is available, the cgroup limit, this process's RSS.
///
/// Linux reads /proc and the cgroup files. The Darwin branches (iOS: `os_proc_available_memory`, macOS: the VM
/// statistics' free + inactive + purgeable pages; RSS from `task_info`) are written for Apple platforms but never
/// compiled here (no macOS machine): see the README's platform notes.
enum SystemMemory {
    #if canImport(Darwin)
    /// Memory a new allocation can get without the system reclaiming from others, bytes.
    static func availableBytes() -> Int64? {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        let n = os_proc_available_memory()
        return n > 0 ? Int64(n) : nil
        #else
        var stats = vm_statistics64()
        var count = mach_msg_type_number_t(MemoryLayout<vm_statistics64>.size / MemoryLayout<integer_t>.size)
        let result = withUnsafeMutablePointer(to: &stats) { p in
            p.withMemoryRebound(to: integer_t.self, capacity: Int(count)) { host_statistics64(mach_host_self(), HOST_VM_INFO64, $0, &count) }
        }
        guard result == KERN_SUCCESS else { return nil }
        return (Int64(stats.free_count) + Int64(stats.inactive_count) + Int64(stats.purgeable_count)) * Int64(vm_kernel_page_size)
        #endif
    }

    /// Apple platforms have no cgroups.
    static func cgroupRemainingBytes() -> Int64? { nil }

    /// This process's resident set size, bytes.
    static func residentBytes() -> Int64? {
        var info = mach_task_basic_info()
        var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
        let result = withUnsafeMutablePointer(to: &info) { p in
            p.withMemoryRebound(to: integer_t.self, capacity: Int(count)) { task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count) }
        }
        return result == KERN_SUCCESS ? Int64(info.resident_size) : nil
    }
    #else
    /// `MemAvailable` from /proc/meminfo, bytes.
    static func availableBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            let parts = line.split(separator: " ")
            if parts.count >= 2, let kb = Int64(parts[1]) { return kb * 1024 }
        }
        return nil
    }

    /// Room left under a cgroup v2 (or v1) memory limit, bytes; nil when there is no limit.
    static func cgroupRemainingBytes() -> Int64? {
        func read(_ path: String) -> Int64? {
            guard let s = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            return Int64(s.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if let limit = read("/sys/fs/cgroup/memory.max"), let used = read("/sys/fs/cgroup/memory.current") {
            return max(0, limit - used)
        }
        if let limit = read("/sys/fs/cgroup/memory/memory.limit_in_bytes"), limit < (1 << 60),
           let used = read("/sys/fs/cgroup/memory/memory.usage_in_bytes") {
            return max(0, limit - used)
        }
        return nil
    }

    /// This process's resident set size, bytes.
    static func residentBytes() -> Int64? {
        guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let parts = s.split(separator: " ")
        guard parts.count >= 2, let pages = Int64(parts[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
    #endif

    /// What a new model may use: the least of MemAvailable and the cgroup's room.
    static func loadableBytes() -> Int64? {
        switch (availableBytes(), cgroupRemainingBytes()) {
        case let (a?, c?): return min(a, c)
        case let (a?, nil): return a
        case let (nil, c?): return c
        default: return nil
        }
    }
}
