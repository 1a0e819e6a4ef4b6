import Foundation

/// Facts about memory from the system: what is available, the cgroup limit, this process's RSS.
enum SystemMemory {
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
