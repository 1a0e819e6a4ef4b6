import CArchive
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What an extraction produced.
package struct ExtractionSummary: Sendable, Hashable {
    /// Entries written (files, directories, links).
    package var entryCount: Int
    /// Bytes of file data written.
    package var byteCount: Int64
}

/// Unpacks tar.gz, tar.bz2, tar.xz, tar.zst and zip archives with libarchive, refusing anything
/// that would land outside the target folder.
///
/// Every entry path is checked before libarchive sees it: no absolute paths, no `..` component,
/// nothing below a symlink the archive itself created; symlink targets must stay inside the
/// folder (and be relative); hardlink targets are checked like paths; devices, FIFOs and sockets
/// are refused. The total of file bytes written is capped (decompression bombs). Extraction goes
/// into a temporary sibling folder that is renamed into place at the end, so a failure leaves
/// nothing half-extracted.
package enum ArchiveExtractor {
    /// Extracts `archive` into the folder `destination`.
    /// - Parameters:
    ///   - maxTotalBytes: the most file bytes the archive may expand to.
    ///   - replaceExisting: when `destination` exists, replace it (after success); otherwise that is an error.
    /// - Throws: `.extractionFailed` naming the entry for a hostile or unreadable archive, `.storageFailure`
    ///   when the folder cannot be written, `.cancelled`.
    @discardableResult
    package static func extract(
        archive: URL, into destination: URL, maxTotalBytes: Int64,
        replaceExisting: Bool = false, cancellation: CancellationFlag? = nil
    ) throws -> ExtractionSummary {
        let fm = FileManager.default
        let parent = destination.deletingLastPathComponent()
        if fm.fileExists(atPath: destination.path), !replaceExisting {
            throw RunAnywhereError(.storageFailure, "Cannot extract \(archive.lastPathComponent): \(destination.path) already exists.")
        }
        do {
            try fm.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw RunAnywhereError(.storageFailure, "Cannot create \(parent.path): \(error.localizedDescription)")
        }
        guard let realParent = realPath(parent.path) else {
            throw RunAnywhereError(.storageFailure, "Cannot resolve \(parent.path): \(String(cString: strerror(errno))).")
        }
        let staging = realParent + "/.\(destination.lastPathComponent).extracting-\(UUID().uuidString)"
        guard mkdir(staging, 0o755) == 0 else {
            throw RunAnywhereError(.storageFailure, "Cannot create \(staging): \(String(cString: strerror(errno))).")
        }
        do {
            let summary = try extractEntries(of: archive.path, into: staging, maxTotalBytes: maxTotalBytes, cancellation: cancellation)
            try refuseLinksLeaving(staging, archive: archive.lastPathComponent)
            try moveIntoPlace(staging, destination.path, replaceExisting: replaceExisting)
            return summary
        } catch {
            try? fm.removeItem(atPath: staging)
            throw error
        }
    }

    private static func moveIntoPlace(_ staging: String, _ destination: String, replaceExisting: Bool) throws {
        var old: String?
        if FileManager.default.fileExists(atPath: destination) {
            guard replaceExisting else {
                throw RunAnywhereError(.storageFailure, "Cannot extract into \(destination): it already exists.")
            }
            let aside = destination + ".replaced-\(UUID().uuidString)"
            guard rename(destination, aside) == 0 else {
                throw RunAnywhereError(.storageFailure, "Cannot replace \(destination): \(String(cString: strerror(errno))).")
            }
            old = aside
        }
        guard rename(staging, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            if let old { _ = rename(old, destination) }
            throw RunAnywhereError(.storageFailure, "Cannot move the extracted files into \(destination): \(reason).")
        }
        if let old { try? FileManager.default.removeItem(atPath: old) }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: - Entries

    private static func extractEntries(
        of archivePath: String, into root: String, maxTotalBytes: Int64, cancellation: CancellationFlag?
    ) throws -> ExtractionSummary {
        let name = (archivePath as NSString).lastPathComponent
        guard let reader = archive_read_new() else {
            throw RunAnywhereError(.extractionFailed, "libarchive could not allocate a reader for \(name).")
        }
        defer { archive_read_free(reader) }
        archive_read_support_filter_all(reader)
        archive_read_support_format_all(reader)
        guard archive_read_open_filename(reader, archivePath, 64 * 1024) == ARCHIVE_OK else {
            throw RunAnywhereError(.extractionFailed, "Cannot open \(name) as an archive: \(errorText(reader)).")
        }
        guard let writer = archive_write_disk_new() else {
            throw RunAnywhereError(.extractionFailed, "libarchive could not allocate a writer for \(name).")
        }
        defer { archive_write_free(writer) }
        archive_write_disk_set_options(writer, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS)

        var symlinks = Set<String>()
        var summary = ExtractionSummary(entryCount: 0, byteCount: 0)
        while true {
            if cancellation?.isCancelled == true { throw RunAnywhereError.cancelled("Extracting \(name)") }
            var entry: OpaquePointer?
            let status = archive_read_next_header(reader, &entry)
            if status == ARCHIVE_EOF { break }
            guard status >= ARCHIVE_WARN, let entry else {
                throw RunAnywhereError(.extractionFailed, "\(name) is damaged or not a supported archive: \(errorText(reader)).")
            }
            let raw = entryPath(entry)
            let path = try checkedPath(raw, archive: name, what: "entry")
            if path.isEmpty { continue }   // "./" itself
            try refuseThroughSymlink(path, symlinks: symlinks, raw: raw, archive: name)

            let type = UInt32(archive_entry_filetype(entry)) & 0o170000
            if let hardlinkRaw = archive_entry_hardlink(entry).map({ String(cString: $0) }) {
                let target = try checkedPath(hardlinkRaw, archive: name, what: "hard link target of '\(raw)'")
                guard !target.isEmpty else {
                    throw RunAnywhereError(.extractionFailed, "\(name): hard link '\(raw)' points at the folder itself.")
                }
                try refuseThroughSymlink(target, symlinks: symlinks, raw: hardlinkRaw, archive: name)
                archive_entry_set_hardlink(entry, root + "/" + target)
            } else if type == 0o120000 {
                let target = archive_entry_symlink(entry).map { String(cString: $0) } ?? ""
                try checkSymlink(path, target: target, raw: raw, archive: name)
                symlinks.insert(path)
            } else if type != 0o100000 && type != 0o040000 {
                throw RunAnywhereError(.extractionFailed, "\(name) holds '\(raw)', a device, FIFO or socket; refusing to extract it.")
            }
            archive_entry_set_pathname(entry, root + "/" + path)
            archive_entry_set_perm(entry, archive_entry_perm(entry) & 0o777)

            guard archive_write_header(writer, entry) >= ARCHIVE_WARN else {
                throw RunAnywhereError(.extractionFailed, "Cannot extract '\(raw)' from \(name): \(errorText(writer)).")
            }
            summary.byteCount += try copyData(reader, writer, entry: raw, archive: name,
                                              budget: maxTotalBytes - summary.byteCount, limit: maxTotalBytes)
            guard archive_write_finish_entry(writer) >= ARCHIVE_WARN else {
                throw RunAnywhereError(.extractionFailed, "Cannot finish '\(raw)' from \(name): \(errorText(writer)).")
            }
            summary.entryCount += 1
        }
        return summary
    }

    private static func copyData(_ reader: OpaquePointer, _ writer: OpaquePointer, entry: String, archive: String,
                                 budget: Int64, limit: Int64) throws -> Int64 {
        var written: Int64 = 0
        while true {
            var buffer: UnsafeRawPointer?
            var size = 0
            var offset: la_int64_t = 0
            let status = archive_read_data_block(reader, &buffer, &size, &offset)
            if status == ARCHIVE_EOF { return written }
            guard status >= ARCHIVE_WARN else {
                throw RunAnywhereError(.extractionFailed, "\(archive) is damaged at '\(entry)': \(errorText(reader)).")
            }
            written += Int64(size)
            if written > budget {
                throw RunAnywhereError(.extractionFailed,
                    "\(archive) expands to more than \(ByteFormatter.string(limit)) (at '\(entry)'); refusing it as a possible decompression bomb.")
            }
            guard archive_write_data_block(writer, buffer, size, offset) >= ARCHIVE_WARN else {
                throw RunAnywhereError(.extractionFailed, "Cannot write '\(entry)' from \(archive): \(errorText(writer)).")
            }
        }
    }

    // MARK: - Path rules

    private static func entryPath(_ entry: OpaquePointer) -> String {
        if let p = archive_entry_pathname(entry) { return String(cString: p) }
        if let p = archive_entry_pathname_utf8(entry) { return String(cString: p) }
        return ""
    }

    /// The entry path as clean relative components joined by `/`, or throws if it is absolute or uses `..`.
    static func checkedPath(_ raw: String, archive: String, what: String) throws -> String {
        if raw.isEmpty {
            throw RunAnywhereError(.extractionFailed, "\(archive) holds an \(what) without a name; refusing to extract it.")
        }
        if raw.hasPrefix("/") {
            throw RunAnywhereError(.extractionFailed, "\(archive) holds an \(what) with an absolute path, '\(raw)'; refusing to extract it.")
        }
        var parts: [Substring] = []
        for part in raw.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == ".." {
                throw RunAnywhereError(.extractionFailed, "\(archive) holds an \(what) that climbs out of its folder, '\(raw)'; refusing to extract it.")
            }
            parts.append(part)
        }
        return parts.joined(separator: "/")
    }

    private static func refuseThroughSymlink(_ path: String, symlinks: Set<String>, raw: String, archive: String) throws {
        var prefix = ""
        let parts = path.split(separator: "/")
        for part in parts.dropLast() {
            prefix = prefix.isEmpty ? String(part) : prefix + "/" + part
            if symlinks.contains(prefix) {
                throw RunAnywhereError(.extractionFailed, "\(archive) holds '\(raw)', which goes through the symbolic link '\(prefix)'; refusing to extract it.")
            }
        }
    }

    /// Refuses any symbolic link below `folder` that resolves outside it or to nothing. Links can chain
    /// (`b -> .`, then `c -> b/b/..`), so each entry's own target can look harmless: resolve them on disk.
    package static func refuseLinksLeaving(_ folder: String, archive: String) throws {
        guard let root = realPath(folder) else {
            throw RunAnywhereError(.storageFailure, "Cannot resolve \(folder): \(String(cString: strerror(errno))).")
        }
        func walk(_ relative: String) throws {
            let path = relative.isEmpty ? root : root + "/" + relative
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard lstat(root + "/" + child, &info) == 0 else { continue }
                switch info.st_mode & 0o170000 {
                case 0o120000:
                    guard let resolved = realPath(root + "/" + child), resolved == root || resolved.hasPrefix(root + "/") else {
                        throw RunAnywhereError(.extractionFailed,
                            "\(archive) holds a symbolic link '\(child)' that leads outside its folder or to nothing; refusing to extract it.")
                    }
                case 0o040000:
                    try walk(child)
                default:
                    break
                }
            }
        }
        try walk("")
    }

    private static func checkSymlink(_ path: String, target: String, raw: String, archive: String) throws {
        if target.isEmpty || target.hasPrefix("/") {
            throw RunAnywhereError(.extractionFailed, "\(archive) holds a symbolic link '\(raw)' to '\(target)', outside its folder; refusing to extract it.")
        }
        var resolved = path.split(separator: "/").dropLast().map(String.init)
        for part in target.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == ".." {
                guard !resolved.isEmpty else {
                    throw RunAnywhereError(.extractionFailed, "\(archive) holds a symbolic link '\(raw)' to '\(target)', outside its folder; refusing to extract it.")
                }
                resolved.removeLast()
            } else {
                resolved.append(String(part))
            }
        }
    }

    private static func errorText(_ archive: OpaquePointer) -> String {
        archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error"
    }
}
