import Foundation
import Synchronization

/// `RunAnywhere.stt`: speech to text.
///
/// ```swift
/// let result = try await RunAnywhere.stt.transcribe(audio: .file(url), options: SttOptions(model: "whisper-tiny-en"))
/// print(result.text, result.realTimeFactor)
/// ```
/// Speech models run on a backend that serves `.speechRecognition` models (the sherpa-onnx backend,
/// `RunAnywhereSherpa`); without one registered, loading a speech model fails with `.backendUnavailable`.
public final class STTService: Sendable {
    let models: ModelManager

    init(models: ModelManager) {
        self.models = models
    }

    /// Transcribes audio, loading (and first downloading) `options.model` when needed.
    /// - Throws: `.invalidConfiguration` for unreadable audio or bad options, `.invalidModelFormat` for a malformed
    ///   WAV file, `.modelNotLoaded` when no model is named and none is resident, the errors of
    ///   `models.download(id:)` and `models.load(id:options:)`, `.cancelled` when the calling task is cancelled.
    public func transcribe(audio: AudioInput, options: SttOptions = SttOptions()) async throws -> TranscriptionResult {
        var final: TranscriptionResult?
        for try await event in transcribeStream(audio: audio, options: options) {
            if case .completed(let r) = event { final = r }
        }
        guard let final else {
            throw RunAnywhereError(.generationFailed, "Transcription ended without a result.", modelId: options.model)
        }
        return final
    }

    /// Like ``transcribe(audio:options:)``, yielding each segment when it is done and ending with `.completed`.
    /// Long audio is cut at silences, so segments arrive while the rest is still being recognised.
    /// Cancelling the consuming task (or dropping the stream) stops between two segments.
    public func transcribeStream(audio: AudioInput, options: SttOptions = SttOptions()) -> AsyncThrowingStream<TranscriptionEvent, any Error> {
        .serviceCall("Transcription", modelId: options.model) { continuation in
            try await self.run(audio: audio, options: options, continuation: continuation)
        }
    }

    private func run(audio: AudioInput, options: SttOptions, continuation: AsyncThrowingStream<TranscriptionEvent, any Error>.Continuation) async throws {
        try options.validate()
        let id = try await resolveModel(options)
        try Task.checkCancellation()
        let segments = Mutex<[TranscriptionSegment]>([])
        let timing = Mutex<(audio: Double, processing: Double)>((0, 0))
        let info = try await models.residency.withLease(id) { handle, info in
            guard let model = handle as? any SpeechRecognitionModel else {
                throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' is resident but cannot transcribe speech (it is not a speech recognition model).", modelId: id)
            }
            try await BlockingWork.run(name: "runanywhere-transcribe") { flag in
                let start = monotonicSeconds()
                let samples = try AudioDecoding.monoSamples(audio, sampleRate: model.sampleRate)
                let request = BackendTranscriptionRequest(samples: samples, language: options.language)
                try model.transcribe(request, onSegment: { segment in
                    segments.withLock { $0.append(segment) }
                    continuation.yield(.segment(segment))
                }, shouldContinue: { !flag.isCancelled })
                timing.withLock { $0 = (Double(samples.count) / Double(model.sampleRate), monotonicSeconds() - start) }
            }
            return info
        }
        let done = segments.withLock { $0 }
        let (duration, processing) = timing.withLock { $0 }
        let result = TranscriptionResult(
            text: done.map(\.text).filter { !$0.isEmpty }.joined(separator: " "), segments: done, modelId: id,
            backend: info.backend, audioDurationSeconds: duration, processingSeconds: processing,
            realTimeFactor: duration > 0 ? processing / duration : 0)
        continuation.yield(.completed(result))
    }

    /// The model this call uses, loaded: the one named (downloaded and loaded on demand) or the resident one.
    private func resolveModel(_ options: SttOptions) async throws -> String {
        try await models.residentModel(options.model, loadOptions: options.loadOptions, need: .init(
            categories: [.speechRecognition], fallback: .speechRecognition, kind: "speech recognition model", optionsField: "SttOptions(model:)"))
    }
}
