import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Puts a local file into the storage root by hard link, symbolic link or copy, and computes its SHA-256.
/// Blocking: runs on a thread of its own (``BlockingWork``).
enum LocalFilePlacement {
    /// Places `source` at `destination` (which must not exist) by the first of `placements` that works here, and
    /// returns how, with the SHA-256 of the bytes placed.
    ///
    /// A hard link that the file system refuses (another file system, no hard links, too many links, not allowed)
    /// falls through to the next placement; a symbolic link or a copy that fails is an error. A copy checks the free
    /// space first and removes its partial file on any failure (disk full is `.insufficientStorage`).
    static func place(_ source: LocalSourceFile, at destination: String, placements: [LocalImport.Placement],
                      cancellation: CancellationFlag,
                      progress: @escaping @Sendable (LocalImportProgress) -> Void) throws -> (LocalImport.Placement, String) {
        var refused: [String] = []
        for placement in placements {
            switch placement {
            case .hardLink:
                if link(source.path, destination) == 0 {
                    return (.hardLink, try hash(destination, expectedSize: source.size, cancellation: cancellation, progress: progress))
                }
                let code = errno
                if code == ENOSPC || code == EDQUOT { throw FileSystem.storageError("link \(source.path) into \(destination)", errorNumber: code) }
                refused.append("hard link: \(String(cString: strerror(code)))")
            case .symlink:
                guard symlink(source.path, destination) == 0 else {
                    throw FileSystem.storageError("make a symbolic link to \(source.path) at \(destination)")
                }
                return (.symlink, try hash(source.path, expectedSize: source.size, cancellation: cancellation, progress: progress))
            case .copy:
                return (.copy, try copy(source, to: destination, cancellation: cancellation, progress: progress))
            }
        }
        throw RunAnywhereError(.storageFailure, "Could not place \(source.path) in the storage root (\(refused.joined(separator: "; "))). "
            + "Allow a copy, or put RUNANYWHERE_HOME on the same file system as the file.")
    }

    /// SHA-256 of the file at `path`, which must hold `expectedSize` bytes.
    static func hash(_ path: String, expectedSize: Int64, cancellation: CancellationFlag,
                     progress: @escaping @Sendable (LocalImportProgress) -> Void) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.storageError("read \(path)") }
        defer { close(fd) }
        return try stream(from: fd, path: path, size: expectedSize, into: nil, phase: .hashing, cancellation: cancellation, progress: progress)
    }

    /// Copies `source` to `destination` (created, mode 0644), hashing the bytes on the way; fsyncs the copy.
    static func copy(_ source: LocalSourceFile, to destination: String, cancellation: CancellationFlag,
                     progress: @escaping @Sendable (LocalImportProgress) -> Void) throws -> String {
        let folder = (destination as NSString).deletingLastPathComponent
        if let free = try? availableDiskBytes(at: folder), free < source.size {
            throw RunAnywhereError.insufficientStorage(needed: source.size, available: free, path: folder)
        }
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileSystem.storageError("read \(source.path)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw FileSystem.storageError("create \(destination)") }
        var done = false
        defer {
            close(output)
            if !done { unlink(destination) }
        }
        let digest = try stream(from: input, path: source.path, size: source.size, into: (output, destination), phase: .copying,
                                cancellation: cancellation, progress: progress)
        guard fsync(output) == 0 else { throw FileSystem.storageError("write \(destination)") }
        done = true
        return digest
    }

    /// Reads `size` bytes from `fd` in 4 MiB chunks into the SHA-256 (and into `output` when given), reporting progress
    /// about four times a second; fails when the file turns out shorter or longer than `size` (it changed meanwhile).
    private static func stream(from fd: Int32, path: String, size: Int64, into output: (fd: Int32, path: String)?,
                               phase: LocalImportProgress.Phase, cancellation: CancellationFlag,
                               progress: @escaping @Sendable (LocalImportProgress) -> Void) throws -> String {
        let hasher = try SHA256Hasher()
        let chunk = 4 * 1024 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        let started = monotonicSeconds()
        var lastReport = -Double.infinity
        var done: Int64 = 0
        func report(force: Bool) {
            let now = monotonicSeconds()
            guard force || now - lastReport >= 0.25 else { return }
            lastReport = now
            let elapsed = now - started
            let speed = elapsed >= 0.5 ? Double(done) / elapsed : nil
            progress(LocalImportProgress(phase: phase, progress: DownloadProgress(bytesDone: done, bytesTotal: size, bytesPerSecond: speed)))
        }
        report(force: true)
        while true {
            if cancellation.isCancelled { throw RunAnywhereError.cancelled("Importing \(path)") }
            let n = read(fd, buffer.baseAddress, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystem.storageError("read \(path)")
            }
            if n == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            hasher.update(bytes)
            if let output { try writeAll(bytes, to: output.fd, path: output.path) }
            done += Int64(n)
            guard done <= size else { break }
            report(force: false)
        }
        guard done == size else {
            throw RunAnywhereError(.storageFailure, "\(path) changed while it was being read (\(done) bytes instead of \(size)); try again once nothing writes to it.")
        }
        report(force: true)
        return hasher.hexDigest()
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystem.storageError("write \(path)")
            }
            offset += n
        }
    }
}
