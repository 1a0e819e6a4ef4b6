import Foundation
import RunAnywhereCore

/// Which files of a downloaded speech model sherpa-onnx loads, found from the registration's declared
/// files (archive `expectedFiles`, multi-file descriptors and their roles) and then by name patterns.
struct SpeechModelLayout: Sendable, Hashable {
    enum Family: String, Sendable, Hashable {
        /// Whisper: encoder + decoder + tokens.
        case whisper
        /// Moonshine v2 (moonshine-cpp / Hugging Face layout): encoder_model + decoder_model_merged + tokens.
        case moonshine
        /// Moonshine v1 (sherpa-onnx's first export): preprocess + encode + uncached_decode + cached_decode + tokens.
        case moonshineV1
    }

    enum Tokens: Sendable, Hashable {
        /// A sherpa-onnx tokens file.
        case text(URL)
        /// moonshine-cpp's `tokenizer.bin`, converted to a tokens file at load.
        case moonshineBinary(URL)

        var url: URL {
            switch self { case .text(let u), .moonshineBinary(let u): return u }
        }
    }

    var family: Family
    /// The model files, by the role sherpa-onnx gives them ("encoder", "decoder", "merged_decoder", …).
    var files: [String: URL]
    var tokens: Tokens
    /// Languages the model knows, when it is a single-language model.
    var languages: Set<String>?

    /// Seconds of audio the model takes at once; longer audio is cut at silences.
    var windowSeconds: Double { 30 }

    /// Bytes of every file the recognizer reads.
    var totalBytes: Int64 {
        (Array(files.values) + [tokens.url]).reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int64) ?? 0) }
    }

    /// Finds the layout of a downloaded model.
    /// - Throws: `.modelNotDownloaded` without a folder; `.invalidModelFormat` naming what is missing.
    static func resolve(_ model: ModelInfo) throws -> SpeechModelLayout {
        guard let folder = model.localPath ?? model.primaryFilePath?.deletingLastPathComponent() else {
            throw RunAnywhereError(.modelNotDownloaded, "Model '\(model.id)' is not on disk.", modelId: model.id)
        }
        let present = listFiles(folder)
        let declared = declaredNames(model)
        return try resolve(id: model.id, hint: "\(model.id) \(model.name)", present: present, declared: declared, folder: folder)
    }

    /// The layout from a list of relative paths present (testable without a model).
    static func resolve(id: String, hint: String, present: [String], declared: [String: ModelFileDescriptor.Role],
                        folder: URL) throws -> SpeechModelLayout {
        func name(_ p: String) -> String { (p as NSString).lastPathComponent.lowercased() }
        func isGraph(_ p: String) -> Bool { let n = name(p); return n.hasSuffix(".onnx") || n.hasSuffix(".ort") }
        /// The best path whose name passes `test`: declared files first, then full precision before int8, then shortest.
        func pick(_ test: (String) -> Bool) -> String? {
            present.filter { isGraph($0) && test(name($0)) }.min { a, b in
                let ka = (declared[a] == nil ? 1 : 0, name(a).contains("int8") ? 1 : 0, a.count)
                let kb = (declared[b] == nil ? 1 : 0, name(b).contains("int8") ? 1 : 0, b.count)
                return ka < kb
            }
        }
        let url = { (p: String) in folder.appendingPathComponent(p) }
        let tokensText = present.filter { name($0).hasSuffix("tokens.txt") }.min { ($0.count, $0) < ($1.count, $1) }
            ?? present.first { declared[$0] == .tokenizer && name($0).hasSuffix(".txt") }
        let tokenizerBin = present.first { name($0) == "tokenizer.bin" }
        // "tiny.en", "moonshine-base-en": a word "en" in the id, name or file names marks an English-only model.
        let words = ([hint] + present).flatMap { $0.lowercased().split { !($0.isLetter || $0.isNumber) } }
        let englishOnly = words.contains("en")

        let merged = pick { $0.contains("decoder_model_merged") || $0.contains("merged_decoder") || $0.contains("merged-decoder") }
        let v1 = (pick { $0.hasPrefix("preprocess") }, pick { $0.hasPrefix("encode.") || $0.hasPrefix("encode-") || $0 == "encode.onnx" },
                  pick { $0.hasPrefix("uncached_decode") }, pick { $0.hasPrefix("cached_decode") })
        let encoder = pick { $0.contains("encoder") }
        let decoder = pick { $0.contains("decoder") && !$0.contains("merged") }

        func tokens(_ family: String, allowBinary: Bool) throws -> Tokens {
            if let t = tokensText { return .text(url(t)) }
            if allowBinary, let b = tokenizerBin { return .moonshineBinary(url(b)) }
            throw RunAnywhereError(.invalidModelFormat,
                "Model '\(id)' looks like \(family) but has no tokens file: expected tokens.txt (or a name ending in tokens.txt\(allowBinary ? ", or moonshine's tokenizer.bin" : "")) in \(folder.path).", modelId: id)
        }
        if let merged {
            guard let encoder else {
                throw missing(id, "Moonshine", "an encoder (encoder_model.ort or encoder_model.onnx)", folder)
            }
            return SpeechModelLayout(family: .moonshine, files: ["encoder": url(encoder), "merged_decoder": url(merged)],
                                     tokens: try tokens("Moonshine", allowBinary: true), languages: englishOnly ? ["en"] : nil)
        }
        if v1.0 != nil || v1.2 != nil || v1.3 != nil {
            let named = [("preprocess.onnx", v1.0), ("encode.onnx", v1.1), ("uncached_decode.onnx", v1.2), ("cached_decode.onnx", v1.3)]
            if let gap = named.first(where: { $0.1 == nil }) { throw missing(id, "Moonshine (v1)", gap.0, folder) }
            let files = ["preprocessor": v1.0, "encoder": v1.1, "uncached_decoder": v1.2, "cached_decoder": v1.3].compactMapValues { $0.map(url) }
            return SpeechModelLayout(family: .moonshineV1, files: files, tokens: try tokens("Moonshine (v1)", allowBinary: false),
                                     languages: englishOnly ? ["en"] : nil)
        }
        if encoder != nil || decoder != nil {
            guard let encoder else { throw missing(id, "Whisper", "an encoder (a name containing 'encoder', .onnx)", folder) }
            guard let decoder else { throw missing(id, "Whisper", "a decoder (a name containing 'decoder', .onnx)", folder) }
            return SpeechModelLayout(family: .whisper, files: ["encoder": url(encoder), "decoder": url(decoder)],
                                     tokens: try tokens("Whisper", allowBinary: false), languages: englishOnly ? ["en"] : nil)
        }
        throw RunAnywhereError(.invalidModelFormat,
            "Model '\(id)' has no speech model layout this backend knows; missing an encoder file. Expected Whisper (*encoder*.onnx, *decoder*.onnx, *tokens.txt) or Moonshine (encoder_model.ort, decoder_model_merged.ort, tokens.txt or tokenizer.bin). Found: \(present.prefix(12).joined(separator: ", ")).",
            modelId: id)
    }

    private static func missing(_ id: String, _ family: String, _ what: String, _ folder: URL) -> RunAnywhereError {
        RunAnywhereError(.invalidModelFormat, "Model '\(id)' looks like \(family) but is missing \(what) in \(folder.path).", modelId: id)
    }

    /// File names the registration declared, with their roles.
    static func declaredNames(_ model: ModelInfo) -> [String: ModelFileDescriptor.Role] {
        switch model.artifact {
        case .singleFile(let f): return [f.fileName: f.role]
        case .multiFile(let fs): return Dictionary(fs.map { ($0.fileName, $0.role) }, uniquingKeysWith: { a, _ in a })
        case .archive(_, let s): return Dictionary(s.expectedFiles.map { ($0, .auxiliary) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// Relative paths of the regular files under `folder` (two levels deep at most).
    static func listFiles(_ folder: URL) -> [String] {
        let fm = FileManager.default
        var out: [String] = []
        func walk(_ rel: String, depth: Int) {
            let dir = rel.isEmpty ? folder : folder.appendingPathComponent(rel)
            guard let names = try? fm.contentsOfDirectory(atPath: dir.path) else { return }
            for n in names.sorted() where !n.hasPrefix(".") {
                let r = rel.isEmpty ? n : rel + "/" + n
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: folder.appendingPathComponent(r).path, isDirectory: &isDir) else { continue }
                if isDir.boolValue { if depth < 2 { walk(r, depth: depth + 1) } } else { out.append(r) }
            }
        }
        walk("", depth: 0)
        return out
    }
}
