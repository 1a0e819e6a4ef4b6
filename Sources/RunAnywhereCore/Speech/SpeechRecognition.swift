import Foundation

/// Audio to transcribe: a WAV file, or samples already in memory.
public enum AudioInput: Sendable, Hashable {
    /// A WAV file (PCM 16-bit or 32-bit float, mono or stereo, any sample rate).
    case file(URL)
    /// Mono samples in -1...1 at `sampleRate` Hz (resampled to what the model needs).
    case samples([Float], sampleRate: Int)
}

/// Options of one transcription.
public struct SttOptions: Sendable, Hashable {
    /// The speech model to use (downloaded and loaded on demand); nil uses the most recently used resident one.
    public var model: String?
    /// Spoken language as an ISO 639-1 code ("en"), for multilingual models; nil lets the model decide.
    public var language: String?
    /// Options for loading the model when this call loads it (threads; `contextLength` is rejected for speech).
    public var loadOptions: LoadOptions?

    /// Creates options.
    public init(model: String? = nil, language: String? = nil, loadOptions: LoadOptions? = nil) {
        self.model = model
        self.language = language
        self.loadOptions = loadOptions
    }

    func validate() throws {
        if let language, !(2...8).contains(language.count) || !language.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }) {
            throw RunAnywhereError(.invalidConfiguration, "SttOptions.language must be a language code such as \"en\" (got '\(language.prefix(40))').", modelId: model)
        }
    }
}

/// A stretch of audio and the words in it.
public struct TranscriptionSegment: Sendable, Hashable, Codable {
    /// The words (trimmed).
    public var text: String
    /// Where the stretch starts in the audio, seconds.
    public var startSeconds: Double
    /// Where it ends, seconds.
    public var endSeconds: Double

    /// Creates a segment.
    public init(text: String, startSeconds: Double, endSeconds: Double) {
        self.text = text
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
}

/// The outcome of a transcription.
public struct TranscriptionResult: Sendable, Hashable, Codable {
    /// All the words, segments joined by a space.
    public var text: String
    /// The segments in order: one for short audio, one per stretch of speech for long audio.
    public var segments: [TranscriptionSegment]
    /// The model that transcribed.
    public var modelId: String
    /// The backend that ran it.
    public var backend: BackendID
    /// Length of the audio, seconds.
    public var audioDurationSeconds: Double
    /// Time spent decoding the audio file and recognising it (not downloading or loading the model), seconds.
    public var processingSeconds: Double
    /// `processingSeconds / audioDurationSeconds`: below 1 is faster than real time.
    public var realTimeFactor: Double
}

/// What `transcribeStream` yields: each segment when it is done, then the whole result.
public enum TranscriptionEvent: Sendable, Hashable {
    /// One segment, as soon as it is recognised.
    case segment(TranscriptionSegment)
    /// The end: every segment and the timing.
    case completed(TranscriptionResult)
}

/// What a speech model is asked to transcribe.
public struct BackendTranscriptionRequest: Sendable {
    /// Mono samples in -1...1 at the model's ``SpeechRecognitionModel/sampleRate``.
    public var samples: [Float]
    /// The language hint, when given.
    public var language: String?

    /// Creates a request.
    public init(samples: [Float], language: String?) {
        self.samples = samples
        self.language = language
    }
}

/// A loaded model that turns speech into text (a capability a ``BackendModel`` may have).
public protocol SpeechRecognitionModel: BackendModel {
    /// The sample rate the model takes, Hz; audio is resampled to it before ``transcribe(_:onSegment:shouldContinue:)``.
    var sampleRate: Int { get }
    /// Transcribes the samples, reporting each segment as it is done, in order. Blocking; called serially.
    /// - Parameter shouldContinue: Polled between segments; false stops with `.cancelled`.
    func transcribe(_ request: BackendTranscriptionRequest, onSegment: (TranscriptionSegment) -> Void,
                    shouldContinue: () -> Bool) throws
}

extension BackendLoadRequest {
    /// Creates a load request (for backends' own tests and tools; the SDK makes these when it plans a load).
    public init(model: ModelInfo, threads: Int, contextLength: Int = 0) {
        self.model = model
        self.contextLength = contextLength
        self.threads = threads
    }
}
