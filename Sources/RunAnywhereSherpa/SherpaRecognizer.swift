import CSherpaOnnx
import Foundation
import RunAnywhereCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// C strings that live until this object goes (for configuration structs the library copies at creation).
final class CStrings {
    private var owned: [UnsafeMutablePointer<CChar>] = []
    /// A C copy of `s`, or nil for nil.
    func callAsFunction(_ s: String?) -> UnsafePointer<CChar>? {
        guard let s, let p = strdup(s) else { return nil }
        owned.append(p)
        return UnsafePointer(p)
    }
    deinit { owned.forEach { free($0) } }
}

/// One sherpa-onnx offline recognizer: decodes a stretch of audio to text.
final class SherpaRecognizer: @unchecked Sendable {   // used serially (the residency lock), freed once
    let library: SherpaOnnxLibrary
    let handle: UnsafeRawPointer
    let sampleRate = 16_000

    /// Creates the recognizer for a model layout.
    /// - Throws: `.invalidModelFormat` when the library refuses the files (it logs why on stderr).
    init(library: SherpaOnnxLibrary, layout: SpeechModelLayout, threads: Int, language: String?, modelId: String) throws {
        self.library = library
        var tokensTemp: URL?
        defer { if let t = tokensTemp { try? FileManager.default.removeItem(at: t.deletingLastPathComponent()) } }
        let tokens: URL
        switch layout.tokens {
        case .text(let u): tokens = u
        case .moonshineBinary(let u):
            tokens = try MoonshineTokenizer.writeTokensFile(from: u, modelId: modelId)
            tokensTemp = tokens
        }
        let c = CStrings()
        var config = ra_so_offline_recognizer_config()
        config.features = ra_so_features(sample_rate: Int32(sampleRate), feature_dim: 80)
        config.decoding_method = c("greedy_search")
        config.model.tokens = c(tokens.path)
        config.model.num_threads = Int32(threads)
        config.model.provider = c("cpu")
        let path = { (role: String) in c(layout.files[role]?.path) }
        switch layout.family {
        case .whisper:
            config.model.whisper.encoder = path("encoder")
            config.model.whisper.decoder = path("decoder")
            config.model.whisper.language = c(language ?? "")
            config.model.whisper.task = c("transcribe")
            config.model.whisper.tail_paddings = -1
        case .moonshine:
            config.model.moonshine.encoder = path("encoder")
            config.model.moonshine.merged_decoder = path("merged_decoder")
        case .moonshineV1:
            config.model.moonshine.preprocessor = path("preprocessor")
            config.model.moonshine.encoder = path("encoder")
            config.model.moonshine.uncached_decoder = path("uncached_decoder")
            config.model.moonshine.cached_decoder = path("cached_decoder")
        }
        guard let created = withUnsafePointer(to: &config, { library.createRecognizer($0) }) else {
            throw RunAnywhereError(.invalidModelFormat,
                "sherpa-onnx \(library.version) could not create a \(layout.family.rawValue) recognizer from the files of '\(modelId)' (\(layout.files.values.map(\.lastPathComponent).sorted().joined(separator: ", ")), \(layout.tokens.url.lastPathComponent)); its reason is on stderr.",
                modelId: modelId)
        }
        handle = created
        withExtendedLifetime(c) {}
    }

    deinit {
        library.destroyRecognizer(handle)
        returnFreedHeap()
    }

    /// The text of `samples` (16 kHz mono), trimmed.
    func recognize(_ samples: UnsafeBufferPointer<Float>) throws -> String {
        guard let base = samples.baseAddress, samples.count > 0 else { return "" }
        guard let stream = library.createStream(handle) else {
            throw RunAnywhereError(.generationFailed, "sherpa-onnx could not create a decoding stream.")
        }
        defer { library.destroyStream(stream) }
        library.acceptWaveform(stream, Int32(sampleRate), base, Int32(clamping: samples.count))
        library.decode(handle, stream)
        guard let result = library.result(stream) else { return "" }
        defer { library.destroyResult(result) }
        let text = result.pointee.text.map { String(cString: $0) } ?? ""
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Hands the heap pages ONNX Runtime just freed back to the system. Its sessions live on the malloc heap
/// (~100 MB for Moonshine base), and freed chunks in the middle of the heap stay resident until trimmed;
/// the SDK trims on unload, but that can run before the last reference to the model goes.
func returnFreedHeap() {
    _ = ra_so_trim_heap()
}
