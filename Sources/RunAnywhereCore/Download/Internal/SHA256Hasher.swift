import CCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

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

/// Hashes a file from offset 0, in order, on a thread of its own, following the bytes writers report as
/// present (``advance(to:)``): the download threads only write, and the digest is ready soon after the
/// last byte. Reads back what was written (from the page cache), 4 MiB at a time.
package final class PrefixHasher: Sendable {
    private struct State {
        var hashed: Int64 = 0
        var digest: String?
        var failure: RunAnywhereError?
    }

    private let fd: Int32
    private let path: String
    private let state: Mutex<State>
    private let available = Atomic<Int64>(0)
    /// 0 running, 1 stop once caught up with `available`, 2 stop now.
    private let mode = Atomic<Int>(0)
    private let exited = DispatchSemaphore(value: 0)

    /// Starts hashing the file open as `fd` (`path` is for messages).
    package init(fd: Int32, path: String) throws {
        self.fd = fd
        self.path = path
        state = Mutex(State())
        let thread = Thread { [self] in
            loop()
            exited.signal()
        }
        thread.name = "RunAnywhere.download.hash"
        thread.start()
    }

    /// The first `bytes` of the file are written: hash up to there.
    package func advance(to bytes: Int64) {
        available.store(bytes, ordering: .releasing)
    }

    /// Hashes up to `total`, stops the thread and returns the digest (hex).
    /// - Throws: `.storageFailure` when the file could not be read back; `TransferError.cancelled`.
    package func finish(total: Int64, cancellation: CancellationFlag) throws -> String {
        advance(to: total)
        mode.store(1, ordering: .releasing)
        while exited.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if cancellation.isCancelled {
                stop()
                throw TransferError.cancelled
            }
        }
        exited.signal()   // later calls to finish or stop return at once
        return try state.withLock { s in
            if let failure = s.failure { throw failure }
            guard s.hashed == total, let digest = s.digest else {
                throw RunAnywhereError(.storageFailure, "\(path) holds \(s.hashed) bytes, not the \(total) it should.")
            }
            return digest
        }
    }

    /// Stops the thread without a digest (the download failed or starts over).
    package func stop() {
        mode.store(2, ordering: .releasing)
        exited.wait()
        exited.signal()
    }

    private func loop() {
        let batch: Int64 = 2 << 20, window: Int64 = 4 << 20
        let page = Int64(max(4096, sysconf(Int32(_SC_PAGESIZE))))
        var hashed: Int64 = 0
        let hasher: SHA256Hasher
        do { hasher = try SHA256Hasher() } catch {
            state.withLock { $0.failure = error as? RunAnywhereError ?? RunAnywhereError(.storageFailure, "\(error)") }
            return
        }
        while true {
            let mode = mode.load(ordering: .acquiring)
            if mode == 2 { return }
            let target = available.load(ordering: .acquiring)
            // Wait for a few MiB rather than chase each write; once finishing, take what is left.
            guard target - hashed >= batch || (mode == 1 && hashed < target) else {
                if mode == 1 {
                    let digest = hasher.hexDigest()
                    state.withLock { $0.digest = digest }
                    return
                }
                usleep(1000)
                continue
            }
            let end = min(target, hashed + window)
            do {
                try hashMapped(hasher, from: hashed, to: end, page: page)
            } catch {
                state.withLock { $0.failure = error }
                return
            }
            hashed = end
            state.withLock { $0.hashed = hashed }
        }
    }

    /// Hashes bytes [from, to) of the file straight from the page cache through a read-only mapping (no copy).
    private func hashMapped(_ hasher: SHA256Hasher, from: Int64, to: Int64, page: Int64) throws(RunAnywhereError) {
        let base = from - from % page
        let length = Int(to - base)
        guard let map = mmap(nil, length, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, off_t(base)), map != MAP_FAILED else {
            throw RunAnywhereError(.storageFailure, "Cannot map \(path) at \(from) to hash it: \(String(cString: strerror(errno))).")
        }
        defer { munmap(map, length) }
        hasher.update(UnsafeRawBufferPointer(start: map + Int(from - base), count: Int(to - from)))
    }
}
