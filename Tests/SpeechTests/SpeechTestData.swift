import Foundation
import RunAnywhere
import RunAnywhereSherpa

/// The speech test data (scripts/fetch-speech-testdata.sh) and the sherpa-onnx library (scripts/install-speech.sh).
/// Tests that need them are skipped with the reason when they are absent.
enum SpeechTestData {
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `$RUNANYWHERE_SPEECH_TESTDATA`, else the checkout's `.runanywhere-deps/speech-testdata`, when it holds the Moonshine model.
    static let root: URL? = {
        let env = ProcessInfo.processInfo.environment["RUNANYWHERE_SPEECH_TESTDATA"]
        let dir = env.map { URL(fileURLWithPath: $0) } ?? checkout.appendingPathComponent(".runanywhere-deps/speech-testdata")
        return FileManager.default.fileExists(atPath: dir.appendingPathComponent("moonshine-base-en/tokens.txt").path) ? dir : nil
    }()

    /// Whether sherpa-onnx's C API library can be found the way the backend looks for it.
    static let libraryPresent: Bool = {
        if let env = ProcessInfo.processInfo.environment["RUNANYWHERE_SHERPA_ONNX_LIB"] { return FileManager.default.fileExists(atPath: env) }
        return FileManager.default.fileExists(atPath: checkout.appendingPathComponent(".runanywhere-deps/sherpa-onnx/sherpa_onnx/lib/libsherpa-onnx-c-api.so").path)
    }()

    static var ready: Bool { root != nil && libraryPresent }
    static let skipReason = "needs scripts/install-speech.sh and scripts/fetch-speech-testdata.sh (or RUNANYWHERE_SPEECH_TESTDATA)"

    /// The backend as the tests use it: the checkout's library, the test data's VAD model.
    static func backend() -> SherpaOnnxBackend {
        SherpaOnnxBackend(vadModelPath: root?.appendingPathComponent("silero_vad.onnx").path)
    }

    /// LibriVox clip ids and their reference words, from `transcription`.
    static func librivox() throws -> [(wav: URL, words: [String])] {
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
    static func normalize(_ text: String) -> [String] {
        let spelled = text.lowercased().replacingOccurrences(of: "mr.", with: "mister").replacingOccurrences(of: "mrs.", with: "missus")
        return spelled.split { !($0.isLetter || $0.isNumber || $0 == "'") }.map(String.init)
    }

    /// Word error rate of `hyp` against `ref` (edit distance over words / reference length).
    static func wer(_ ref: [String], _ hyp: [String]) -> Double {
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
