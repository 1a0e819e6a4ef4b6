import CCrypto
import Foundation
import Glibc

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
        let hex = digest.prefix(Int(length)).map { byte in
            let s = String(byte, radix: 16)
            return byte < 16 ? "0" + s : s
        }.joined()
        finished = hex
        return hex
    }

    /// A hasher that has already seen the first `length` bytes of the file at `path` (to resume a download).
    /// Reads in 4 MiB chunks; checks `cancellation` between chunks.
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
        let chunk = 4 * 1024 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var remaining = length
        while remaining > 0 {
            if cancellation?.isCancelled == true { throw TransferError.cancelled }
            let n = read(fd, buffer.baseAddress, Int(min(Int64(chunk), remaining)))
            if n < 0 {
                if errno == EINTR { continue }
                throw RunAnywhereError(.storageFailure, "Cannot read \(path): \(String(cString: strerror(errno))).")
            }
            if n == 0 {
                throw RunAnywhereError(.storageFailure, "\(path) is shorter than the \(length) bytes it should hold.")
            }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            remaining -= Int64(n)
        }
        return hasher
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
