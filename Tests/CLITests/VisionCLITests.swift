import Foundation
import Testing
import RunAnywhere
import RunAnywhereTestSupport

/// `runanywhere run smolvlm-256m "…" --image FILE` and `/image FILE` in `chat`, end to end: the catalog's two files
/// downloaded from a Hugging Face mirror on loopback (`HF_ENDPOINT`), both loaded, the image encoded, text streamed.
@Suite("CLI: vision models", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct VisionCLITests {
    static let tiny = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../bench/vlm/tiny").standardized
    static let repo = "ggml-org/SmolVLM-256M-Instruct-GGUF/resolve/main/"
    static let names = ["SmolVLM-256M-Instruct-Q8_0.gguf", "mmproj-SmolVLM-256M-Instruct-Q8_0.gguf"]

    /// Publishes a text model and its projector under the catalog's names and paths.
    static func mirror(text: URL, projector: URL) throws -> ModelMirror {
        let mirror = try ModelMirror()
        for (file, name) in zip([text, projector], names) {
            mirror.publish(repo + name, data: try Data(contentsOf: file, options: .alwaysMapped))
        }
        return mirror
    }

    @Test("run --image and chat /image with the catalog's smolvlm-256m from a mirror (tiny pair): the SDK's text, typed errors",
          .enabled(if: FileManager.default.fileExists(atPath: tiny.appendingPathComponent("smolvlm-tiny-f16.gguf").path),
                   "the tiny SmolVLM models are generated: run scripts/make-vision-fixtures.sh (scripts/test.sh does)"))
    func tinyPair() async throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try Self.mirror(text: Self.tiny.appendingPathComponent("smolvlm-tiny-f16.gguf"),
                                     projector: Self.tiny.appendingPathComponent("mmproj-smolvlm-tiny-f16.gguf"))
        defer { mirror.stop() }
        let env = ["HF_ENDPOINT": mirror.server.baseURL.absoluteString]
        let photo = Self.tiny.appendingPathComponent("photo.png").path
        let run = try cli.run(["run", "smolvlm-256m", "Is there text?", "--image", photo, "--temperature", "0", "--max-tokens", "8", "--json"],
                              environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(cli.json(run) as? [String: Any], "stdout: \(run.stdout)")
        // The same answer as the SDK gives in this process on the same files.
        let dir = try TemporaryDirectory(prefix: "runanywhere-vision-cli"); defer { dir.remove() }
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: dir.url, environment: env))
        for try await _ in try await sdk.models.download(id: "smolvlm-256m") {}
        let expected = try await sdk.vlm.generate(prompt: "Is there text?", images: [VlmImage(contentsOf: URL(fileURLWithPath: photo))],
                                                  options: LlmOptions(model: "smolvlm-256m", maxTokens: 8, temperature: 0))
        try await sdk.models.unloadAll()
        #expect(json["text"] as? String == expected.text)
        #expect(json["promptTokens"] as? Int == expected.promptTokens && expected.promptTokens > 100)

        // chat: /image attaches to the next message only; a missing file is an error line, the session goes on.
        let chat = try cli.run(["chat", "smolvlm-256m", "--temperature", "0", "--max-tokens", "4"], environment: env,
                               stdin: "/image \(photo)\nIs there text?\n/image /nonexistent.png\nhello\n/exit\n")
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stdout.contains("Attached"), "\(chat.stdout)")

        // Not an image: a clear error and exit code, no crash.
        let bad = try cli.run(["run", "smolvlm-256m", "What is this?", "--image", Self.tiny.appendingPathComponent("smolvlm-tiny-f16.json").path],
                              environment: env)
        #expect(bad.status != 0 && bad.stderr.contains("image"), "\(bad.stderr)")
    }

    /// The SmolVLM-256M-shaped random-weight pair (bench/vlm/make_smolvlm.py --shape smolvlm-256m --type q8_0), made by
    /// .ci/run into a cache and named by RUNANYWHERE_SMOLVLM_SHAPED (a folder holding both files).
    static var shaped: (text: URL, projector: URL)? {
        guard let dir = ProcessInfo.processInfo.environment["RUNANYWHERE_SMOLVLM_SHAPED"] else { return nil }
        let base = URL(fileURLWithPath: dir)
        let text = base.appendingPathComponent("smolvlm-smolvlm-256m-q8_0.gguf")
        let projector = base.appendingPathComponent("mmproj-smolvlm-smolvlm-256m-q8_0.gguf")
        guard FileManager.default.fileExists(atPath: text.path), FileManager.default.fileExists(atPath: projector.path) else { return nil }
        return (text, projector)
    }

    @Test("runanywhere run smolvlm-256m \"What is in this picture?\" --image photo.jpg at SmolVLM-256M's shapes",
          .enabled(if: shaped != nil, "set RUNANYWHERE_SMOLVLM_SHAPED to a folder with the SmolVLM-256M-shaped pair (.ci/run makes it)"))
    func shapedPair() throws {
        let files = try #require(Self.shaped)
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try Self.mirror(text: files.text, projector: files.projector)
        defer { mirror.stop() }
        let photo = Self.tiny.appendingPathComponent("photo.jpg").path
        let run = try cli.run(["run", "smolvlm-256m", "What is in this picture?", "--image", photo, "--max-tokens", "8", "--json"],
                              environment: ["HF_ENDPOINT": mirror.server.baseURL.absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(cli.json(run) as? [String: Any], "stdout: \(run.stdout)")
        // A 160×120 photo: longest side to 1536, 3×3 tiles of 512 and the global tile, 64 tokens each.
        #expect((json["promptTokens"] as? Int ?? 0) > 640, "\(json)")
        #expect((json["outputTokens"] as? Int ?? 0) > 0, "\(json)")
        print("vision-cli: smolvlm-256m shapes: \(json["promptTokens"] ?? "?") prompt tokens, \(json["outputTokens"] ?? "?") tokens, time to first token \(json["timeToFirstTokenSeconds"] ?? "?") s")
    }
}
