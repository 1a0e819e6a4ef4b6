import Foundation
import RunAnywhereGGUF
import Synchronization
import Testing

/// Loads the shared vocab-only GGUFs once per test process.
enum TokenizerTestData {
    static let vocabNames = ["llama-spm", "qwen2", "llama-bpe", "gpt-2"]

    static func vocabPath(_ name: String) -> String {
        (TestData.root ?? "/nonexistent") + "/vocab/ggml-vocab-\(name).gguf"
    }

    /// The llama.cpp test vectors of a vocabulary: inputs and expected ids.
    static func vectors(_ name: String) throws -> [(input: String, expected: [Int32])] {
        let inp = try String(contentsOfFile: vocabPath(name) + ".inp", encoding: .utf8)
        let out = try String(contentsOfFile: vocabPath(name) + ".out", encoding: .utf8)
        var inputs = inp.components(separatedBy: "\n__ggml_vocab_test__\n")
        if inputs.last == "" { inputs.removeLast() }
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var result: [(String, [Int32])] = []
        for (i, input) in inputs.enumerated() {
            let line = i < lines.count ? lines[i].trimmingCharacters(in: .whitespaces) : ""
            let ids = line.split(separator: " ").compactMap { Int32($0) }
            result.append((input, ids))
        }
        return result
    }

    private static let cache = Mutex<[String: GGUFTokenizer]>([:])

    /// The tokenizer of a shared vocabulary, optionally with another pre-tokenizer.
    static func tokenizer(_ name: String, pre: String? = nil) throws -> GGUFTokenizer {
        let key = name + "|" + (pre ?? "")
        if let t = cache.withLock({ $0[key] }) { return t }
        var metadata = try GGUFTokenizer.Metadata(file: GGUFFile(path: vocabPath(name)))
        if let pre { metadata.pre = pre }
        let t = try GGUFTokenizer(metadata: metadata)
        cache.withLock { $0[key] = t }
        return t
    }
}

@Suite("Tokenizer conformance with llama.cpp", .enabled(if: TestData.isAvailable, TestData.skipReason))
struct TokenizerConformanceTests {
    @Test("every llama.cpp vocab test vector tokenizes to exactly the expected ids",
          arguments: TokenizerTestData.vocabNames)
    func vocabVectors(name: String) throws {
        let tokenizer = try TokenizerTestData.tokenizer(name)
        let vectors = try TokenizerTestData.vectors(name)
        #expect(vectors.count == 46)
        var failures = 0
        for (index, vector) in vectors.enumerated() {
            let ids = tokenizer.encode(vector.input, addSpecial: false, parseSpecial: false)
            if ids != vector.expected {
                failures += 1
                Issue.record("\(name) #\(index) \(vector.input.debugDescription): got \(ids), expected \(vector.expected)")
            }
        }
        #expect(failures == 0)
    }

    @Test("chat markup becomes control tokens only with parseSpecial")
    func parseSpecial() throws {
        let qwen = try TokenizerTestData.tokenizer("qwen2")
        let chat = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
        #expect(qwen.encode(chat, addSpecial: true, parseSpecial: true)
            == [151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198])
        #expect(!qwen.encode(chat).contains(151644))
        #expect(qwen.isEndOfGeneration(151645) && qwen.isEndOfGeneration(151643) && !qwen.isEndOfGeneration(151644))
        #expect(qwen.eotTokenId == 151645)

        let llama3 = try TokenizerTestData.tokenizer("llama-bpe")
        let header = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
        #expect(llama3.encode(header, addSpecial: false, parseSpecial: true)
            == [128000, 128006, 882, 128007, 271, 13347, 1070, 128009])
        #expect(llama3.isEndOfGeneration(128009) && llama3.isEndOfGeneration(128001))
        #expect(llama3.decode([128000, 9906]) == "Hello")

        let gpt2 = try TokenizerTestData.tokenizer("gpt-2")
        #expect(gpt2.encode("Hello<|endoftext|> world", parseSpecial: true) == [15496, 50256, 995])

        let spm = try TokenizerTestData.tokenizer("llama-spm")
        #expect(spm.encode("<s>Hello", addSpecial: false, parseSpecial: true) == [1, 15043])
        #expect(spm.encode("Hello</s>", addSpecial: true, parseSpecial: true) == [1, 15043, 2])
    }

    @Test("reference prompts tokenize and detokenize as llama.cpp did")
    func referencePrompts() throws {
        let root = try #require(TestData.root)
        let dir = root + "/references"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 7)
        for file in files {
            let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/" + file))) as? [String: Any])
            let modelFile = try #require(json["model_file"] as? String)
            let modelPath = root + "/models/" + (modelFile as NSString).lastPathComponent
            let tokenizer = try GGUFTokenizer(file: GGUFFile(path: modelPath))
            let model = try #require(json["model"] as? [String: Any])
            #expect(tokenizer.addsBOS == (model["add_bos_effective"] as? Bool), "\(file) add_bos")
            let results = try #require(json["results"] as? [[String: Any]])
            for result in results {
                let prompt = try #require(result["prompt"] as? String)
                let ids = try #require(result["prompt_ids"] as? [Int]).map(Int32.init)
                let idsNoSpecial = try #require(result["prompt_ids_no_special"] as? [Int]).map(Int32.init)
                #expect(tokenizer.encode(prompt) == ids, "\(file) \(prompt)")
                #expect(tokenizer.encode(prompt, addSpecial: false) == idsNoSpecial, "\(file) \(prompt)")
                #expect(tokenizer.decode(ids) == (result["prompt_detokenized"] as? String), "\(file) \(prompt)")
                let greedy = try #require(result["greedy_ids"] as? [Int]).map(Int32.init)
                let hex = try #require(result["greedy_pieces_hex"] as? [String])
                #expect(greedy.count == hex.count)
                for (id, h) in zip(greedy, hex) {
                    let bytes = tokenizer.piece(for: id)
                    #expect(bytes.map { String(format: "%02x", $0) }.joined() == h, "\(file) piece \(id)")
                }
                #expect(tokenizer.decode(ids + greedy) == (result["full_text"] as? String), "\(file) full_text")
            }
        }
    }
}
