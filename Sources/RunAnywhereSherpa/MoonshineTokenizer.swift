import Foundation
import RunAnywhereCore

/// moonshine-cpp's `tokenizer.bin` and the tokens file sherpa-onnx reads for Moonshine v2.
///
/// `tokenizer.bin` holds the vocabulary in id order, entries back to back: a length (one byte when below
/// 128; else two bytes, `(b0 - 128) + 128 * b1`) followed by that many bytes of the token. sherpa-onnx
/// wants one line per token, `<base64 of the bytes> <id>`.
enum MoonshineTokenizer {
    /// The tokens of a `tokenizer.bin`, in id order.
    static func tokens(_ data: Data, name: String) throws -> [Data] {
        let bytes = [UInt8](data)
        var out: [Data] = []
        var i = 0
        func bad(_ why: String) -> RunAnywhereError {
            RunAnywhereError(.invalidModelFormat, "\(name) is not a moonshine tokenizer.bin: \(why) at byte \(i).")
        }
        while i < bytes.count {
            var length = Int(bytes[i])
            i += 1
            if length >= 128 {
                guard i < bytes.count else { throw bad("the last length is cut short") }
                length = (length - 128) + 128 * Int(bytes[i])
                i += 1
            }
            guard length <= bytes.count - i else { throw bad("a token of \(length) bytes runs past the end") }
            out.append(Data(bytes[i..<(i + length)]))
            i += length
        }
        guard !out.isEmpty else { throw bad("it is empty") }
        return out
    }

    /// The sherpa-onnx tokens file text for these tokens.
    static func tokensFile(_ tokens: [Data]) -> String {
        var text = ""
        text.reserveCapacity(tokens.count * 12)
        for (id, token) in tokens.enumerated() {
            text += token.base64EncodedString() + " \(id)\n"
        }
        return text
    }

    /// Writes the tokens file for `tokenizer.bin` into a fresh temporary folder and returns its URL
    /// (the caller removes the folder once the recognizer has read it).
    static func writeTokensFile(from tokenizer: URL, modelId: String) throws -> URL {
        let data: Data
        do { data = try Data(contentsOf: tokenizer) } catch {
            throw RunAnywhereError(.storageFailure, "Cannot read \(tokenizer.path): \(error.localizedDescription)", modelId: modelId)
        }
        let text = tokensFile(try tokens(data, name: tokenizer.path))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("runanywhere-tokens-\(UUID().uuidString)")
        let file = dir.appendingPathComponent("tokens.txt")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        } catch {
            throw RunAnywhereError(.storageFailure, "Cannot write a tokens file in \(dir.path): \(error.localizedDescription)", modelId: modelId)
        }
        return file
    }
}
