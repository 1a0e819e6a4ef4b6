import Foundation
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport

/// A vision model's memory at SmolVLM-256M's shapes, measured in a child process (see ``ChildProcessProbe``): the
/// estimate made before loading against the growth of resident memory once both files are loaded, an image encoded
/// and the context filled; and what `unload` gives back.
@Suite("Vision memory")
struct VisionMemoryTests {
    struct Report: Codable {
        var before: Int64
        var loaded: Int64
        /// The most resident memory while the model was loaded, an image encoded and the context filled.
        var peak: Int64
        var after: Int64
        var estimate: Int64
        var engineBytes: Int64
        var promptTokens: Int
        var outputTokens: Int
    }

    static let probe = "vision-memory"

    /// The SmolVLM-256M-shaped random-weight pair (bench/vlm/make_smolvlm.py --shape smolvlm-256m --type q8_0), made by
    /// .ci/run into a cache and named by RUNANYWHERE_SMOLVLM_SHAPED (a folder holding both files).
    static var shapedDirectory: URL? {
        guard let dir = ProcessInfo.processInfo.environment["RUNANYWHERE_SMOLVLM_SHAPED"],
              FileManager.default.fileExists(atPath: dir + "/mmproj-smolvlm-smolvlm-256m-q8_0.gguf") else { return nil }
        return URL(fileURLWithPath: dir)
    }

    @Test("estimate within 10% of the resident growth (both files, an image, a full context); unload gives it back within 5%",
          .enabled(if: ChildProcessProbe.residentBytes() != nil, "needs Linux /proc"),
          .enabled(if: shapedDirectory != nil, "set RUNANYWHERE_SMOLVLM_SHAPED to a folder with the SmolVLM-256M-shaped pair (.ci/run makes it)"),
          .enabled(if: !ChildProcessProbe.isChild(probe), "this is the parent half"))
    func estimateAndUnload() throws {
        let data = try #require(try ChildProcessProbe.run(suite: "VisionMemoryProbe", name: Self.probe), "the child process failed")
        let r = try JSONDecoder().decode(Report.self, from: data)
        // The estimate is what must be free before loading: the peak, reached while an image is encoded after the context
        // has been filled once (the encoder's scratch comes on top of everything else then, and is given back after).
        let grown = r.peak - r.before
        let mb = { (b: Int64) in String(format: "%.1f MB", Double(b) / 1e6) }
        print("vision-memory: start \(mb(r.before)); estimate \(mb(r.estimate)), peak resident growth \(mb(grown)) (\(String(format: "%+.1f%%", 100 * Double(r.estimate - grown) / Double(grown)))), growth once generated \(mb(r.loaded - r.before)), engine \(mb(r.engineBytes)); after unload \(mb(r.after - r.before)) above the start; \(r.promptTokens) prompt + \(r.outputTokens) generated tokens")
        #expect(grown > 250_000_000, "loading and using both files should grow the process (grew \(grown))")
        #expect(abs(Double(r.estimate - grown)) <= Double(grown) * 0.10, "estimate \(r.estimate) vs peak growth \(grown)")
        // The issue's target: unload gives back all but 5% of what the model took. (Measured after a first cycle of the
        // same work: with llama.cpp installed, its libraries' first use adds ~20 MB once, which is not the model's.)
        #expect(abs(r.after - r.before) <= grown / 20, "before \(r.before), loaded \(r.loaded), after unload \(r.after)")
    }
}

@Suite("VisionMemoryProbe")
struct VisionMemoryProbe {
    @Test("measure a vision model around load and unload (child process only)",
          .enabled(if: ChildProcessProbe.isChild(VisionMemoryTests.probe), "runs only as the child process of the vision memory test"))
    func measure() async throws {
        let source = try #require(VisionMemoryTests.shapedDirectory)
        let dir = try TemporaryDirectory(prefix: "runanywhere-vision-memory")
        defer { dir.remove() }
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url, environment: [:]))
        // The files as a finished download of the catalog's smolvlm-256m leaves them (copied, not fetched).
        let folder = StorageLayout(root: dir.url).modelDirectory(id: "smolvlm-256m", framework: .llamaCpp)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (file, name) in [("smolvlm-smolvlm-256m-q8_0.gguf", "SmolVLM-256M-Instruct-Q8_0.gguf"),
                             ("mmproj-smolvlm-smolvlm-256m-q8_0.gguf", "mmproj-SmolVLM-256M-Instruct-Q8_0.gguf")] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(file), to: folder.appendingPathComponent(name))
        }
        await sdk.models.refresh(rescanLocal: true)
        #expect(await sdk.models.get(id: "smolvlm-256m")?.isDownloaded == true)
        let photo = VlmImage(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../bench/vlm/tiny/photo.jpg").standardized)
        let load = LoadOptions(contextLength: 1024)
        // The worst case: an image after a conversation has filled the context once, so that the text model's weights,
        // the whole KV cache and its buffers are resident when the encoder's scratch comes on top. Then 698 prompt
        // tokens (640 of them the image's) and generation until the 1,024-token context is full again.
        func cycle(measure: Bool) async throws -> (before: Int64, loaded: LoadedModel, during: Int64, peak: Int64, after: Int64, result: GenerationResult) {
            let before = ChildProcessProbe.residentBytes() ?? 0
            if measure { #expect(ChildProcessProbe.resetPeakResident(), "/proc/self/clear_refs is needed to measure the peak") }
            let loaded = try await sdk.models.load(id: "smolvlm-256m", options: load)
            let text = try await sdk.vlm.generate(prompt: "Hello", images: [], options: LlmOptions(model: "smolvlm-256m", maxTokens: 1024, temperature: 0))
            #expect(text.promptTokens + text.outputTokens >= 1000, "the text turn should fill the context (\(text.promptTokens) + \(text.outputTokens))")
            let result = try await sdk.vlm.generate(prompt: "What is in this picture?", images: [photo],
                                                    options: LlmOptions(model: "smolvlm-256m", maxTokens: 1024, temperature: 0))
            let during = ChildProcessProbe.residentBytes() ?? 0
            let peak = ChildProcessProbe.peakResidentBytes() ?? 0
            try await sdk.models.unload(id: "smolvlm-256m")
            return (before, loaded, during, peak, ChildProcessProbe.residentBytes() ?? 0, result)
        }
        // The same cycle once first, as an app that has used the model before: what the process keeps after a first
        // use (runtime caches, thread arenas, libraries other backends open) is not the model's.
        _ = try await cycle(measure: false)
        let (before, loaded, during, peak, after, result) = try await cycle(measure: true)
        let report = VisionMemoryTests.Report(before: before, loaded: during, peak: peak, after: after, estimate: loaded.estimatedMemoryBytes,
                                              engineBytes: loaded.memoryBytes, promptTokens: result.promptTokens,
                                              outputTokens: result.outputTokens)
        try ChildProcessProbe.report(try JSONEncoder().encode(report))
    }
}
