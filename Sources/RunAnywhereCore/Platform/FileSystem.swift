import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File helpers shared by the registry and the downloader.
enum FileSystem {
    /// Writes `data` to `url` atomically: a temp file in the same folder, fsync, rename, fsync of the folder.
    /// Without `durable` the two fsyncs are skipped (readers still see the old file or the new, never a mix).
    static func writeAtomically(_ data: Data, to url: URL, mode: mode_t = 0o644, durable: Bool = true) throws {
        let dir = url.deletingLastPathComponent()
        try createDirectory(dir)
        try writeAtomically(data, to: FilePath(url), mode: mode, durable: durable)
    }

    /// A file's path, its folder's and its name, worked out once for a file rewritten many times (a download's
    /// journal is, every few MiB) so that each write does no URL work.
    struct FilePath: Sendable, Hashable {
        let path: String
        let folder: String
        let name: String

        init(_ url: URL) {
            path = url.path
            folder = url.deletingLastPathComponent().path
            name = url.lastPathComponent
        }
    }

    /// ``writeAtomically(_:to:mode:durable:)`` into a folder that exists.
    static func writeAtomically(_ data: Data, to file: FilePath, mode: mode_t = 0o644, durable: Bool = true) throws {
        let tmp = file.folder + "/.\(file.name).\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw storageError("create \(tmp)") }
        var ok = false
        defer {
            if !ok { unlink(tmp) }
        }
        do {
            try data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count, let base = raw.baseAddress {
                    let n = write(fd, base + offset, raw.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw storageError("write \(file.path)")
                    }
                    offset += n
                }
            }
            guard !durable || fsync(fd) == 0 else { throw storageError("fsync \(file.path)") }
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        guard rename(tmp, file.path) == 0 else { throw storageError("rename into \(file.path)") }
        ok = true
        if durable { syncDirectory(URL(fileURLWithPath: file.folder, isDirectory: true)) }
    }

    /// fsync of a directory, so a rename inside it survives a crash.
    static func syncDirectory(_ dir: URL) {
        let fd = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    /// Removes a file, or a folder and everything below it, without following symbolic links.
    ///
    /// Another process may still be writing there (a pull that a `models rm` overtakes). The tree is first renamed
    /// to `.<name>.removing-<UUID>` beside it, so writers that go by path find it gone instead of refilling it; then
    /// it is emptied depth first, entries that vanish meanwhile are fine, and a folder that still gained entries is
    /// emptied again, for up to `passes` passes. (FileManager's `removeItem` reports that race as "permission
    /// denied".) A real failure (permission, a read-only volume) throws an `NSPOSIXErrorDomain` error with the
    /// system's own number.
    static func removeTree(_ url: URL, passes: Int = 50) throws {
        var target = url.path
        let trash = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).removing-\(UUID().uuidString)")
        if rename(url.path, trash.path) == 0 {
            target = trash.path
        } else if errno == ENOENT {
            return
        }
        // Any other rename failure (a name too long for the suffix, a mount point): removed where it is.
        for pass in 1...max(1, passes) {
            let result = removeOnce(target)
            if result == 0 || result == ENOENT { return }
            guard result == ENOTEMPTY || result == EEXIST, pass < passes else {
                throw NSError(domain: NSPOSIXErrorDomain, code: Int(result), userInfo: [NSFilePathErrorKey: url.path])
            }
            usleep(useconds_t(1000 * min(pass, 20)))
        }
    }

    /// Whether `name` is what `removeTree` renames `original` to while removing it (left behind by a killed process).
    static func isRemovalLeftover(_ name: String, of original: String) -> Bool {
        let prefix = ".\(original).removing-"
        return name.hasPrefix(prefix) && UUID(uuidString: String(name.dropFirst(prefix.count))) != nil
    }

    /// One depth-first pass; 0, or the first errno that stopped it (ENOENT of anything counts as removed).
    private static func removeOnce(_ path: String) -> Int32 {
        var st = stat()
        guard lstat(path, &st) == 0 else { return errno == ENOENT ? 0 : errno }
        if (st.st_mode & S_IFMT) != S_IFDIR {
            return unlink(path) == 0 || errno == ENOENT ? 0 : errno
        }
        guard let dir = opendir(path) else { return errno == ENOENT ? 0 : errno }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names {
            let result = removeOnce(path + "/" + name)
            if result != 0 { return result }
        }
        return rmdir(path) == 0 || errno == ENOENT ? 0 : errno
    }

    static func createDirectory(_ url: URL) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw RunAnywhereError(.storageFailure, "Cannot create folder \(url.path): \(ErrorWords.folderProblem(url) ?? ErrorWords.describe(error)).")
        }
    }

    /// The error for a failed system call, from `errno`; ENOSPC and EDQUOT become `.insufficientStorage`.
    static func storageError(_ what: String, errorNumber: Int32 = errno) -> RunAnywhereError {
        let reason = String(cString: strerror(errorNumber))
        if errorNumber == ENOSPC || errorNumber == EDQUOT {
            return RunAnywhereError(.insufficientStorage, "Disk full while trying to \(what): \(reason). Free some space and try again.")
        }
        return RunAnywhereError(.storageFailure, "Could not \(what): \(reason).")
    }

    /// Size of a regular file, or nil when it is absent or not a regular file.
    static func fileSize(_ url: URL) -> Int64? {
        var st = stat()
        guard stat(url.path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }

    /// Free bytes for an unprivileged user on the volume holding `url` (or its nearest existing parent); nil when
    /// the system cannot say.
    static func freeBytes(at url: URL) -> Int64? {
        try? availableDiskBytes(at: url.path)
    }

    /// Total size of the regular files below a folder (registry manifests not counted).
    static func directorySize(_ url: URL) -> Int64 {
        guard let e = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey]) else { return 0 }
        var total: Int64 = 0
        for case let f as URL in e {
            if f.lastPathComponent != "manifest.json", let v = try? f.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey]), v.isRegularFile == true {
                total += Int64(v.fileSize ?? 0)
            }
        }
        return total
    }
}

/// Free bytes available to this user on the volume holding a path (`statvfs` `f_bavail`).
package func availableDiskBytes(at path: String) throws -> Int64 {
    var info = statvfs()
    var probe = path
    // The path may not exist yet: ask about its nearest existing ancestor.
    while statvfs(probe, &info) != 0 {
        let parent = (probe as NSString).deletingLastPathComponent
        guard errno == ENOENT, !parent.isEmpty, parent != probe else {
            throw RunAnywhereError(.storageFailure, "Cannot read the free space of \(path): \(String(cString: strerror(errno))).")
        }
        probe = parent
    }
    return Int64(info.f_bavail) * Int64(info.f_frsize)
}
