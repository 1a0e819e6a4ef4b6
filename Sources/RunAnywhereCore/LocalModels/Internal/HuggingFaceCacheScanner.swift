import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds GGUF files in the Hugging Face cache:
/// `<hub>/models--ORG--NAME/snapshots/<revision>/<path>.gguf`, where each snapshot file is a symbolic link into
/// `../../blobs/<sha256>` (or, on systems without symbolic links, the file itself).
enum HuggingFaceCacheScanner {
    /// `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
    static func hubDirectory(environment: [String: String]) -> URL {
        func nonEmpty(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        if let hub = nonEmpty("HF_HUB_CACHE") { return URL(fileURLWithPath: hub, isDirectory: true) }
        if let home = nonEmpty("HF_HOME") { return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent("hub", isDirectory: true) }
        if let xdg = nonEmpty("XDG_CACHE_HOME") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("huggingface/hub", isDirectory: true)
        }
        let home = nonEmpty("HOME") ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache/huggingface/hub", isDirectory: true)
    }

    /// Every GGUF file of every model repository in the cache (folders are not followed through symbolic links).
    static func scan(_ hub: URL) -> LocalStoreScan {
        var scan = LocalStoreScan()
        var budget = LocalStoreScan.entryLimit
        for repoFolder in LocalStoreScan.names(in: hub) where repoFolder.hasPrefix("models--") {
            let repoDir = hub.appendingPathComponent(repoFolder, isDirectory: true)
            guard LocalStoreScan.kind(repoDir) == S_IFDIR else { continue }
            let repository = repoFolder.dropFirst("models--".count).components(separatedBy: "--").joined(separator: "/")
            let snapshots = repoDir.appendingPathComponent("snapshots", isDirectory: true)
            for revision in revisions(of: repoDir, in: snapshots) {
                var files: [String] = []
                collectGGUF(in: snapshots.appendingPathComponent(revision, isDirectory: true), prefix: "", depth: 0, budget: &budget, into: &files)
                for relative in files {
                    let reference = snapshots.appendingPathComponent(revision, isDirectory: true).appendingPathComponent(relative)
                    let fileName = (relative as NSString).lastPathComponent
                    if let why = LocalStoreScan.notAModelByItself(fileName) {
                        scan.skipped.append(.init(source: .huggingFace, path: reference, reason: why))
                        continue
                    }
                    guard let file = scan.checkedGGUF(reference, source: .huggingFace) else { continue }
                    let blobName = (file.path as NSString).lastPathComponent
                    let inBlobs = ((file.path as NSString).deletingLastPathComponent as NSString).lastPathComponent == "blobs"
                    scan.candidates.append(LocalStoreCandidate(
                        source: .huggingFace, file: file, referencePath: reference, name: "\(repository)/\(relative)",
                        fileName: fileName, baseId: ModelID.stem(of: URL(fileURLWithPath: fileName)),
                        claimedSHA256: inBlobs && LocalStoreScan.isSHA256(blobName) ? blobName : nil))
                }
            }
            if budget <= 0 {
                scan.skipped.append(.init(source: .huggingFace, path: hub, reason: "more than \(LocalStoreScan.entryLimit) entries; the rest was not searched"))
                break
            }
        }
        return scan
    }

    /// The snapshot folders, the one `refs/main` names first (it is what a download of `main` gets).
    private static func revisions(of repoDir: URL, in snapshots: URL) -> [String] {
        let all = LocalStoreScan.names(in: snapshots).filter { LocalStoreScan.kind(snapshots.appendingPathComponent($0)) == S_IFDIR }
        let mainRef = repoDir.appendingPathComponent("refs/main")
        guard LocalStoreScan.kind(mainRef) == S_IFREG, FileSystem.fileSize(mainRef).map({ $0 < 256 }) == true,
              let main = try? String(contentsOf: mainRef, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
              all.contains(main) else { return all }
        return [main] + all.filter { $0 != main }
    }

    /// Paths (relative to `dir`) of `.gguf` entries below `dir`, at most 4 folders deep, real folders only.
    private static func collectGGUF(in dir: URL, prefix: String, depth: Int, budget: inout Int, into files: inout [String]) {
        for name in LocalStoreScan.names(in: dir) {
            budget -= 1
            if budget <= 0 { return }
            let url = dir.appendingPathComponent(name)
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            switch LocalStoreScan.kind(url) {
            case S_IFDIR where depth < 4:
                collectGGUF(in: url, prefix: relative, depth: depth + 1, budget: &budget, into: &files)
            case S_IFLNK, S_IFREG:
                if name.lowercased().hasSuffix(".gguf") { files.append(relative) }
            default:
                break
            }
        }
    }
}
