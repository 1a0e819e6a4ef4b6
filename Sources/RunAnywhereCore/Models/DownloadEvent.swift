import Foundation

/// Progress of a download. Unknown numbers are `nil`, never 0.
public struct DownloadProgress: Sendable, Hashable, Codable {
    /// Bytes of the current file on disk so far (including bytes kept from an earlier attempt).
    public var bytesDone: Int64
    /// Size of the current file, when known.
    public var bytesTotal: Int64?
    /// Speed over a sliding window, bytes per second; nil until measured.
    public var bytesPerSecond: Double?
    /// The retry attempt in progress (0 = first try).
    public var retryAttempt: Int
    /// 0-based index of the file being downloaded.
    public var currentFileIndex: Int
    /// How many files the model has.
    public var totalFiles: Int
    /// Bytes done over all files.
    public var overallBytesDone: Int64
    /// Bytes over all files, when every size is known.
    public var overallBytesTotal: Int64?

    /// Creates a progress value.
    public init(bytesDone: Int64, bytesTotal: Int64?, bytesPerSecond: Double? = nil, retryAttempt: Int = 0,
                currentFileIndex: Int = 0, totalFiles: Int = 1, overallBytesDone: Int64? = nil, overallBytesTotal: Int64? = nil) {
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.bytesPerSecond = bytesPerSecond
        self.retryAttempt = retryAttempt
        self.currentFileIndex = currentFileIndex
        self.totalFiles = totalFiles
        self.overallBytesDone = overallBytesDone ?? bytesDone
        self.overallBytesTotal = totalFiles == 1 ? (overallBytesTotal ?? bytesTotal) : overallBytesTotal
    }

    /// Fraction of the current file, 0...1, when its size is known.
    public var fraction: Double? {
        guard let total = bytesTotal, total > 0 else { return bytesTotal == 0 ? 1 : nil }
        return min(1, Double(bytesDone) / Double(total))
    }

    /// ``fraction`` as a percentage, 0...100.
    public var percent: Double? { fraction.map { $0 * 100 } }

    /// Seconds left at the current speed, when both are known.
    public var etaSeconds: Double? {
        guard let bps = bytesPerSecond, bps > 0, let total = overallBytesTotal else { return nil }
        return Double(max(0, total - overallBytesDone)) / bps
    }

    /// Fraction over all files of the model, weighted by bytes, when every size is known.
    public var overallProgress: Double? {
        guard let total = overallBytesTotal, total > 0 else { return overallBytesTotal == 0 ? 1 : nil }
        return min(1, Double(overallBytesDone) / Double(total))
    }
}

/// What a download reports, in order: `started`, `progress`…, `verifying`, (`extracting`), `completed`.
/// A failure ends the stream by throwing a ``RunAnywhereError``.
public enum DownloadEvent: Sendable, Hashable {
    /// The transfer began. `resumedBytes` were already on disk from an earlier attempt.
    case started(totalBytes: Int64?, totalFiles: Int, resumedBytes: Int64)
    /// Bytes arrived.
    case progress(DownloadProgress)
    /// A file's bytes are being checked against its SHA-256 (sent only when one is known: the catalog's, the
    /// caller's or the server's; the size is always checked).
    case verifying(fileName: String)
    /// An archive is being unpacked.
    case extracting(fileName: String)
    /// Everything is on disk and verified; the model is registered as downloaded.
    case completed(ModelInfo)
}
