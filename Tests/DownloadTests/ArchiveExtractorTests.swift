import CArchive
import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// One entry to write into a test archive.
enum TestEntry {
    case file(String, [UInt8])
    case directory(String)
    case symlink(String, target: String)
    case hardlink(String, target: String)
}

enum TestArchiveFormat: String, CaseIterable, Sendable {
    case tarGz = "tar.gz", tarBz2 = "tar.bz2", tarXz = "tar.xz", zip
}

/// Writes an archive with libarchive's writer (entry names are written exactly as given, hostile or not).
func writeArchive(_ entries: [TestEntry], format: TestArchiveFormat, to url: URL) throws {
    guard let writer = archive_write_new() else { throw RunAnywhereError(.storageFailure, "archive_write_new failed") }
    defer { archive_write_free(writer) }
    switch format {
    case .tarGz: archive_write_set_format_pax_restricted(writer); archive_write_add_filter_gzip(writer)
    case .tarBz2: archive_write_set_format_pax_restricted(writer); archive_write_add_filter_bzip2(writer)
    case .tarXz: archive_write_set_format_pax_restricted(writer); archive_write_add_filter_xz(writer)
    case .zip: archive_write_set_format_zip(writer)
    }
    guard archive_write_open_filename(writer, url.path) == ARCHIVE_OK else {
        throw RunAnywhereError(.storageFailure, "cannot open \(url.path) for writing")
    }
    for item in entries {
        guard let entry = archive_entry_new() else { continue }
        defer { archive_entry_free(entry) }
        var data: [UInt8] = []
        switch item {
        case .file(let name, let bytes):
            archive_entry_set_pathname(entry, name)
            archive_entry_set_filetype(entry, 0o100000)
            archive_entry_set_perm(entry, 0o644)
            archive_entry_set_size(entry, la_int64_t(bytes.count))
            data = bytes
        case .directory(let name):
            archive_entry_set_pathname(entry, name)
            archive_entry_set_filetype(entry, 0o040000)
            archive_entry_set_perm(entry, 0o755)
        case .symlink(let name, let target):
            archive_entry_set_pathname(entry, name)
            archive_entry_set_filetype(entry, 0o120000)
            archive_entry_set_perm(entry, 0o777)
            archive_entry_set_symlink(entry, target)
        case .hardlink(let name, let target):
            archive_entry_set_pathname(entry, name)
            archive_entry_set_filetype(entry, 0o100000)
            archive_entry_set_perm(entry, 0o644)
            archive_entry_set_hardlink(entry, target)
            archive_entry_set_size(entry, 0)
        }
        guard archive_write_header(writer, entry) == ARCHIVE_OK else {
            throw RunAnywhereError(.storageFailure, "cannot write header: \(String(cString: archive_error_string(writer)))")
        }
        if !data.isEmpty {
            _ = data.withUnsafeBytes { archive_write_data(writer, $0.baseAddress, $0.count) }
        }
    }
    archive_write_close(writer)
}

/// Lists every path below `dir`, relative, sorted.
func listTree(_ dir: URL) -> [String] {
    guard let e = FileManager.default.enumerator(atPath: dir.path) else { return [] }
    return (e.allObjects as? [String] ?? []).sorted()
}

@Suite("ArchiveExtractor")
struct ArchiveExtractorTests {
    @Test("extracts files, folders and in-folder links", arguments: TestArchiveFormat.allCases)
    func extracts(format: TestArchiveFormat) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let weights = testBytes(200_000)
        let archive = dir.url.appendingPathComponent("model.\(format.rawValue)")
        var entries: [TestEntry] = [
            .directory("model/"),
            .file("model/encoder.onnx", weights),
            .file("model/tokens.txt", Array("a\nb\n".utf8)),
            .symlink("model/current.onnx", target: "encoder.onnx"),
        ]
        if format != .zip { entries.append(.hardlink("model/twin.onnx", target: "model/encoder.onnx")) }
        try writeArchive(entries, format: format, to: archive)
        let target = dir.url.appendingPathComponent("out/model-x")
        let summary = try ArchiveExtractor.extract(archive: archive, into: target, maxTotalBytes: 1_000_000)
        #expect(fileBytes(target.appendingPathComponent("model/encoder.onnx")) == weights)
        #expect(fileBytes(target.appendingPathComponent("model/current.onnx")) == weights)
        #expect(summary.byteCount == Int64(weights.count + 4))
        var expected = ["model-x", "model-x/model", "model-x/model/current.onnx", "model-x/model/encoder.onnx", "model-x/model/tokens.txt"]
        if format != .zip {
            expected.append("model-x/model/twin.onnx")
            #expect(fileBytes(target.appendingPathComponent("model/twin.onnx")) == weights)
        }
        #expect(listTree(dir.url.appendingPathComponent("out")) == expected.sorted())
    }

    static let hostile: [(String, [TestEntry], String)] = [
        ("dot-dot", [.file("ok.txt", [1]), .file("../evil", Array("pwned".utf8))], "../evil"),
        ("nested dot-dot", [.file("a/../../evil", Array("pwned".utf8))], "a/../../evil"),
        ("absolute path", [.file("/tmp/runanywhere-evil-abs", Array("pwned".utf8))], "/tmp/runanywhere-evil-abs"),
        ("absolute symlink", [.symlink("link", target: "/etc"), .file("link/evil", [1])], "link"),
        ("relative symlink escape", [.symlink("up", target: "../.."), .file("up/evil", [1])], "up"),
        ("write through an in-folder symlink", [.directory("d/"), .symlink("s", target: "d"), .file("s/evil", [1])], "s/evil"),
        ("hardlink escape", [.hardlink("h", target: "../outside.txt")], "../outside.txt"),
        ("hardlink absolute", [.hardlink("h", target: "/etc/passwd")], "/etc/passwd"),
    ]

    @Test("refuses hostile archives, names the entry and writes nothing", arguments: 0..<hostile.count)
    func refusesHostile(index: Int) throws {
        let (_, entries, culprit) = Self.hostile[index]
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try Data("original".utf8).write(to: dir.url.appendingPathComponent("outside.txt"))
        // zip has no hard links (libarchive's zip writer stores them as empty files): tar only for those.
        let isHardlinkCase = entries.contains { if case .hardlink = $0 { true } else { false } }
        for format in isHardlinkCase ? [TestArchiveFormat.tarGz] : [.tarGz, .zip] {
            let archive = dir.url.appendingPathComponent("bad.\(format.rawValue)")
            try writeArchive(entries, format: format, to: archive)
            let work = dir.url.appendingPathComponent("work/deeper")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let target = work.appendingPathComponent("model")
            #expect {
                try ArchiveExtractor.extract(archive: archive, into: target, maxTotalBytes: 1_000_000)
            } throws: { error in
                guard let e = error as? RunAnywhereError, e.code == .extractionFailed else { return false }
                return e.message.contains("'\(culprit)'")
            }
            #expect(listTree(dir.url.appendingPathComponent("work")) == ["deeper"])
            #expect(!fileExists(dir.url.appendingPathComponent("work/evil")))
            #expect(!fileExists(dir.url.appendingPathComponent("evil")))
            #expect(!fileExists(URL(fileURLWithPath: "/tmp/runanywhere-evil-abs")))
            #expect(fileBytes(dir.url.appendingPathComponent("outside.txt")) == Array("original".utf8))
        }
    }

    @Test("stops a decompression bomb at the byte limit and leaves nothing behind")
    func bomb() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let archive = dir.url.appendingPathComponent("bomb.tar.gz")
        try writeArchive([.file("a.bin", [UInt8](repeating: 0, count: 600_000)), .file("b.bin", [UInt8](repeating: 0, count: 600_000))],
                         format: .tarGz, to: archive)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: archive.path)[.size] as? NSNumber)
        #expect(size.intValue < 10_000)
        let target = dir.url.appendingPathComponent("out")
        #expect {
            try ArchiveExtractor.extract(archive: archive, into: target, maxTotalBytes: 1_000_000)
        } throws: { ($0 as? RunAnywhereError)?.code == .extractionFailed && "\($0)".contains("'b.bin'") }
        #expect(listTree(dir.url) == ["bomb.tar.gz"])
    }

    @Test("reports a file that is not an archive as extractionFailed")
    func notAnArchive() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.url.appendingPathComponent("x.tar.gz")
        try Data(testBytes(1000)).write(to: file)
        #expect {
            try ArchiveExtractor.extract(archive: file, into: dir.url.appendingPathComponent("out"), maxTotalBytes: 1_000_000)
        } throws: { ($0 as? RunAnywhereError)?.code == .extractionFailed }
        #expect(listTree(dir.url) == ["x.tar.gz"])
    }

    @Test("replaces an existing folder only when asked")
    func replaceExisting() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let archive = dir.url.appendingPathComponent("m.zip")
        try writeArchive([.file("new.txt", [1, 2, 3])], format: .zip, to: archive)
        let target = dir.url.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data([9]).write(to: target.appendingPathComponent("old.txt"))
        #expect(throws: RunAnywhereError.self) {
            try ArchiveExtractor.extract(archive: archive, into: target, maxTotalBytes: 100)
        }
        #expect(listTree(target) == ["old.txt"])
        try ArchiveExtractor.extract(archive: archive, into: target, maxTotalBytes: 100, replaceExisting: true)
        #expect(listTree(target) == ["new.txt"])
        #expect(listTree(dir.url) == ["m.zip", "model", "model/new.txt"])
    }
}
