import Foundation

/// One file of a model: where it comes from and what it must be.
public struct ModelFileDescriptor: Sendable, Hashable, Codable {
    /// The role a file plays in a multi-file model.
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// The main weights.
        case model
        /// A vision projector (mmproj) of a VLM.
        case projector
        /// The encoder of an encoder/decoder model.
        case encoder
        /// The decoder of an encoder/decoder model.
        case decoder
        /// Tokenizer or vocabulary data.
        case tokenizer
        /// Configuration.
        case config
        /// Anything else the model needs.
        case auxiliary
    }

    /// Where to download the file from (http or https).
    public var url: URL
    /// The file name inside the model folder (a plain name or a relative path without `..`).
    public var fileName: String
    /// Expected size in bytes, when known.
    public var sizeBytes: Int64?
    /// Expected SHA-256 (lower-case hex), when known.
    public var sha256: String?
    /// What the file is for.
    public var role: Role

    /// Describes one file of a model.
    /// - Parameters:
    ///   - url: Where to download it.
    ///   - fileName: The name to store it under; defaults to the URL's last path component.
    ///   - sizeBytes: Expected size, when known.
    ///   - sha256: Expected SHA-256 in hex, when known.
    ///   - role: What the file is for.
    public init(url: URL, fileName: String? = nil, sizeBytes: Int64? = nil, sha256: String? = nil, role: Role = .model) {
        self.url = url
        self.fileName = fileName ?? url.lastPathComponent
        self.sizeBytes = sizeBytes
        self.sha256 = sha256?.lowercased()
        self.role = role
    }

    private enum CodingKeys: String, CodingKey { case url, fileName, sizeBytes, sha256, role }

    /// Decodes a descriptor; `fileName` defaults to the URL's last component and `role` to `.model`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let url = try c.decode(URL.self, forKey: .url)
        self.init(url: url,
                  fileName: try c.decodeIfPresent(String.self, forKey: .fileName),
                  sizeBytes: try c.decodeIfPresent(Int64.self, forKey: .sizeBytes),
                  sha256: try c.decodeIfPresent(String.self, forKey: .sha256),
                  role: try c.decodeIfPresent(Role.self, forKey: .role) ?? .model)
    }
}

/// Archive container formats the downloader can unpack.
public enum ArchiveFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case tarGz, tarBz2, tarXz, tarZst, tar, zip

    /// Guesses the format from a URL or file name; nil when the name says nothing.
    public init?(fileName: String) {
        let name = fileName.lowercased()
        if name.hasSuffix(".tar.gz") || name.hasSuffix(".tgz") { self = .tarGz }
        else if name.hasSuffix(".tar.bz2") || name.hasSuffix(".tbz2") { self = .tarBz2 }
        else if name.hasSuffix(".tar.xz") || name.hasSuffix(".txz") { self = .tarXz }
        else if name.hasSuffix(".tar.zst") { self = .tarZst }
        else if name.hasSuffix(".tar") { self = .tar }
        else if name.hasSuffix(".zip") { self = .zip }
        else { return nil }
    }
}

/// What is inside an archive, declared by whoever registers it.
///
/// After extraction the SDK checks that every file of ``expectedFiles`` exists in the model folder,
/// so a wrong archive fails at download time, not at load time.
public struct ArchiveStructure: Sendable, Hashable, Codable {
    /// The container format; `nil` means detect from the URL.
    public var format: ArchiveFormat?
    /// A top-level folder inside the archive whose contents become the model folder
    /// (as `tar --strip-components=1` for that folder); `nil` keeps the archive's layout.
    public var rootDirectory: String?
    /// Files (relative to the model folder after extraction) that must exist.
    public var expectedFiles: [String]
    /// The file inside the model folder that a backend loads first, when there is one.
    public var primaryFile: String?

    /// Declares an archive's layout.
    public init(format: ArchiveFormat? = nil, rootDirectory: String? = nil, expectedFiles: [String] = [], primaryFile: String? = nil) {
        self.format = format
        self.rootDirectory = rootDirectory
        self.expectedFiles = expectedFiles
        self.primaryFile = primaryFile
    }
}

/// How a model reaches the disk.
public enum ModelArtifact: Sendable, Hashable, Codable {
    /// One file, stored as is.
    case singleFile(ModelFileDescriptor)
    /// An archive, unpacked into the model folder according to its structure.
    case archive(ModelFileDescriptor, structure: ArchiveStructure)
    /// Several files, all of which must be present (a VLM with its projector, an encoder/decoder pair).
    case multiFile([ModelFileDescriptor])

    /// Every file to download.
    public var files: [ModelFileDescriptor] {
        switch self {
        case .singleFile(let f): return [f]
        case .archive(let f, _): return [f]
        case .multiFile(let fs): return fs
        }
    }

    /// Whether two artifacts name the same files from the same places. Sizes and checksums count only
    /// where both sides know them, so an artifact whose sizes were learnt by downloading still matches
    /// the registration that did not know them.
    public func isSameSource(as other: ModelArtifact) -> Bool {
        func same(_ a: ModelFileDescriptor, _ b: ModelFileDescriptor) -> Bool {
            a.url == b.url && a.fileName == b.fileName && a.role == b.role
                && (a.sizeBytes == nil || b.sizeBytes == nil || a.sizeBytes == b.sizeBytes)
                && (a.sha256 == nil || b.sha256 == nil || a.sha256 == b.sha256)
        }
        switch (self, other) {
        case (.singleFile(let a), .singleFile(let b)): return same(a, b)
        case (.archive(let a, let sa), .archive(let b, let sb)): return sa == sb && same(a, b)
        case (.multiFile(let a), .multiFile(let b)): return a.count == b.count && zip(a, b).allSatisfy(same)
        default: return false
        }
    }

    /// This artifact with the sizes and checksums it lacks taken from `other` (file by file, same order).
    func filling(from other: ModelArtifact) -> ModelArtifact {
        func fill(_ a: ModelFileDescriptor, _ b: ModelFileDescriptor) -> ModelFileDescriptor {
            var a = a
            if a.sizeBytes == nil { a.sizeBytes = b.sizeBytes }
            if a.sha256 == nil { a.sha256 = b.sha256 }
            return a
        }
        switch (self, other) {
        case (.singleFile(let a), .singleFile(let b)): return .singleFile(fill(a, b))
        case (.archive(let a, let s), .archive(let b, _)): return .archive(fill(a, b), structure: s)
        case (.multiFile(let a), .multiFile(let b)) where a.count == b.count: return .multiFile(zip(a, b).map(fill))
        default: return self
        }
    }

    /// The sum of the known file sizes, or nil when any is unknown.
    public var totalSizeBytes: Int64? {
        var total: Int64 = 0
        for f in files {
            guard let s = f.sizeBytes else { return nil }
            total += s
        }
        return total
    }
}
