import Foundation

/// What ``ModelManager/importLocal(file:id:name:placements:onProgress:)`` did with a GGUF file already on disk.
public struct LocalImport: Sendable, Hashable, Codable {
    /// How the file was put into the model folder.
    public enum Placement: String, Sendable, Hashable, Codable, CaseIterable {
        /// A second name for the same bytes (same file system only): no byte is copied, and the model keeps working
        /// if the original name is deleted; the disk space comes back only when both names are gone.
        case hardLink
        /// A symbolic link to the original file: no byte is copied, the model stops working (shows as not
        /// downloaded) if the original is deleted, and the space comes back when the original goes.
        case symlink
        /// A copy of the bytes: independent of the original, costs the disk space twice.
        case copy
    }

    /// The registered model, downloaded (its files on disk and verified).
    public var model: ModelInfo
    /// How the bytes got into the model folder.
    public var placement: Placement
    /// The file whose bytes the model uses (symbolic links resolved).
    public var sourcePath: URL
    /// SHA-256 of the bytes, as recorded in the model's manifest.
    public var sha256: String
    /// True when this exact file was already imported under this id; nothing was changed.
    public var wasAlreadyImported: Bool

    /// Creates an import result.
    public init(model: ModelInfo, placement: Placement, sourcePath: URL, sha256: String, wasAlreadyImported: Bool) {
        self.model = model
        self.placement = placement
        self.sourcePath = sourcePath
        self.sha256 = sha256
        self.wasAlreadyImported = wasAlreadyImported
    }
}

/// Progress of an import: the bytes copied (``Phase/copying``) or read to compute their SHA-256
/// (``Phase/hashing``, when the file was linked rather than copied). Same figures as a download's.
public struct LocalImportProgress: Sendable, Hashable {
    /// What the bytes are going through.
    public enum Phase: String, Sendable, Hashable, Codable {
        /// Copied into the model folder (and hashed on the way).
        case copying
        /// Read to compute their SHA-256 (the file was linked).
        case hashing
    }

    /// What the bytes are going through.
    public var phase: Phase
    /// Bytes done, total, speed.
    public var progress: DownloadProgress

    /// Creates a progress value.
    public init(phase: Phase, progress: DownloadProgress) {
        self.phase = phase
        self.progress = progress
    }
}
