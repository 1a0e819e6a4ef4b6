import Foundation
import RunAnywhere
import RunAnywhereSherpa
import RunAnywhereTestSupport
import Testing

@Suite("Speech end to end (Moonshine base, sherpa-onnx)", .serialized,
       .enabled(if: SpeechTestData.ready, Comment(rawValue: SpeechTestData.skipReason)))
struct SpeechEndToEndTests {
    /// An SDK over a fresh storage root with the sherpa-onnx backend, and the Moonshine model registered from a
    /// loopback mirror as a tar archive.
    static func setUp() async throws -> (sdk: RunAnywhereSDK, mirror: ModelMirror, dir: TemporaryDirectory) {
        let dir = try TemporaryDirectory(prefix: "runanywhere-speech")
        let mirror = try ModelMirror()
        let url = try SpeechTestData.publishMoonshine(on: mirror, scratch: dir.url)
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url.appendingPathComponent("home"), environment: [:]))
        await sdk.models.registerBackend(SpeechTestData.backend())
        try await SpeechTestData.registerMoonshine(url, with: sdk)
        return (sdk, mirror, dir)
    }

    @Test("A LibriVox clip transcribes to the reference words; load/state/unload/delete work; threads honoured")
    func libriVoxClip() async throws {
        let (sdk, mirror, dir) = try await Self.setUp()
        defer { mirror.stop(); dir.remove() }
        let clips = try SpeechTestData.librivox()
        let clip = try #require(clips.first { $0.wav.lastPathComponent.hasSuffix("0880.wav") })
        let options = SttOptions(model: "moonshine-base-en", language: "en", loadOptions: LoadOptions(threads: 2))
        let result = try await sdk.stt.transcribe(audio: .file(clip.wav), options: options)
        #expect(SpeechTestData.normalize(result.text) == clip.words, "\(result.text)")
        #expect(abs(result.audioDurationSeconds - 2.99) < 0.01)
        #expect(result.processingSeconds > 0 && result.realTimeFactor == result.processingSeconds / result.audioDurationSeconds)
        #expect(result.segments.count == 1 && result.segments[0].startSeconds == 0 && abs(result.segments[0].endSeconds - 2.99) < 0.01)
        #expect(result.backend == .onnx)

        let state = await sdk.models.state()
        let loaded = try #require(state.loaded.first { $0.id == "moonshine-base-en" })
        #expect(loaded.threads == 2 && loaded.category == .speechRecognition && loaded.memoryBytes > 60_000_000)

        // Samples in memory at another rate give the same words.
        let decoded = try WAVReader.read(clip.wav)
        let at8k = AudioResampler.resample(decoded.samples, from: 16_000, to: 22_050)
        let fromSamples = try await sdk.stt.transcribe(audio: .samples(at8k, sampleRate: 22_050), options: SttOptions(model: "moonshine-base-en"))
        #expect(SpeechTestData.normalize(fromSamples.text) == clip.words, "\(fromSamples.text)")

        // 32-bit float WAV files (pytest-audioeval's English samples) with their reference text.
        let root = try #require(SpeechTestData.root)
        for name in ["hello_world", "quick_brown_fox"] {
            let dir = root.appendingPathComponent("audioeval/en")
            let reference = try String(contentsOf: dir.appendingPathComponent(name + ".txt"), encoding: .utf8)
            let r = try await sdk.stt.transcribe(audio: .file(dir.appendingPathComponent(name + ".wav")), options: SttOptions(model: "moonshine-base-en"))
            #expect(SpeechTestData.normalize(r.text) == SpeechTestData.normalize(reference), "\(name): \(r.text)")
        }

        #expect(await errorCode { try await sdk.stt.transcribe(audio: .file(clip.wav), options: SttOptions(model: "moonshine-base-en", language: "fr")) } == .invalidConfiguration)
        #expect(await errorCode { try await sdk.models.load(id: "moonshine-base-en", options: LoadOptions(contextLength: 512)) } == .invalidConfiguration)
        try await sdk.models.unload(id: "moonshine-base-en")
        #expect(await sdk.models.state().loaded.isEmpty)
        try await sdk.models.load(id: "moonshine-base-en", options: LoadOptions(threads: 1))
        #expect(await sdk.models.state().loaded.first?.threads == 1)
        try await sdk.models.delete(id: "moonshine-base-en")
        #expect(await sdk.models.state().loaded.isEmpty)
        #expect(await sdk.models.get(id: "moonshine-base-en")?.isDownloaded == false)
    }

    @Test("Long audio (five clips and 2 s pauses, 35 s) is cut at silences: every clip's words once, in order, streamed by segment")
    func longAudio() async throws {
        let (sdk, mirror, dir) = try await Self.setUp()
        defer { mirror.stop(); dir.remove() }
        let clips = try SpeechTestData.librivox()
        var samples: [Float] = []
        var reference: [String] = []
        var perClip: [String] = []
        let silence = [Float](repeating: 0, count: 32_000)   // 2 s between clips
        for clip in clips {
            samples += try WAVReader.read(clip.wav).samples + silence
            reference += clip.words
            let alone = try await sdk.stt.transcribe(audio: .file(clip.wav), options: SttOptions(model: "moonshine-base-en"))
            perClip += SpeechTestData.normalize(alone.text)
        }
        #expect(Double(samples.count) / 16_000 > 30)
        var segments: [TranscriptionSegment] = []
        var final: TranscriptionResult?
        for try await event in sdk.stt.transcribeStream(audio: .samples(samples, sampleRate: 16_000), options: SttOptions(model: "moonshine-base-en")) {
            switch event {
            case .segment(let s): segments.append(s)
            case .completed(let r): final = r
            }
        }
        let result = try #require(final)
        #expect(segments.count >= 2 && result.segments == segments)
        #expect(zip(segments, segments.dropFirst()).allSatisfy { $0.endSeconds <= $1.startSeconds })
        let words = SpeechTestData.normalize(result.text)
        #expect(words == perClip, "long: \(words.joined(separator: " "))\nclips: \(perClip.joined(separator: " "))")
        #expect(SpeechTestData.wer(reference, words) <= SpeechTestData.wer(reference, perClip))
    }
}
