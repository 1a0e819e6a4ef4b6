import Foundation
import RunAnywhereGGUF
import Testing

/// Dev-time differential check against an independent BPE implementation: the cases file
/// (made by bench/tokenizer/make_cases.py with Hugging Face `tokenizers`) is named by
/// RUNANYWHERE_TOKENIZER_CASES. Skipped when that variable or the shared vocabularies are absent.
@Suite("Tokenizer differential cases",
       .enabled(if: TestData.isAvailable && ProcessInfo.processInfo.environment["RUNANYWHERE_TOKENIZER_CASES"] != nil,
                "set RUNANYWHERE_TOKENIZER_CASES (bench/tokenizer/make_cases.py) and RUNANYWHERE_TESTDATA"))
struct TokenizerDifferentialTests {
    @Test("random texts tokenize as the reference BPE implementation does")
    func randomTexts() throws {
        let path = try #require(ProcessInfo.processInfo.environment["RUNANYWHERE_TOKENIZER_CASES"])
        let cases = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]])
        #expect(!cases.isEmpty)
        var failures = 0
        for item in cases {
            let vocab = try #require(item["vocab"] as? String)
            let text = try #require(item["text"] as? String)
            let expected = try #require(item["ids"] as? [Int]).map(Int32.init)
            let pre = item["pre"] as? String
            let got = try TokenizerTestData.tokenizer(vocab, pre: pre).encode(text, addSpecial: false)
            if got != expected {
                failures += 1
                if failures <= 25 {
                    Issue.record("\(vocab)/\(pre ?? "-") \(text.debugDescription): got \(got), expected \(expected)")
                }
            }
        }
        #expect(failures == 0, "\(failures) of \(cases.count) cases differ")
    }
}
