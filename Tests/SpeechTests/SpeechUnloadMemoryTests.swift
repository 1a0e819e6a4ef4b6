import Foundation
import RunAnywhere
import RunAnywhereTestSupport
import Testing

/// Resident memory around loading, using and unloading the Moonshine model, measured in a child process.
@Suite("Speech unload memory", .enabled(if: SpeechTestData.ready, Comment(rawValue: SpeechTestData.skipReason)))
struct SpeechUnloadMemoryTests {
    struct Report: Codable {
        var before: Int64
        var loaded: Int64
        var after: Int64
        var estimate: Int64
    }

    static let probe = "speech-unload-memory"

    @Test("unload gives the memory back: resident size ends at most 5% above its level before loading",
          .enabled(if: ChildProcessProbe.residentBytes() != nil, "needs Linux /proc"),
          .enabled(if: !ChildProcessProbe.isChild(probe), "this is the parent half"))
    func unloadFreesMemory() throws {
        let data = try #require(try ChildProcessProbe.run(suite: "SpeechUnloadMemoryProbe", name: Self.probe), "the child process failed")
        let r = try JSONDecoder().decode(Report.self, from: data)
        let grown = r.loaded - r.before
        #expect(grown > 60_000_000, "loading and using the model should grow the process (grew \(grown))")
        // (one-sided: a leak leaves the process above where it started; the trim at unload may also return heap that was
        // retained before the load, as a CI run did: 471 MB before, 446 MB after)
        #expect(r.after - r.before <= r.before / 20, "before \(r.before), loaded \(r.loaded), after unload \(r.after)")
        #expect(Double(r.estimate) >= Double(grown) * 0.9, "estimate \(r.estimate) vs growth \(grown)")
    }
}

@Suite("SpeechUnloadMemoryProbe")
struct SpeechUnloadMemoryProbe {
    @Test("measure around load and unload (child process only)",
          .enabled(if: ChildProcessProbe.isChild(SpeechUnloadMemoryTests.probe), "runs only as the child process of the speech unload memory test"))
    func measure() async throws {
        let dir = try TemporaryDirectory(prefix: "runanywhere-speech-unload")
        defer { dir.remove() }
        let mirror = try ModelMirror()
        defer { mirror.stop() }
        let url = try SpeechTestData.publishMoonshine(on: mirror, scratch: dir.url)
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url.appendingPathComponent("home"), environment: [:]))
        await sdk.models.registerBackend(SpeechTestData.backend())
        try await SpeechTestData.registerMoonshine(url, with: sdk)
        for try await _ in try await sdk.models.download(id: "moonshine-base-en") {}
        let clip = try #require(try SpeechTestData.librivox().first).wav
        let options = SttOptions(model: "moonshine-base-en", loadOptions: LoadOptions(threads: 2))
        // One full cycle first, as an app that has run a model before: the library's code and ONNX Runtime's
        // one-time state stay with the process. What must come back is the model itself.
        _ = try await sdk.stt.transcribe(audio: .file(clip), options: options)
        try await sdk.models.unload(id: "moonshine-base-en")
        try await Task.sleep(for: .milliseconds(300))   // the finished load task may hold the model a moment longer

        let before = ChildProcessProbe.residentBytes() ?? 0
        let loaded = try await sdk.models.load(id: "moonshine-base-en", options: LoadOptions(threads: 2))
        _ = try await sdk.stt.transcribe(audio: .file(clip), options: options)
        let during = ChildProcessProbe.residentBytes() ?? 0
        try await sdk.models.unload(id: "moonshine-base-en")
        try await Task.sleep(for: .milliseconds(300))
        let after = ChildProcessProbe.residentBytes() ?? 0
        try ChildProcessProbe.report(try JSONEncoder().encode(
            SpeechUnloadMemoryTests.Report(before: before, loaded: during, after: after, estimate: loaded.estimatedMemoryBytes)))
    }
}
