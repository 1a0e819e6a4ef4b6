import Foundation
import RunAnywhereCore

/// Speech recognition through sherpa-onnx's C API (which bundles ONNX Runtime), opened at run time.
///
/// Serves `.speechRecognition` models packaged for `.onnx`: Whisper (encoder, decoder, tokens) and
/// Moonshine (v2: `encoder_model.ort` + `decoder_model_merged.ort` + `tokens.txt` or `tokenizer.bin`;
/// v1: preprocess, encode, uncached and cached decoders). `import RunAnywhere` registers it by default
/// (``RunAnywhere/defaultBackends()``); its library is opened only when a speech model loads.
public struct SherpaOnnxBackend: InferenceBackend {
    /// The backend's name.
    public let id = BackendID.onnx
    let libraryPath: String?
    let vadModelPath: String?
    let environment: [String: String]

    /// Creates the backend. Nothing is opened until a model loads.
    /// - Parameters:
    ///   - libraryPath: `libsherpa-onnx-c-api` or its folder; nil searches (see the README's speech section).
    ///   - vadModelPath: `silero_vad.onnx` used to cut long audio at silences; nil searches
    ///     `$RUNANYWHERE_SILERO_VAD`, the model's folder, then `.runanywhere-deps/silero-vad/`.
    ///   - environment: Where `RUNANYWHERE_SHERPA_ONNX_LIB` and `RUNANYWHERE_SILERO_VAD` are read.
    public init(libraryPath: String? = nil, vadModelPath: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.libraryPath = libraryPath
        self.vadModelPath = vadModelPath
        self.environment = environment
    }

    /// Nil for ONNX speech recognition models.
    public func cannotServe(_ model: ModelInfo) -> String? {
        guard model.framework == .onnx else { return "it runs ONNX (sherpa-onnx) models, not \(model.framework.rawValue)" }
        guard model.category == .speechRecognition else { return "it serves speech recognition models, not \(model.category.rawValue)" }
        return nil
    }

    /// The model files' size plus ONNX Runtime's working memory; `contextLength` does not apply to speech.
    public func estimate(_ model: ModelInfo, contextLength: Int?) throws -> BackendMemoryEstimate {
        if let contextLength {
            throw RunAnywhereError(.invalidConfiguration, "LoadOptions.contextLength (\(contextLength)) does not apply to speech recognition model '\(model.id)'; leave it nil.", modelId: model.id)
        }
        let layout = try SpeechModelLayout.resolve(model)
        let weights = layout.totalBytes
        return BackendMemoryEstimate(totalBytes: weights + Self.workingBytes(weights), weightsBytes: weights,
                                     workingBytes: Self.workingBytes(weights), contextLength: 0, maximumContextLength: nil)
    }

    /// ONNX Runtime's arenas and activations while decoding: measured at ~8.5× the model files for Moonshine base
    /// (63 MB of files; the process grows ~600 MB over a transcription, ours and sherpa-onnx-offline alike,
    /// whose peak RSS is 590 MB), barely depending on the audio's length. Not measured for Whisper.
    static func workingBytes(_ weights: Int64) -> Int64 { max(64 << 20, weights * 9) }

    /// Opens the library (`.backendUnavailable` with install instructions when it is absent) and creates the recognizer.
    public func load(_ request: BackendLoadRequest) throws -> any BackendModel {
        let model = request.model
        let layout = try SpeechModelLayout.resolve(model)
        let library = try SherpaOnnxLibrary.open(explicitPath: libraryPath, environment: environment)
        let thread = SerialThread(name: "runanywhere-sherpa")
        let vadPath = vadModel(model)
        let (recognizer, vad) = try thread.sync {
            let recognizer = try SherpaRecognizer(library: library, layout: layout, threads: request.threads, language: nil, modelId: model.id)
            let vad = try vadPath.map {
                try SherpaVAD(library: library, model: $0, sampleRate: recognizer.sampleRate, maxSpeechSeconds: layout.windowSeconds * 2 / 3)
            }
            return (recognizer, vad)
        }
        let weights = layout.totalBytes
        return SherpaSpeechModel(modelId: model.id, layout: layout, threads: request.threads, thread: thread, recognizer: recognizer,
                                 vad: vad, memoryBytes: weights + Self.workingBytes(weights))
    }

    /// The Silero VAD model to use, if one is found.
    func vadModel(_ model: ModelInfo) -> URL? {
        if let vadModelPath { return URL(fileURLWithPath: vadModelPath) }
        if let env = environment["RUNANYWHERE_SILERO_VAD"], !env.isEmpty { return URL(fileURLWithPath: env) }
        if let folder = model.localPath {
            let inModel = folder.appendingPathComponent("silero_vad.onnx")
            if FileManager.default.fileExists(atPath: inModel.path) { return inModel }
        }
        return SherpaOnnxLibrary.projectLocalFiles(".runanywhere-deps/silero-vad/silero_vad.onnx").first.map(URL.init(fileURLWithPath:))
    }
}

/// A speech model loaded in sherpa-onnx.
/// Every call into sherpa-onnx (and the final destroy) runs on the model's own ``SerialThread``.
final class SherpaSpeechModel: SpeechRecognitionModel, @unchecked Sendable {   // called serially (residency lock)
    let modelId: String
    let layout: SpeechModelLayout
    let threads: Int
    private let thread: SerialThread
    private var recognizer: SherpaRecognizer?
    private var recognizerLanguage: String?
    private var vad: SherpaVAD?
    let memoryBytes: Int64
    let sampleRate: Int

    init(modelId: String, layout: SpeechModelLayout, threads: Int, thread: SerialThread, recognizer: SherpaRecognizer,
         vad: SherpaVAD?, memoryBytes: Int64) {
        self.modelId = modelId
        self.layout = layout
        self.threads = threads
        self.thread = thread
        self.recognizer = recognizer
        self.sampleRate = recognizer.sampleRate
        self.vad = vad
        self.memoryBytes = memoryBytes
    }

    deinit {
        // Destroyed on the thread that created them, so their memory goes back from one arena.
        _ = try? thread.sync {
            recognizer = nil
            vad = nil
        }
    }

    func generate(_ request: BackendGenerationRequest, onText: (String) -> Void, shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        throw RunAnywhereError(.invalidConfiguration, "Model '\(modelId)' is a speech recognition model; use RunAnywhere.stt.transcribe, not llm.generate.", modelId: modelId)
    }

    func transcribe(_ request: BackendTranscriptionRequest, onSegment: (TranscriptionSegment) -> Void, shouldContinue: () -> Bool) throws {
        try thread.sync { try transcribeHere(request, onSegment: onSegment, shouldContinue: shouldContinue) }
    }

    private func transcribeHere(_ request: BackendTranscriptionRequest, onSegment: (TranscriptionSegment) -> Void, shouldContinue: () -> Bool) throws {
        try useLanguage(request.language)
        guard let recognizer else { throw RunAnywhereError(.modelNotLoaded, "Model '\(modelId)' was unloaded.", modelId: modelId) }
        let rate = Double(sampleRate)
        try request.samples.withUnsafeBufferPointer { all in
            let seconds = Double(all.count) / rate
            let spans: [Range<Int>]
            if seconds <= layout.windowSeconds {
                spans = all.isEmpty ? [] : [0..<all.count]
            } else {
                let segmenter = SpeechSegmenter(sampleRate: sampleRate, maxGroupSeconds: layout.windowSeconds * 2 / 3)
                spans = vad.map { segmenter.spans(vad: $0, samples: all) }
                    ?? segmenter.energySpans(in: 0..<all.count, maxLen: Int(layout.windowSeconds * 2 / 3 * rate), samples: all)
            }
            for span in spans {
                guard shouldContinue() else { throw RunAnywhereError.cancelled("Transcription", modelId: modelId) }
                let text = try recognizer.recognize(UnsafeBufferPointer(rebasing: all[span]))
                guard !text.isEmpty else { continue }
                onSegment(TranscriptionSegment(text: text, startSeconds: Double(span.lowerBound) / rate, endSeconds: Double(span.upperBound) / rate))
            }
        }
    }

    /// Checks the language against the model; a multilingual Whisper gets a recognizer for that language.
    private func useLanguage(_ language: String?) throws {
        guard let language = language?.lowercased() else { return }
        let code = String(language.prefix { $0 != "-" })
        if let known = layout.languages {
            guard known.contains(code) else {
                throw RunAnywhereError(.invalidConfiguration, "Model '\(modelId)' recognises only \(known.sorted().joined(separator: ", ")); SttOptions.language is '\(language)'.", modelId: modelId)
            }
            return
        }
        guard layout.family == .whisper, code != recognizerLanguage else { return }
        guard let library = recognizer?.library else { return }
        recognizer = nil   // the old one goes before the new one is made
        recognizer = try SherpaRecognizer(library: library, layout: layout, threads: threads, language: code, modelId: modelId)
        recognizerLanguage = code
    }
}
