import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file on this machine offered for import: its path with symbolic links resolved, checked to be a regular file.
struct LocalSourceFile: Sendable, Hashable {
    /// The resolved path (no symbolic link left in it).
    let path: String
    /// Size in bytes when it was opened.
    let size: Int64
    /// The file's identity: a hard link to it has the same pair.
    let device: UInt64
    let inode: UInt64

    /// The file at `url`, following symbolic links.
    /// - Throws: `.invalidConfiguration` when it does not exist, is a folder or a device, or is a symbolic link loop;
    ///   `.storageFailure` when it cannot be read.
    static func resolve(_ url: URL) throws -> LocalSourceFile {
        let given = url.path
        guard let resolvedC = realpath(given, nil) else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR:
                var st = stat()
                let dangling = lstat(given, &st) == 0
                throw RunAnywhereError(.invalidConfiguration, dangling
                    ? "\(given) is a symbolic link to a file that does not exist."
                    : "\(given) does not exist.")
            case ELOOP:
                throw RunAnywhereError(.invalidConfiguration, "\(given) is a symbolic link loop (it never reaches a file).")
            default:
                throw FileSystem.storageError("read \(given)", errorNumber: code)
            }
        }
        let path = String(cString: resolvedC)
        free(resolvedC)
        var st = stat()
        guard stat(path, &st) == 0 else { throw FileSystem.storageError("read \(path)") }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw RunAnywhereError(.invalidConfiguration, "\(given) is a folder, not a GGUF file.")
        default: throw RunAnywhereError(.invalidConfiguration, "\(given) is not a regular file (a device, pipe or socket).")
        }
        return LocalSourceFile(path: path, size: Int64(st.st_size), device: UInt64(truncatingIfNeeded: st.st_dev), inode: UInt64(truncatingIfNeeded: st.st_ino))
    }

    /// Whether the file at `path` (symbolic links followed) is this very file (same device and inode).
    func isSameFile(as path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && UInt64(truncatingIfNeeded: st.st_dev) == device && UInt64(truncatingIfNeeded: st.st_ino) == inode
    }

    /// Throws `.invalidModelFormat` unless the file starts with the GGUF magic.
    func checkGGUFMagic() throws {
        switch Self.ggufMagicProblem(path) {
        case nil: return
        case .some(let why): throw RunAnywhereError(.invalidModelFormat, "\(path) is not a GGUF model file: \(why).")
        }
    }

    /// Nil when the file at `path` starts with `GGUF` followed by a version word, else why not (a phrase).
    static func ggufMagicProblem(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "it cannot be read (\(String(cString: strerror(errno))))" }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 8)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, 8) }
        guard n == 8 else { return n < 0 ? "it cannot be read (\(String(cString: strerror(errno))))" : "it is only \(max(0, n)) bytes long" }
        guard head[0...3] == [0x47, 0x47, 0x55, 0x46] else {
            let shown = head.prefix(4).map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : "." }.joined()
            return "it starts with '\(shown)', not 'GGUF'"
        }
        return nil
    }
}
