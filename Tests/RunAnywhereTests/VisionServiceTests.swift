import Foundation
import Testing
@testable import RunAnywhere
import RunAnywhereTestSupport

/// `RunAnywhere.vlm` over the tiny random-weight SmolVLM pair of bench/vlm/tiny, served by a loopback mirror.
/// Where the tiny SmolVLM pair and its references live.
private let tinyVLMFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../bench/vlm/tiny").standardized

@Suite("Vision-language service",
       .enabled(if: FileManager.default.fileExists(atPath: tinyVLMFixtures.appendingPathComponent("smolvlm-tiny-f16.gguf").path),
                "the tiny SmolVLM models are generated, not committed: run scripts/make-vision-fixtures.sh (scripts/test.sh does)"))
struct VisionServiceTests {
    static let fixtures = tinyVLMFixtures

    /// Registers the tiny pair as a two-file `.vision` model; returns its id.
    static func registerTinyVLM(_ env: DemoEnvironment) async throws -> String {
        var descriptors: [ModelFileDescriptor] = []
        for (file, role) in [("smolvlm-tiny-f16.gguf", ModelFileDescriptor.Role.model), ("mmproj-smolvlm-tiny-f16.gguf", .projector)] {
            let data = try Data(contentsOf: fixtures.appendingPathComponent(file))
            descriptors.append(ModelFileDescriptor(url: env.mirror.publish(file, data: data), role: role))
        }
        return try await env.sdk.registerModel(multiFile: descriptors, id: "tiny-vlm", name: "Tiny SmolVLM",
                                               framework: .llamaCpp, modality: .vision).id
    }

    /// The gradient test image and mtmd's greedy text for the first reference prompt.
    static func gradient() throws -> (image: VlmImage, prompt: String, text: String, tokens: Int) {
        let bytes = [UInt8](try Data(contentsOf: fixtures.appendingPathComponent("gradient.ppm")))
        let header = Array("P6\n50 40\n255\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        let json = try Data(contentsOf: fixtures.appendingPathComponent("smolvlm-tiny-f16.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let first = try #require((root["images"] as? [[String: Any]])?.first)
        let generation = try #require((first["generations"] as? [[String: Any]])?.first)
        return (VlmImage(width: 50, height: 40, rgb: Array(bytes[header.count...])), try #require(generation["prompt"] as? String),
                try #require(generation["text"] as? String), (generation["tokens"] as? [Int])?.count ?? 0)
    }

    @Test("downloads and loads both files, answers about an image as mtmd does, answers text-only prompts, unload frees both")
    func endToEnd() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await Self.registerTinyVLM(env)
        let (image, prompt, expected, count) = try Self.gradient()
        let options = LlmOptions(model: id, maxTokens: count, temperature: 0)
        let result = try await env.sdk.vlm.generate(prompt: prompt, images: [image], options: options)
        #expect(result.backend == .native && result.modelId == id)
        // The reference prompt format is the fallback layout used when the model has no chat template.
        #expect(result.text == expected, "vlm text \(result.text.debugDescription) vs mtmd \(expected.debugDescription)")
        #expect(result.promptTokens > 160, "the prompt counts the image tokens (\(result.promptTokens))")

        let loaded = try #require(await env.sdk.models.state().loaded.first { $0.id == id })
        let projector = Int64(try Data(contentsOf: Self.fixtures.appendingPathComponent("mmproj-smolvlm-tiny-f16.gguf")).count)
        #expect(loaded.memoryBytes > projector && loaded.estimatedMemoryBytes > loaded.memoryBytes - projector)

        let text = try await env.sdk.vlm.generate(prompt: "Hello", images: [], options: LlmOptions(model: id, maxTokens: 4, temperature: 0))
        #expect(text.outputTokens > 0 || text.finishReason == .endOfGeneration)

        // A bad image is a typed error, not a crash.
        let broken = VlmImage(encoded: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]))
        #expect(await errorCode { try await env.sdk.vlm.generate(prompt: "x", images: [broken], options: options) } == .invalidConfiguration)

        try await env.sdk.models.unload(id: id)
        #expect(!(await env.sdk.models.state().isLoaded(id)))
    }

    @Test("images that cannot fit the context are refused before they are encoded")
    func imagesBeyondTheContext() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await Self.registerTinyVLM(env)
        for try await _ in try await env.sdk.models.download(id: id) {}
        // The 50×40 gradient becomes 3×3 tiles and the global one, 16 tokens each: 160 image tokens.
        _ = try await env.sdk.models.load(id: id, options: LoadOptions(contextLength: 128))
        let (image, prompt, _, _) = try Self.gradient()
        do {
            _ = try await env.sdk.vlm.generate(prompt: prompt, images: [image], options: LlmOptions(model: id, maxTokens: 4, temperature: 0))
            Issue.record("an image of 160 tokens was accepted by a 128-token context")
        } catch let error as RunAnywhereError {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains("160 image tokens"), "\(error.message)")
        }
        // The model stays usable.
        let text = try await env.sdk.vlm.generate(prompt: "Hello", images: [], options: LlmOptions(model: id, maxTokens: 2, temperature: 0))
        #expect(text.promptTokens > 0)
    }

    @Test("the catalog's smolvlm-256m downloads both files from an HF_ENDPOINT mirror (token included) and answers about an image")
    func catalogModelFromMirror() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        // The tiny pair under the catalog's file names, at the paths huggingface.co serves them from.
        let repo = "ggml-org/SmolVLM-256M-Instruct-GGUF/resolve/main/"
        for (fixture, name) in [("smolvlm-tiny-f16.gguf", "SmolVLM-256M-Instruct-Q8_0.gguf"),
                                ("mmproj-smolvlm-tiny-f16.gguf", "mmproj-SmolVLM-256M-Instruct-Q8_0.gguf")] {
            env.mirror.publish(repo + name, data: try Data(contentsOf: Self.fixtures.appendingPathComponent(fixture)))
        }
        let root = env.dir.url.appendingPathComponent("catalog-root")
        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
            storageRoot: root, environment: ["HF_ENDPOINT": env.mirror.server.baseURL.absoluteString + "/", "HF_TOKEN": "hf_mirror_token"]))
        let info = try #require(await sdk.models.get(id: "smolvlm-256m"))
        #expect(info.artifact.files.allSatisfy { $0.url.host == "huggingface.co" })
        // Sizes are learnt from where the files would come from: the mirror.
        let sizes = try [("smolvlm-tiny-f16.gguf"), ("mmproj-smolvlm-tiny-f16.gguf")]
            .map { Int64(try Data(contentsOf: Self.fixtures.appendingPathComponent($0)).count) }
        #expect(await sdk.models.learnDownloadSizes(ids: ["smolvlm-256m"]) == ["smolvlm-256m": sizes.reduce(0, +)])
        for try await _ in try await sdk.models.download(id: "smolvlm-256m") {}
        let gets = env.mirror.server.requests.filter { $0.path.hasPrefix("/" + repo) && $0.method == "GET" }
        #expect(Set(gets.map(\.path)).count == 2, "both files came from the mirror: \(gets.map(\.path))")
        #expect(gets.allSatisfy { $0.header("Authorization") == "Bearer hf_mirror_token" })

        let (image, prompt, expected, count) = try Self.gradient()
        let result = try await sdk.vlm.generate(prompt: prompt, images: [image],
                                                options: LlmOptions(model: "smolvlm-256m", maxTokens: count, temperature: 0))
        #expect(result.text == expected, "vlm text \(result.text.debugDescription) vs mtmd \(expected.debugDescription)")
        try await sdk.models.unloadAll()

        // A mirror that is not an http(s) URL is a clear error before any request.
        let bad = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
            storageRoot: env.dir.url.appendingPathComponent("bad-root"), environment: ["HF_ENDPOINT": "ftp://mirror.example"]))
        #expect(await errorCode { for try await _ in try await bad.models.download(id: "smolvlm-256m") {} } == .invalidConfiguration)
    }

    @Test("a language model asked about an image: invalidConfiguration")
    func languageModelRefusesImages() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.sea)
        let (image, _, _, _) = try Self.gradient()
        #expect(await errorCode {
            try await env.sdk.vlm.generate(prompt: "What is this?", images: [image], options: LlmOptions(model: id, maxTokens: 2))
        } == .invalidConfiguration)
    }
}
