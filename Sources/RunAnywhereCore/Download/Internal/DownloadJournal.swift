import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The small JSON file beside a `.partial` that says what the partial bytes are, so a later run can
/// resume them. Holds no secrets: no tokens, no headers, only the URL the caller asked for.
package struct DownloadJournal: Codable, Sendable, Hashable {
    /// Format version of this file.
    package var version = 1
    /// The URL requested (before redirects).
    package var url: String
    /// The ETag of the response the partial bytes came from.
    package var etag: String?
    /// The Last-Modified of that response.
    package var lastModified: String?
    /// The full size of the file, when known.
    package var totalBytes: Int64?
    /// The bytes of the partial known to be written (flushed) from that response.
    package var bytesWritten: Int64
    /// The SHA-256 the finished file must have, when known.
    package var expectedSHA256: String?
    /// For a download in parallel ranges: every range of the file and how much of it is durable.
    /// ``bytesWritten`` is then the durable prefix (the bytes from 0 with no gap).
    package var segments: [DownloadSegment]?

    /// Bytes of the partial known to be durable, over all segments.
    package var bytesOnDisk: Int64 {
        segments.map { $0.reduce(0) { $0 + $1.written } } ?? bytesWritten
    }

    /// The validator to send as `If-Range`: a strong ETag, else Last-Modified.
    package var resumeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    package static func load(from url: URL) -> DownloadJournal? {
        guard let data = try? Data(contentsOf: url), data.count < 64 * 1024 else { return nil }
        return try? JSONDecoder().decode(DownloadJournal.self, from: data)
    }

    package func save(to url: URL) throws {
        try save(to: FileSystem.FilePath(url))
    }

    /// Saves to a path worked out once (a download saves its journal every few MiB).
    func save(to file: FileSystem.FilePath) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // The folder is made before the download starts; gone now means the model was deleted meanwhile.
        guard FileManager.default.fileExists(atPath: file.folder) else {
            throw TransferError.permanent(DownloadAttempt.lostFiles(String(file.name[..<(file.name.lastIndex(of: ".") ?? file.name.endIndex)])))
        }
        do {
            // Mode 0600, as the manifest: the URL may carry a secret in its query string. Not flushed: a journal lost
            // in a crash leaves the older one, which claims fewer bytes (safe), and checkpoints come every few MiB.
            try FileSystem.writeAtomically(try encoder.encode(self), to: file, mode: 0o600, durable: false)
        } catch let error as RunAnywhereError {
            throw RunAnywhereError(error.code, "Cannot write the download journal \(file.path): \(error.message)")
        } catch {
            throw RunAnywhereError(.storageFailure, "Cannot write the download journal \(file.path): \(ErrorWords.describe(error))")
        }
    }
}

/// One byte range of a file downloaded in parallel ranges, as the journal records it.
package struct DownloadSegment: Codable, Sendable, Hashable {
    /// The first byte of the range.
    package var start: Int64
    /// One past the last byte of the range.
    package var end: Int64
    /// Bytes from `start` on that are durable (flushed) in the partial.
    package var written: Int64

    package init(start: Int64, end: Int64, written: Int64 = 0) {
        self.start = start
        self.end = end
        self.written = written
    }

    /// Bytes still missing.
    package var remaining: Int64 { end - start - written }
}
