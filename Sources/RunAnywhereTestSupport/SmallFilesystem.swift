import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A size-limited tmpfs mounted on a temporary folder, for tests that must really run out of disk.
/// Mounting needs root (CAP_SYS_ADMIN); ``isAvailable`` says whether it works here.
public final class SmallFilesystem: @unchecked Sendable {
    /// The folder the tmpfs is mounted on.
    public let directory: TemporaryDirectory
    private var mounted = false

    /// Whether this process can mount a tmpfs (checked once with a tiny trial mount).
    public static let isAvailable: Bool = {
        guard geteuid() == 0, let dir = try? TemporaryDirectory(prefix: "runanywhere-mountprobe") else { return false }
        defer { dir.remove() }
        guard mount("tmpfs", dir.path, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount2(dir.path, 0)
        return true
    }()

    /// Mounts a tmpfs of `bytes` on a new temporary folder.
    public init(bytes: Int) throws {
        directory = try TemporaryDirectory(prefix: "runanywhere-smallfs")
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(bytes)") == 0 else {
            let reason = String(cString: strerror(errno))
            directory.remove()
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "mount tmpfs: \(reason)"])
        }
        mounted = true
    }

    /// The mount point's path.
    public var path: String { directory.path }

    /// The mount point's URL.
    public var url: URL { directory.url }

    /// Changes the size limit in place (files stay).
    public func resize(bytes: Int) throws {
        guard mount("tmpfs", directory.path, "tmpfs", UInt(MS_REMOUNT), "size=\(bytes)") == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "remount tmpfs: \(String(cString: strerror(errno)))"])
        }
    }

    /// Unmounts and removes the folder.
    public func remove() {
        if mounted { umount2(directory.path, Int32(MNT_DETACH)) }
        mounted = false
        directory.remove()
    }

    deinit { remove() }
}
