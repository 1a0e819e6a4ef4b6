import Foundation
import Testing
@testable import RunAnywhereGGUF
import RunAnywhereImaging

/// The tiny random-weight SmolVLM pair and llama.cpp mtmd's outputs for it in bench/vlm/tiny (made by
/// bench/vlm/make_tiny.sh: make_smolvlm.py, test_images.py and mtmd_reference.py). The outputs and images are
/// committed; the models are written by scripts/make-vision-fixtures.sh and checked against models.sha256.
enum VisionFixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../bench/vlm/tiny").standardized.path

    struct Image {
        let file: String
        /// The pixels as the SDK decodes the file.
        let image: RGBImage
        /// For PNG/JPEG: the pixels mtmd's stb_image decoded (written next to the file by mtmd_reference.py).
        let stb: RGBImage?
        /// mtmd's chunks: text tokens, or image tokens with their offset into the embeddings file.
        let layout: [(tokens: [Int32]?, imageTokens: Int, offset: Int)]
        let generations: [(prompt: String, tokens: [Int32], margins: [Float], text: String)]
    }

    /// Reads a binary PPM (P6, maxval 255).
    static func readPPM(_ path: String) throws -> RGBImage {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var fields: [String] = []
        var i = 0
        while fields.count < 4 && i < data.count {
            while i < data.count && (data[i] == 0x20 || data[i] == 0x0a) { i += 1 }
            var s = ""
            while i < data.count && data[i] != 0x20 && data[i] != 0x0a { s.append(Character(UnicodeScalar(data[i]))); i += 1 }
            fields.append(s)
        }
        i += 1
        let w = try #require(Int(fields[1])), h = try #require(Int(fields[2]))
        #expect(fields[0] == "P6" && fields[3] == "255")
        return try RGBImage(width: w, height: h, pixels: Array(data[i..<(i + w * h * 3)]))
    }

    static func load(_ name: String) throws -> (images: [Image], embeddings: [Float], promptFormat: String) {
        let json = try Data(contentsOf: URL(fileURLWithPath: directory + "/\(name).json"))
        let root = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let raw = try Data(contentsOf: URL(fileURLWithPath: directory + "/\(name).bin"))
        let embeddings = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        var images: [Image] = []
        for entry in try #require(root["images"] as? [[String: Any]]) {
            let file = try #require(entry["file"] as? String)
            let layout = try #require(entry["layout"] as? [[String: Any]]).map { c -> ([Int32]?, Int, Int) in
                if let t = c["tokens"] as? [Int], c["type"] as? String == "text" { return (t.map { Int32($0) }, 0, 0) }
                return (nil, c["tokens"] as? Int ?? 0, c["offset"] as? Int ?? 0)
            }
            let gens = try #require(entry["generations"] as? [[String: Any]]).map { g in
                (g["prompt"] as? String ?? "", (g["tokens"] as? [Int] ?? []).map { Int32($0) },
                 (g["margins"] as? [Double] ?? []).map { Float($0) }, g["text"] as? String ?? "")
            }
            // PPM as written; PNG and JPEG through the SDK's decoders (mtmd used stb_image on the same files).
            let path = directory + "/" + file
            let image = file.hasSuffix(".ppm") ? try readPPM(path) : try ImageDecoder.decode(contentsOf: URL(fileURLWithPath: path))
            let stb = file.hasSuffix(".ppm") ? nil : try readPPM(path + ".stb.ppm")
            images.append(Image(file: file, image: image, stb: stb, layout: layout, generations: gens))
        }
        return (images, embeddings, try #require(root["prompt_format"] as? String))
    }

    /// The prompt parts of the reference's format "<|im_start|>User:<image>{prompt}<end_of_utterance>\nAssistant:".
    static func parts(_ format: String, prompt: String, image: ImageEmbeddings?) -> [VisionPromptPart] {
        let filled = format.replacingOccurrences(of: "{prompt}", with: prompt)
        let halves = filled.components(separatedBy: "<image>")
        guard let image, halves.count == 2 else { return [.text(halves.joined())] }
        return [.text(halves[0]), .image(image), .text(halves[1])]
    }
}

@Suite("Vision encoder and prompts against llama.cpp mtmd (tiny SmolVLM)",
       .enabled(if: FileManager.default.fileExists(atPath: VisionFixture.directory + "/smolvlm-tiny-q8_0.gguf"),
                "the tiny SmolVLM models are generated, not committed: run scripts/make-vision-fixtures.sh (scripts/test.sh does)"))
struct VisionReferenceTests {
    /// The `-legacy` projector has no `clip.vision.preproc_image_size`, as files converted before llama.cpp wrote
    /// it: mtmd tiles its images the older way (bicubic, sides rounded to whole tiles).
    static let pairs = ["smolvlm-tiny-f16", "smolvlm-tiny-q8_0", "smolvlm-tiny-q8_0-legacy"]

    /// The reference top-2 margin (logits) below which a step is a near-tie: the last-bit differences of F16 weights
    /// move these random models' logits by hundredths; a Q8_0 rounding flip of an activation (up to 1/127 of a block's
    /// largest value) by tenths; a JPEG, where libjpeg-turbo's pixels differ from stb_image's by a few levels, by more.
    static func nearTie(_ name: String, _ file: String) -> Float {
        file.hasSuffix(".jpg") ? 1.0 : name.contains("q8_0") ? 0.5 : 0.05
    }

    static func open(_ name: String) throws -> (GGUFModel, GGUFVisionModel) {
        let dir = VisionFixture.directory
        return (try GGUFModel(path: dir + "/\(name).gguf"), try GGUFVisionModel(path: dir + "/mmproj-\(name).gguf"))
    }

    @Test("image embeddings and prompt layout equal mtmd's", arguments: pairs)
    func embeddings(name: String) throws {
        let (model, vision) = try Self.open(name)
        let (images, reference, format) = try VisionFixture.load(name)
        let context = try GGUFContext(model: model, contextLength: 2048, threads: 2)
        for entry in images {
            if let stb = entry.stb {
                // The decoders: libpng gives stb_image's pixels exactly; libjpeg-turbo's IDCT and upsampling differ
                // from stb_image's by a few levels.
                let diff = zip(stb.pixels, entry.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
                print("vision-reference: \(entry.file): decoded pixels differ from stb_image's by at most \(diff) levels")
                #expect(stb.width == entry.image.width && stb.height == entry.image.height)
                #expect(diff <= (entry.file.hasSuffix(".png") ? 0 : 8), "\(entry.file): \(diff) levels from stb_image")
                if entry.file.hasSuffix(".jpg") {
                    // Through the SDK's decoder the embeddings move with the pixels: held to 10% of the largest value.
                    let ours = try context.encode(entry.image, with: vision)
                    let offsets = entry.layout.filter { $0.tokens == nil }.map(\.offset)
                    let worst = zip(ours.values, offsets.flatMap { o in reference[o..<(o + ours.tokensPerTile * ours.width)] })
                        .map { abs($0 - $1) }.max() ?? .infinity
                    let scale = reference.map { abs($0) }.max() ?? 1
                    print("vision-reference: \(name) \(entry.file) with libjpeg-turbo's pixels: relative \(worst / scale)")
                    #expect(worst / scale < 0.1)
                }
            }
            // The engine on the very pixels mtmd encoded.
            let embedded = try context.encode(entry.stb ?? entry.image, with: vision)
            let refChunks = entry.layout.filter { $0.tokens == nil }
            #expect(refChunks.count == embedded.rows * embedded.columns + 1, "\(entry.file): tile count")
            // Largest difference relative to the largest reference value, over every image token.
            var worst: Float = 0, scale: Float = 0
            let perTile = embedded.tokensPerTile * embedded.width
            for (tile, chunk) in refChunks.enumerated() where tile * perTile + perTile <= embedded.values.count {
                #expect(chunk.imageTokens == embedded.tokensPerTile)
                for i in 0..<perTile {
                    let r = reference[chunk.offset + i]
                    worst = max(worst, abs(embedded.values[tile * perTile + i] - r))
                    scale = max(scale, abs(r))
                }
            }
            print("vision-reference: \(name) \(entry.file): \(embedded.columns)x\(embedded.rows) tiles, max |diff| \(worst) of max |value| \(scale) (relative \(worst / scale))")
            // Preprocessing is integer-exact and the arithmetic is ggml's, so the only differences are summation order
            // in the dot products (~1e-7 relative), which now and then moves an activation across a rounding boundary
            // of the F16 conversion before a matrix product or the GELU table (one F16 ulp, 2^-11 relative) or, with
            // Q8_0 weights, of its Q8_0 quantization (one step of 1/127 of its block's maximum). Seen: F16 up to 4e-4,
            // Q8_0 up to 5e-3 relative to the largest value (and 2e-7 for an image where nothing flipped).
            let tolerance: Float = name.hasSuffix("f16") ? 1e-3 : 1e-2
            #expect(worst / scale < tolerance, "\(name) \(entry.file): embeddings differ by \(worst) (relative \(worst / scale))")

            // Layout: the same token ids, image tokens where mtmd puts its image chunks.
            let keys = try context.visionPromptKeys(VisionFixture.parts(format, prompt: entry.generations[0].prompt, image: embedded))
            var expected: [Int32?] = []
            for chunk in entry.layout {
                if let t = chunk.tokens { expected += t.map { Optional($0) } } else { expected += Array(repeating: nil, count: chunk.imageTokens) }
            }
            #expect(keys.count == expected.count, "\(entry.file): \(keys.count) positions, mtmd has \(expected.count)")
            for (k, e) in zip(keys, expected) {
                if let e { #expect(k == e) } else { #expect(k < 0) }
            }
        }
    }

    @Test("greedy text with an image equals mtmd's up to the first near-tie", arguments: pairs)
    func greedy(name: String) throws {
        let (model, vision) = try Self.open(name)
        let (images, _, format) = try VisionFixture.load(name)
        let context = try GGUFContext(model: model, contextLength: 2048, threads: 2)
        var compared = 0
        for entry in images {
            let embedded = try context.encode(entry.image, with: vision)
            for g in entry.generations {
                let stats = try context.generate(parts: VisionFixture.parts(format, prompt: g.prompt, image: embedded),
                                                 sampling: .greedy, maxTokens: g.tokens.count + 1, stop: [],
                                                 shouldContinue: { true }, onText: { _ in })
                // Equal until the reference's top-2 margin first falls below 0.05 logits (a closer call may go
                // either way with last-bit differences in the image embeddings).
                let clear = g.margins.firstIndex { $0 < Self.nearTie(name, entry.file) } ?? g.margins.count
                if let d = zip(stats.tokens, g.tokens).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                    print("vision-greedy: \(name) \(entry.file) \"\(g.prompt)\": first difference at step \(d), reference margin there \(g.margins[d])")
                }
                let n = min(clear, g.tokens.count)
                #expect(Array(stats.tokens.prefix(n)) == Array(g.tokens.prefix(n)),
                        "\(name) \(entry.file) \"\(g.prompt)\": \(stats.tokens) vs mtmd \(g.tokens) (first near-tie at \(clear))")
                compared += n
                print("vision-greedy: \(name) \(entry.file) \"\(g.prompt)\": \(n) of \(g.tokens.count) tokens before a near-tie, equal: \(Array(stats.tokens.prefix(n)) == Array(g.tokens.prefix(n)))")
            }
        }
        #expect(compared > 0)
        // Text-only prompts through the same path (the vision model's language model alone).
        let json = try Data(contentsOf: URL(fileURLWithPath: VisionFixture.directory + "/\(name).json"))
        let root = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        for g in try #require(root["text_only"] as? [[String: Any]]) {
            let prompt = try #require(g["prompt"] as? String)
            let tokens = (g["tokens"] as? [Int] ?? []).map { Int32($0) }
            let margins = (g["margins"] as? [Double] ?? []).map { Float($0) }
            let stats = try context.generate(parts: VisionFixture.parts(format, prompt: prompt, image: nil), sampling: .greedy,
                                             maxTokens: tokens.count + 1, stop: [], shouldContinue: { true }, onText: { _ in })
            let n = min(margins.firstIndex { $0 < 0.05 } ?? margins.count, tokens.count)
            #expect(Array(stats.tokens.prefix(n)) == Array(tokens.prefix(n)), "\(name) text-only \"\(prompt)\"")
        }
    }
}
