import Foundation
import RunAnywhereGGUF
import Testing

/// Encoding throughput on generated English-like text, run by bench/tokenizer/run.sh
/// (RUNANYWHERE_TOKENIZER_BENCH=<output markdown path>). Skipped otherwise.
@Suite("Tokenizer benchmark",
       .enabled(if: TestData.isAvailable && ProcessInfo.processInfo.environment["RUNANYWHERE_TOKENIZER_BENCH"] != nil,
                "set RUNANYWHERE_TOKENIZER_BENCH=<report.md> and RUNANYWHERE_TESTDATA (bench/tokenizer/run.sh)"))
struct TokenizerBenchmarkTests {
    /// Deterministic English-like text: common words, capitals, punctuation, numbers, paragraphs.
    static func englishLikeText(bytes target: Int) -> String {
        let words = ("the of and to a in is that for it as was with be by on not he I this are or his from at which but have an they you were her she there one all we their can has been if more when will would who so no time people said years first new after other could two like also over did into only how its about these may may then them some just most out than well what year made between back through my any where much before your way even because those down many should very work each life long day while still three great our must being under good world same another state last never own both man well know might place around during however without here against public found since off take high up").split(separator: " ")
        var rng: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
            return Int(truncatingIfNeeded: rng >> 1)
        }
        var out = ""
        out.reserveCapacity(target + 100)
        var sentenceStart = true
        while out.utf8.count < target {
            var word = String(words[next() % words.count])
            if sentenceStart { word = word.prefix(1).uppercased() + word.dropFirst() }
            sentenceStart = false
            out += word
            let r = next() % 100
            if r < 6 {
                out += ". "; sentenceStart = true
            } else if r < 9 {
                out += ", "
            } else if r < 10 {
                out += " \(next() % 2000) "
            } else if r < 11 {
                out += "'s "
            } else if r < 12 {
                out += ".\n\n"; sentenceStart = true
            } else {
                out += " "
            }
        }
        return out
    }

    @Test("encoding throughput of each vocabulary (median of 5)")
    func throughput() throws {
        let outPath = try #require(ProcessInfo.processInfo.environment["RUNANYWHERE_TOKENIZER_BENCH"])
        let text = TokenizerBenchmarkTests.englishLikeText(bytes: 4 << 20)
        let megabytes = Double(text.utf8.count) / 1_000_000
        var rows: [String] = []
        var bpeRates: [Double] = []
        for name in ["qwen2", "llama-bpe", "gpt-2", "llama-spm"] {
            let start = Date()
            let tokenizer = try TokenizerTestData.tokenizer(name)
            let loadSeconds = Date().timeIntervalSince(start)
            var times: [Double] = []
            var tokenCount = 0
            for _ in 0..<5 {
                let t0 = DispatchTime.now().uptimeNanoseconds
                tokenCount = tokenizer.encode(text, addSpecial: false).count
                times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
            }
            let median = times.sorted()[2]
            let rate = megabytes / median
            if name != "llama-spm" && name != "gpt-2" { bpeRates.append(rate) }
            rows.append(String(format: "| %@ | %d | %.3f | %.1f | %.2f |", name, tokenCount, median, rate, loadSeconds))
        }
        let report = """
        # Tokenizer encoding throughput

        Text: \(String(format: "%.2f", megabytes)) MB of generated English-like text (common words, capitals,
        punctuation, numbers, paragraphs), encoded in one call with `addSpecial: false`, one thread.
        Median of 5 runs. Vocabularies: the vocab-only GGUFs of the shared test data.
        Machine: \(ProcessInfo.processInfo.processorCount) logical CPUs (other builds may have been running).
        Build: \(ProcessInfo.processInfo.environment["RUNANYWHERE_BENCH_CONFIG"] ?? "unknown").

        | vocabulary | tokens | median seconds | MB/s | first load (s) |
        |---|---:|---:|---:|---:|
        \(rows.joined(separator: "\n"))

        Target: at least 5 MB/s for the byte-level BPE vocabularies (qwen2, llama-bpe).

        """
        try report.write(toFile: outPath, atomically: true, encoding: .utf8)
        for rate in bpeRates { #expect(rate >= 5, "BPE throughput \(rate) MB/s is below 5 MB/s") }
    }
}
