import Foundation
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

@Suite("Download journal")
struct DownloadJournalTests {
    @Test("a journal saved through a path worked out once reads back the same, private to its owner, with no temp file left")
    func savesThroughFilePath() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let url = dir.url.appendingPathComponent("model.gguf.journal")
        let file = FileSystem.FilePath(url)
        #expect(file.folder == dir.url.path)
        #expect(file.name == "model.gguf.journal")
        var journal = DownloadJournal(url: "http://127.0.0.1/model.gguf", etag: "\"v1\"", totalBytes: 10 << 20,
                                      bytesWritten: 0, expectedSHA256: nil)
        for written in stride(from: Int64(0), through: 10 << 20, by: 2 << 20) {
            journal.bytesWritten = written
            try journal.save(to: file)
            #expect(DownloadJournal.load(from: url) == journal)
        }
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["model.gguf.journal"])
    }

    @Test("saving after the download's folder was deleted says the model was deleted, naming the file")
    func folderGone() throws {
        let dir = try TemporaryDirectory()
        let file = FileSystem.FilePath(dir.url.appendingPathComponent("downloads/model.gguf.journal"))
        dir.remove()
        let journal = DownloadJournal(url: "http://127.0.0.1/model.gguf", bytesWritten: 0)
        #expect {
            try journal.save(to: file)
        } throws: { error in
            guard case TransferError.permanent(let e) = error else { return false }
            return e.code == .storageFailure && e.message.contains("download of model.gguf lost its files")
        }
    }
}
