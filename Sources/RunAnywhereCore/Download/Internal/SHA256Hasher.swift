import CCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Incremental SHA-256 through OpenSSL's EVP interface (uses SHA extensions when the CPU has them).
///
/// Not thread-safe: one owner feeds it, typically the thread receiving the bytes.
package final class SHA256Hasher {
    private let context: OpaquePointer
    private var finished: String?

    /// A hasher that has seen no bytes.
    package init() throws {
        guard let context = EVP_MD_CTX_new() else {
            throw RunAnywhereError(.storageFailure, "OpenSSL could not allocate a SHA-256 context.")
        }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw RunAnywhereError(.storageFailure, "OpenSSL could not start a SHA-256 digest.")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, finished == nil else { return }
        _ = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// Adds bytes to the digest.
    package func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lower-case hex digits. After this, further updates are ignored.
    package func hexDigest() -> String {
        if let finished { return finished }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = EVP_DigestFinal_ex(context, &digest, &length)
        let hex = Self.hex(digest.prefix(Int(length)))
        finished = hex
        return hex
    }

    /// SHA-256 of bytes in memory, as 64 lower-case hex digits (OpenSSL's one-shot digest; cannot fail).
    package static func hexDigest(of bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { _ = SHA256($0.baseAddress, $0.count, &digest) }
        return hex(digest[...])
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { byte in
            let s = String(byte, radix: 16)
            return byte < 16 ? "0" + s : s
        }.joined()
    }

    /// A hasher that has already seen the first `length` bytes of the file at `path` (to resume a download).
    /// Reads 4 MiB at a time; checks `cancellation` between reads.
    /// - Throws: `.storageFailure` when the file cannot be read or is shorter than `length`; `TransferError.cancelled`.
    package static func hashing(prefix length: Int64, ofFileAt path: String,
                                cancellation: CancellationFlag? = nil) throws -> SHA256Hasher {
        let hasher = try SHA256Hasher()
        guard length > 0 else { return hasher }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw RunAnywhereError(.storageFailure, "Cannot read \(path) to check its bytes: \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 << 20, alignment: 64)
        defer { buffer.deallocate() }
        let complete = try hasher.update(readingFile: fd, path: path, from: 0, to: length, through: buffer) {
            cancellation?.isCancelled == true
        }
        if !complete { throw TransferError.cancelled }
        return hasher
    }

    /// Adds bytes [from, to) of the file open as `fd`, read through `buffer` one system call at a time (`path` is
    /// for messages). Stops early, returning false, once `shouldStop` says so (asked before each read).
    /// - Throws: `.storageFailure` when the file cannot be read or ends before `to`.
    package func update(readingFile fd: Int32, path: String, from: Int64, to: Int64,
                        through buffer: UnsafeMutableRawBufferPointer,
                        shouldStop: () -> Bool = { false }) throws(RunAnywhereError) -> Bool {
        var offset = from
        while offset < to {
            if shouldStop() { return false }
            let n = pread(fd, buffer.baseAddress, Int(min(Int64(buffer.count), to - offset)), off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw RunAnywhereError(.storageFailure, "Cannot read \(path) at byte \(offset) to check it: \(String(cString: strerror(errno))).")
            }
            if n == 0 {
                throw RunAnywhereError(.storageFailure, "\(path) ends at byte \(offset), short of the \(to) bytes it should hold.")
            }
            update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += Int64(n)
        }
        return true
    }

    /// The SHA-256 of a whole file, as hex.
    package static func hexDigest(ofFileAt path: String, cancellation: CancellationFlag? = nil) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw RunAnywhereError(.storageFailure, "Cannot read \(path): \(String(cString: strerror(errno))).")
        }
        return try hashing(prefix: Int64(info.st_size), ofFileAt: path, cancellation: cancellation).hexDigest()
    }
}
