import Foundation
import RunAnywhere

/// The speech test data (`scripts/fetch-speech-testdata.sh`) and the sherpa-onnx library (`scripts/install-speech.sh`),
/// for tests, the CLI tests and the speech benchmark. Tests that need them are skipped with ``skipReason`` when absent.
public enum SpeechTestData {
    /// The checkout this file was built from.
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `$RUNANYWHERE_SPEECH_TESTDATA`, else the checkout's `.runanywhere-deps/speech-testdata`, when it holds the Moonshine model.
    public static let root: URL? = {
        let env = ProcessInfo.processInfo.environment["RUNANYWHERE_SPEECH_TESTDATA"]
        let dir = env.map { URL(fileURLWithPath: $0) } ?? checkout.appendingPathComponent(".runanywhere-deps/speech-testdata")
        return FileManager.default.fileExists(atPath: dir.appendingPathComponent("moonshine-base-en/tokens.txt").path) ? dir : nil
    }()

    /// Whether sherpa-onnx's C API library is where the backend looks (`$RUNANYWHERE_SHERPA_ONNX_LIB` or the checkout).
    public static let libraryPresent: Bool = {
        if let env = ProcessInfo.processInfo.environment["RUNANYWHERE_SHERPA_ONNX_LIB"] { return FileManager.default.fileExists(atPath: env) }
        return FileManager.default.fileExists(atPath: checkout.appendingPathComponent(".runanywhere-deps/sherpa-onnx/sherpa_onnx/lib/libsherpa-onnx-c-api.so").path)
    }()

    /// Both the data and the library are present.
    public static var ready: Bool { root != nil && libraryPresent }
    /// Why speech tests are skipped.
    public static let skipReason = "needs scripts/install-speech.sh and scripts/fetch-speech-testdata.sh (or RUNANYWHERE_SPEECH_TESTDATA)"

    /// The Silero VAD model in the test data.
    public static var vadModel: URL? { root?.appendingPathComponent("silero_vad.onnx") }

    /// The files of the Moonshine model, as declared when it is registered as an archive.
    public static let moonshineFiles = ["encoder_model.ort", "decoder_model_merged.ort", "tokens.txt"]

    /// Publishes the Moonshine model on `mirror` as `moonshine-base-en.tar` (top folder `moonshine-base-en`) and returns its URL.
    public static func publishMoonshine(on mirror: ModelMirror, scratch: URL) throws -> URL {
        guard let root else { throw RunAnywhereError(.modelNotFound, skipReason) }
        let tar = scratch.appendingPathComponent("moonshine-base-en.tar")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        p.arguments = ["-cf", tar.path, "-C", root.path] + moonshineFiles.map { "moonshine-base-en/" + $0 }
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw RunAnywhereError(.storageFailure, "tar could not pack the Moonshine model") }
        defer { try? FileManager.default.removeItem(at: tar) }
        return mirror.publish("moonshine-base-en.tar", data: try Data(contentsOf: tar))
    }

    /// Registers the Moonshine model from `url` with `sdk` as `moonshine-base-en`.
    @discardableResult
    public static func registerMoonshine(_ url: URL, with sdk: RunAnywhereSDK) async throws -> ModelInfo {
        try await sdk.registerModel(archive: url.absoluteString,
                                    structure: ArchiveStructure(rootDirectory: "moonshine-base-en", expectedFiles: moonshineFiles),
                                    id: "moonshine-base-en", name: "Moonshine base (English)", framework: .onnx, modality: .speechRecognition)
    }

    /// The LibriVox clips and their reference words, from `librivox/transcription`.
    public static func librivox() throws -> [(wav: URL, words: [String])] {
        guard let root else { return [] }
        let dir = root.appendingPathComponent("librivox")
        let text = try String(contentsOf: dir.appendingPathComponent("transcription"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard let open = line.lastIndex(of: "("), let close = line.lastIndex(of: ")") else { return nil }
            let id = String(line[line.index(after: open)..<close])
            let words = normalize(String(line[..<open]).replacingOccurrences(of: "<s>", with: "").replacingOccurrences(of: "</s>", with: ""))
            return (dir.appendingPathComponent(id + ".wav"), words)
        }
    }

    /// Lower-case words without punctuation; hyphens split words ("ill-disposed" → "ill disposed"), "mr." → "mister".
    public static func normalize(_ text: String) -> [String] {
        let spelled = text.lowercased().replacingOccurrences(of: "mr.", with: "mister").replacingOccurrences(of: "mrs.", with: "missus")
        return spelled.split { !($0.isLetter || $0.isNumber || $0 == "'") }.map(String.init)
    }

    /// Word error rate of `hyp` against `ref` (edit distance over words / reference length).
    public static func wer(_ ref: [String], _ hyp: [String]) -> Double {
        guard !ref.isEmpty else { return hyp.isEmpty ? 0 : 1 }
        var prev = Array(0...hyp.count)
        for i in 1...ref.count {
            var cur = [i] + Array(repeating: 0, count: hyp.count)
            for j in stride(from: 1, through: hyp.count, by: 1) {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ref[i - 1] == hyp[j - 1] ? 0 : 1))
            }
            prev = cur
        }
        return Double(prev[hyp.count]) / Double(ref.count)
    }
}
