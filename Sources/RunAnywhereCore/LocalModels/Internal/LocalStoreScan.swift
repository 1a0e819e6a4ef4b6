import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One GGUF file a store scan found, before the registry's view (suggested id, catalog match, imported) is added.
struct LocalStoreCandidate: Sendable {
    var source: DiscoveredModel.Source
    var file: LocalSourceFile
    var referencePath: URL
    /// What the tool calls it.
    var name: String
    /// The name it gets in a model folder.
    var fileName: String
    /// The id it would get when nothing else has it.
    var baseId: String
    /// SHA-256 the tool records for the bytes.
    var claimedSHA256: String?
}

/// What a store scan found and passed over.
struct LocalStoreScan: Sendable {
    var candidates: [LocalStoreCandidate] = []
    var skipped: [LocalDiscovery.Skipped] = []

    /// Walking stops after this many directory entries in one store, so a huge or looping tree cannot hang discovery.
    static let entryLimit = 20_000

    /// The names in a folder, sorted; empty when it cannot be read.
    static func names(in dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }

    /// The type bits of the entry itself (a symbolic link is not followed), or nil when it is gone.
    static func kind(_ url: URL) -> mode_t? {
        var st = stat()
        guard lstat(url.path, &st) == 0 else { return nil }
        return st.st_mode & S_IFMT
    }

    /// The checked file behind `url`, or nil after recording why it is passed over.
    mutating func checkedGGUF(_ url: URL, source: DiscoveredModel.Source, reportAs reported: URL? = nil) -> LocalSourceFile? {
        let file: LocalSourceFile
        do {
            file = try LocalSourceFile.resolve(url)
        } catch let error as RunAnywhereError {
            skipped.append(.init(source: source, path: reported ?? url, reason: error.message))
            return nil
        } catch {
            skipped.append(.init(source: source, path: reported ?? url, reason: "\(error)"))
            return nil
        }
        if let problem = LocalSourceFile.ggufMagicProblem(file.path) {
            skipped.append(.init(source: source, path: reported ?? url, reason: "not a GGUF model file: \(problem)"))
            return nil
        }
        return file
    }

    /// Whether `text` is 64 lower-case hex digits.
    static func isSHA256(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Why a GGUF file name is not a model to import on its own, or nil.
    static func notAModelByItself(_ fileName: String) -> String? {
        let lower = fileName.lowercased()
        if lower.hasPrefix("mmproj") { return "a vision projector (mmproj), not a model by itself" }
        if let match = lower.firstMatch(of: /-(\d{5})-of-(\d{5})\.gguf$/) {
            return "part \(Int(match.output.1) ?? 0) of a model split in \(Int(match.output.2) ?? 0) files; split models are not supported yet"
        }
        return nil
    }
}
