import Foundation
import RunAnywhere
@testable import RunAnywhereSherpa
import RunAnywhereTestSupport
import Testing

@Suite("Speech backend without models")
struct SpeechBackendTests {
    /// A downloaded-looking speech model whose folder holds `files` (empty files).
    static func model(_ files: [String], id: String = "speech", artifact: ModelArtifact? = nil) throws -> (ModelInfo, TemporaryDirectory) {
        let dir = try TemporaryDirectory(prefix: "runanywhere-layout")
        for f in files {
            let url = dir.url.appendingPathComponent(f)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data([1, 2, 3]).write(to: url)
        }
        let file = ModelFileDescriptor(url: URL(string: "https://example.com/\(id).tar.bz2")!)   // a literal, cannot fail
        let info = ModelInfo(id: id, name: id, category: .speechRecognition, framework: .onnx, format: .onnx,
                             artifact: artifact ?? .archive(file, structure: ArchiveStructure()), source: .registered,
                             isDownloaded: true, localPath: dir.url, primaryFilePath: dir.url.appendingPathComponent(files.first ?? "x"))
        return (info, dir)
    }

    @Test("The catalog's whisper archive: encoder, decoder, tokens by name; full precision before int8; English-only")
    func whisperLayout() throws {
        let (m, dir) = try Self.model(["tiny.en-decoder.int8.onnx", "tiny.en-decoder.onnx", "tiny.en-encoder.int8.onnx",
                                       "tiny.en-encoder.onnx", "tiny.en-tokens.txt", "test_wavs/0.wav"], id: "whisper-tiny-en")
        defer { dir.remove() }
        let layout = try SpeechModelLayout.resolve(m)
        #expect(layout.family == .whisper)
        #expect(layout.files["encoder"]?.lastPathComponent == "tiny.en-encoder.onnx")
        #expect(layout.files["decoder"]?.lastPathComponent == "tiny.en-decoder.onnx")
        #expect(layout.tokens == .text(dir.url.appendingPathComponent("tiny.en-tokens.txt")))
        #expect(layout.languages == ["en"])
    }

    @Test("Declared files win over name preferences (an archive that declares the int8 pair)")
    func declaredWins() throws {
        let file = ModelFileDescriptor(url: URL(string: "https://example.com/w.tar.bz2")!)   // a literal, cannot fail
        let structure = ArchiveStructure(expectedFiles: ["base-encoder.int8.onnx", "base-decoder.int8.onnx", "base-tokens.txt"])
        let (m, dir) = try Self.model(["base-encoder.int8.onnx", "base-decoder.int8.onnx", "base-encoder.onnx", "base-decoder.onnx", "base-tokens.txt"],
                                      id: "whisper-base", artifact: .archive(file, structure: structure))
        defer { dir.remove() }
        let layout = try SpeechModelLayout.resolve(m)
        #expect(layout.files["encoder"]?.lastPathComponent == "base-encoder.int8.onnx")
        #expect(layout.languages == nil)
    }

    @Test("Moonshine v2 with tokens.txt, or with moonshine-cpp's tokenizer.bin")
    func moonshineLayout() throws {
        let (m, dir) = try Self.model(["encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin"], id: "moonshine-base-en")
        defer { dir.remove() }
        let layout = try SpeechModelLayout.resolve(m)
        #expect(layout.family == .moonshine)
        #expect(layout.files["merged_decoder"]?.lastPathComponent == "decoder_model_merged.ort")
        #expect(layout.tokens == .moonshineBinary(dir.url.appendingPathComponent("tokenizer.bin")))
    }

    @Test("Unknown or incomplete layouts fail with .invalidModelFormat naming the missing file", arguments: [
        (["encoder_model.ort", "decoder_model_merged.ort"], "tokens"),
        (["decoder_model_merged.ort", "tokens.txt"], "encoder"),
        (["tiny-encoder.onnx", "tokens.txt"], "decoder"),
        (["preprocess.onnx", "encode.int8.onnx", "cached_decode.int8.onnx", "tokens.txt"], "uncached_decode.onnx"),
        (["model.bin", "README.md"], "encoder"),
    ])
    func badLayouts(_ files: [String], _ missing: String) throws {
        let (m, dir) = try Self.model(files)
        defer { dir.remove() }
        do {
            _ = try SpeechModelLayout.resolve(m)
            Issue.record("resolved \(files)")
        } catch let e as RunAnywhereError {
            #expect(e.code == .invalidModelFormat)
            #expect(e.message.contains(missing), "\(e.message)")
        }
    }

    @Test("tokenizer.bin: one- and two-byte lengths decode; truncated input is a typed error")
    func tokenizerBin() throws {
        let long = Data(repeating: 0x61, count: 200)
        let bin = Data([3]) + Data("<s>".utf8) + Data([0x80 + (200 % 128), 200 / 128]) + long + Data([0])
        let tokens = try MoonshineTokenizer.tokens(bin, name: "t")
        #expect(tokens == [Data("<s>".utf8), long, Data()])
        #expect(MoonshineTokenizer.tokensFile(tokens).hasPrefix("PHM+ 0\n"))
        #expect(throws: RunAnywhereError.self) { try MoonshineTokenizer.tokens(Data([5, 0x41]), name: "t") }
        #expect(throws: RunAnywhereError.self) { try MoonshineTokenizer.tokens(Data([0x85]), name: "t") }
    }

    @Test("Without the library, load fails with .backendUnavailable saying how to install it")
    func missingLibrary() throws {
        let (m, dir) = try Self.model(["encoder_model.ort", "decoder_model_merged.ort", "tokens.txt"])
        defer { dir.remove() }
        let backend = SherpaOnnxBackend(libraryPath: dir.url.appendingPathComponent("nowhere").path, environment: [:])
        do {
            _ = try backend.load(BackendLoadRequest(model: m, threads: 1))
            Issue.record("loaded without a library")
        } catch let e as RunAnywhereError {
            #expect(e.code == .backendUnavailable)
            #expect(e.message.contains("scripts/install-speech.sh") && e.message.contains("RUNANYWHERE_SHERPA_ONNX_LIB"), "\(e.message)")
        }
    }

    @Test("A folder in RUNANYWHERE_SHERPA_ONNX_LIB means the library inside it; an explicit path wins")
    func searchOrder() {
        let env = ["RUNANYWHERE_SHERPA_ONNX_LIB": "/"]
        #expect(SherpaOnnxLibrary.candidatePaths(explicitPath: nil, environment: env) == ["/" + SherpaOnnxLibrary.fileName])
        #expect(SherpaOnnxLibrary.candidatePaths(explicitPath: "/x/lib.so", environment: env) == ["/x/lib.so"])
        #expect(SherpaOnnxLibrary.candidatePaths(explicitPath: nil, environment: [:]).last == SherpaOnnxLibrary.fileName)
    }

    @Test("contextLength is rejected; the estimate is the files plus working memory; other models are not served")
    func estimateAndServe() throws {
        let (m, dir) = try Self.model(["encoder_model.ort", "decoder_model_merged.ort", "tokens.txt"])
        defer { dir.remove() }
        let backend = SherpaOnnxBackend(environment: [:])
        #expect(throws: RunAnywhereError.self) { try backend.estimate(m, contextLength: 448) }
        let e = try backend.estimate(m, contextLength: nil)
        #expect(e.weightsBytes == 9 && e.totalBytes == 9 + SherpaOnnxBackend.workingBytes(9))
        #expect(backend.cannotServe(m) == nil)
        var llm = m
        llm.category = .language
        #expect(backend.cannotServe(llm) != nil)
    }

    @Test("Long audio without a VAD model is cut at the quietest point, contiguously")
    func energyCuts() {
        let rate = 16_000
        var samples = [Float](repeating: 0.5, count: rate * 50)
        for i in (rate * 17)..<(rate * 17 + 800) { samples[i] = 0 }   // a pause at 17 s
        let seg = SpeechSegmenter(sampleRate: rate, maxGroupSeconds: 20)
        let spans = samples.withUnsafeBufferPointer { seg.energySpans(in: 0..<$0.count, maxLen: 20 * rate, samples: $0) }
        #expect(spans.first?.lowerBound == 0 && spans.last?.upperBound == samples.count)
        #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(spans.allSatisfy { $0.count <= 20 * rate })
        #expect(abs(spans[0].upperBound - (rate * 17 + 400)) <= 480)
    }

    @Test("VAD groups share the silence between them and never overlap")
    func grouping() {
        let rate = 16_000
        let samples = [Float](repeating: 0, count: rate * 60)
        let seg = SpeechSegmenter(sampleRate: rate, maxGroupSeconds: 20)
        let speech = [rate * 1..<rate * 8, rate * 9..<rate * 15, rate * 22..<rate * 30, rate * 30 + 100..<rate * 31]
        let groups = samples.withUnsafeBufferPointer { seg.group(speech, samples: $0) }
        #expect(groups.count == 2)
        #expect(groups[0].lowerBound == rate / 2 && groups[0].upperBound == rate * 15 + rate / 2)
        #expect(groups[1].lowerBound == rate * 22 - rate / 2)
        #expect(zip(groups, groups.dropFirst()).allSatisfy { $0.upperBound <= $1.lowerBound })
    }
}
