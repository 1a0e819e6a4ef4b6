import Foundation
import RunAnywhere
import RunAnywhereTestSupport
import Testing

@Suite("CLI transcribe", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests"))
struct TranscribeCLITests {
    @Test("Usage errors: missing file, archive options on a plain URL, unknown modality")
    func usage() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        #expect(try cli.run("transcribe", "m").status == 2)
        #expect(try cli.run("models", "register", "http://127.0.0.1:9/m.gguf", "--expected-file", "a").status == 2)
        let bad = try cli.run("models", "register", "http://127.0.0.1:9/m.tar", "--modality", "smell")
        #expect(bad.status == 2 && bad.stderr.contains("speech-recognition"))
    }

    @Test("register --archive --modality speech-recognition, then transcribe a LibriVox clip: reference words on stdout, timing on stderr",
          .enabled(if: SpeechTestData.ready, Comment(rawValue: SpeechTestData.skipReason)))
    func transcribe() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = try SpeechTestData.publishMoonshine(on: mirror, scratch: cli.home.url)
        var args = ["models", "register", url.absoluteString, "--archive", "--id", "moonshine", "--root-dir", "moonshine-base-en",
                    "--modality", "speech-recognition", "--framework", "onnx"]
        for f in SpeechTestData.moonshineFiles { args += ["--expected-file", f] }
        let reg = try cli.run(args)
        #expect(reg.status == 0, "\(reg.stderr)")
        let clip = try #require(try SpeechTestData.librivox().first { $0.wav.lastPathComponent.hasSuffix("0930.wav") })
        let out = try cli.run("transcribe", "moonshine", clip.wav.path, "--threads", "2")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(SpeechTestData.normalize(out.stdout) == clip.words, "\(out.stdout)")
        #expect(out.stderr.contains("real-time factor"))
        let json = try cli.run("transcribe", "moonshine", clip.wav.path, "--json")
        let object = try #require(cli.json(json) as? [String: Any])
        #expect((object["segments"] as? [[String: Any]])?.first?["startSeconds"] as? Double == 0)
        #expect(SpeechTestData.normalize(object["text"] as? String ?? "") == clip.words)
    }
}
