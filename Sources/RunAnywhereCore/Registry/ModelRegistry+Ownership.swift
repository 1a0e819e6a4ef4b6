import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ModelRegistry {
    /// Every model folder with a readable manifest: its id, folder and manifest.
    private func manifests() -> [(id: String, dir: URL, manifest: ModelManifest)] {
        var out: [(String, URL, ModelManifest)] = []
        for framework in InferenceFramework.allCases {
            let frameworkDir = layout.modelsDirectory.appendingPathComponent(framework.rawValue, isDirectory: true)
            for id in ((try? FileManager.default.contentsOfDirectory(atPath: frameworkDir.path)) ?? []).sorted() where ModelID.isValid(id) {
                let dir = frameworkDir.appendingPathComponent(id, isDirectory: true)
                if let manifest = try? readManifest(dir.appendingPathComponent("manifest.json")) { out.append((id, dir, manifest)) }
            }
        }
        return out
    }

    /// Bytes of the files that belong to downloaded models (what their manifests list and is on disk): the
    /// storage `ps` reports. Stray files, partial downloads and manifests do not count.
    func downloadedBytes() -> Int64 {
        manifests().reduce(0) { sum, entry in
            guard entry.manifest.model.isDownloaded else { return sum }
            return sum + entry.manifest.files.reduce(0) { $0 + (FileSystem.fileSize(entry.dir.appendingPathComponent($1.relativePath)) ?? 0) }
        }
    }

    /// Removes the files of model folders that their manifest does not list (all of them for a model not
    /// downloaded), skipping models being downloaded right now. Returns their paths under the storage root.
    func removeStrayFiles() -> [String] {
        var removed: [String] = []
        let root = layout.root.standardizedFileURL.path
        for (id, dir, manifest) in manifests() {
            let listed = Set(manifest.model.isDownloaded ? manifest.files.map(\.relativePath) : [])
            let stray = Self.regularFiles(in: dir).map(\.relativePath)
                .filter { $0 != "manifest.json" && !$0.hasPrefix(".") && !listed.contains($0) }
            guard !stray.isEmpty, let lock = DownloadFolderLock.tryAcquire(layout.downloadDirectory(id: id)) else { continue }
            defer { lock.release() }
            for path in stray {
                let url = dir.appendingPathComponent(path)
                if (try? FileManager.default.removeItem(at: url)) != nil {
                    removed.append(String(url.standardizedFileURL.path.dropFirst(root.count + 1)))
                }
            }
        }
        return removed
    }
}

/// A non-blocking try of the lock a download of one model holds (`downloads/<id>/.lock`).
struct DownloadFolderLock {
    private let fd: Int32

    /// The lock, or nil when a download holds it. Without a lock file no download runs: a dummy lock.
    static func tryAcquire(_ folder: URL) -> DownloadFolderLock? {
        let path = folder.appendingPathComponent(".lock").path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return DownloadFolderLock(fd: -1) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return DownloadFolderLock(fd: fd)
    }

    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }
}
