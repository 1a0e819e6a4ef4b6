// ttft-bench: time to first token of a chat prompt through the public API (bench/engine/ttft.sh).
//
//   ttft-bench MODEL.gguf [--threads 2] [--context 2048] [--max-tokens 4] [--tg 64] [--drop-page-cache] [--cpu avx2]
//   ttft-bench MODEL.gguf --loop-overhead      only TokenLoop's own work a token (see LoopOverhead.swift)
//
// One process: imports MODEL (hard link) into a temporary storage root, then through `RunAnywhereSDK.llm`
// (`generateStream`, as an app calls it; TTFT is the time from the call to the first `.text` event the consumer
// sees):
//   - load: `models.load` (the file's pages are touched only by the first request: the mmap is lazy); with
//     --drop-page-cache the file's pages are dropped from the page cache first (after the import, which reads it);
//   - cold: the first request after the load;
//   - fresh: one request per message in `benchMessages` with nothing of it in the KV cache (an untimed one-token
//     raw request in between leaves the cache holding something else);
//   - prefix: the same messages back to back, so each one reuses the template's system prompt from the request
//     before (`reusedPromptTokens`), as a new conversation in a chat app does;
//   - repeat: one message sent again, so all but its last token are reused (what is left is the fixed cost);
// then, on the engine below the API (`GGUFModel`/`GGUFContext` of the same file, same threads and batch), the
// split of a fresh request: chat template, tokenizer, prefill (forward of the prompt with the output row of its
// last token) and first sampling (greedy, and with the API's default sampling); and decode speed three ways
// (the bare evaluate+argmax loop as engine-bench runs it, the engine's generate, the API stream, `llm.generate`).
// Prints one JSON object (also the rendered prompts and their tokens, for the llama.cpp side).
import Foundation
import RunAnywhere
import RunAnywhereGGUF
import RunAnywhereTestSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ttft-bench: \(message)\n".utf8))
    exit(1)
}

var args = Array(CommandLine.arguments.dropFirst())
var threads = 2, contextLength = 2048, maxTokens = 4, tg = 64
var dropPageCache = false, loopOnly = false
var path: String?
while !args.isEmpty {
    let a = args.removeFirst()
    func value() -> Int {
        guard !args.isEmpty, let v = Int(args.removeFirst()), v >= 1 else { fail("\(a) needs a number >= 1") }
        return v
    }
    switch a {
    case "--threads": threads = value()
    case "--context": contextLength = value()
    case "--max-tokens": maxTokens = value()
    case "--tg": tg = value()
    case "--drop-page-cache": dropPageCache = true
    case "--loop-overhead": loopOnly = true
    case "--cpu":
        // the kernels of a lower path than this CPU's best (what a machine without AVX-512 runs)
        guard !args.isEmpty, KernelPath.restrictProcess(to: args.removeFirst()) else {
            fail("--cpu needs one of \(KernelPath.processNames.joined(separator: ", "))")
        }
    case "-h", "--help":
        print("usage: ttft-bench MODEL.gguf [--threads N] [--context N] [--max-tokens N] [--tg N] [--drop-page-cache] [--loop-overhead] [--cpu PATH]")
        exit(0)
    default:
        if path == nil { path = a } else { fail("unexpected argument \(a)") }
    }
}
guard let path else { fail("usage: ttft-bench MODEL.gguf [--threads N] [--context N] [--max-tokens N] [--tg N]") }

let clock = ContinuousClock()
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

/// One request through the API as the consumer of the stream sees it.
struct Request: Encodable {
    var ttft: Double            // call → first .text event
    var resultTTFT: Double      // GenerationResult.timeToFirstTokenSeconds (measured inside the SDK)
    var promptSeconds: Double   // the engine's prompt time inside the call (promptTokens / promptTokensPerSecond)
    var total: Double           // call → end of the stream
    var promptTokens: Int
    var reused: Int
    var outputTokens: Int
    var lastTextAt: Double      // call → last .text event
}

struct Split: Encodable {
    var promptTokens: Int
    var render: Double, tokenize: Double, prefill: Double, sampleGreedy: Double, sampleDefault: Double
}

struct Decode: Encodable {
    var tokens: Int
    var engineLoop: Double      // tokens/s: evaluate + argmax, as engine-bench
    var tokenLoop: Double       // tokens/s: GGUFContext.generate (TokenLoop: sampler, detokenizer, stop filter)
    var apiStream: Double       // tokens/s between the first and last .text event through the API
    var apiResult: Double       // GenerationResult.tokensPerSecond of `llm.generate`
    var apiTokens: Int
    var loopGreedyMicroseconds: Double     // TokenLoop's own work a token (forward pass excluded), greedy
    var loopDefaultMicroseconds: Double    // the same with the API's default sampling
}

struct Prompt: Encodable { var text: String; var tokens: [Int32]; var userTokens: Int }

struct Report: Encodable {
    var threads: Int
    var contextLength: Int
    var loadSeconds: Double
    var pageCacheBytesAtLoad: Int?
    var fileBytes: Int
    var cold: Request
    var fresh: [Request]
    var prefix: [Request]
    var repeated: [Request]
    var split: [Split]
    var decode: Decode
    var prompts: [Prompt]
}


func request(_ sdk: RunAnywhereSDK, _ prompt: String, _ options: LlmOptions) async throws -> Request {
    let start = clock.now
    var first: Double?, last = 0.0
    var result: GenerationResult?
    for try await event in sdk.llm.generateStream(prompt: prompt, options: options) {
        switch event {
        case .text:
            last = seconds(clock.now - start)
            if first == nil { first = last }
        case .completed(let r):
            result = r
        }
    }
    let total = seconds(clock.now - start)
    guard let r = result else { fail("a request ended without a result") }
    guard let first else { fail("a request produced no text (finish: \(r.finishReason))") }
    let promptSeconds = r.promptTokensPerSecond > 0 ? Double(r.promptTokens) / r.promptTokensPerSecond : 0
    return Request(ttft: first, resultTTFT: r.timeToFirstTokenSeconds, promptSeconds: promptSeconds, total: total,
                   promptTokens: r.promptTokens, reused: r.reusedPromptTokens, outputTokens: r.outputTokens, lastTextAt: last)
}

if loopOnly {
    // Only TokenLoop's per-token work (no API, no forward pass): median of 7 runs of 512 tokens, µs a token.
    do {
        let model = try GGUFModel(path: path)
        let context = try GGUFContext(model: model, contextLength: 256, threads: threads)
        let logits = try context.evaluate(model.tokenizer.encode(decodeMessage))
        let defaults = LlmOptions()
        let sampling = SamplingParameters(temperature: Float(defaults.temperature), topK: defaults.topK, topP: Float(defaults.topP),
                                          minP: Float(defaults.minP), seed: 1)
        func median(_ f: () throws -> Double) rethrows -> Double { try (0..<7).map { _ in try f() }.sorted()[3] }
        let greedy = try median { try loopOverheadMicroseconds(model: model, logits: logits, sampling: .greedy) }
        let sampled = try median { try loopOverheadMicroseconds(model: model, logits: logits, sampling: sampling) }
        print(String(format: "RESULT loop_greedy_us=%.1f loop_default_us=%.1f", greedy, sampled))
    } catch {
        fail("\(error)")
    }
    exit(0)
}

do {
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("ttft-bench-\(ProcessInfo.processInfo.processIdentifier)")
    defer { try? FileManager.default.removeItem(at: work) }
    let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: work))
    let imported = try await sdk.models.importLocal(file: URL(fileURLWithPath: path), id: "ttft", placements: [.hardLink, .symlink])
    let id = imported.model.id
    let greedy = LlmOptions(model: id, maxTokens: maxTokens, temperature: 0)

    if dropPageCache { PageCache.drop(path) }
    let pageCacheBytesAtLoad = PageCache.residentBytes(path)
    var start = clock.now
    _ = try await sdk.models.load(id: id, options: LoadOptions(contextLength: contextLength, threads: threads))
    let loadSeconds = seconds(clock.now - start)
    let cold = try await request(sdk, benchMessages[0], greedy)

    let spoiler = LlmOptions(model: id, maxTokens: 1, temperature: 0, rawPrompt: true)
    var fresh: [Request] = [], prefix: [Request] = [], repeated: [Request] = []
    for message in benchMessages.dropFirst() {
        _ = try await request(sdk, "Zebra", spoiler)
        fresh.append(try await request(sdk, message, greedy))
    }
    for message in benchMessages { prefix.append(try await request(sdk, message, greedy)) }
    for _ in benchMessages { repeated.append(try await request(sdk, benchMessages[1], greedy)) }

    // The same steps on the engine itself.
    let model = try GGUFModel(path: path)
    let context = try GGUFContext(model: model, contextLength: contextLength, threads: threads)
    guard let template = ChatTemplate(file: model.file) else { fail("\(path) has no chat template") }
    let defaults = LlmOptions()
    let defaultSampling = SamplingParameters(temperature: Float(defaults.temperature), topK: defaults.topK, topP: Float(defaults.topP),
                                             minP: Float(defaults.minP), seed: 1)
    var split: [Split] = [], prompts: [Prompt] = []
    for message in benchMessages {
        start = clock.now
        let text = template.render([ChatMessage(role: "user", content: message)], addGenerationPrompt: true)
        let render = seconds(clock.now - start)
        start = clock.now
        let tokens = model.tokenizer.encode(text, addSpecial: !template.rendersBOS(text), parseSpecial: true)
        let tokenize = seconds(clock.now - start)
        context.reset()
        let g = try context.generate(prompt: tokens, sampling: .greedy, maxTokens: 1, stop: [], shouldContinue: { true }, onText: { _ in })
        context.reset()
        let d = try context.generate(prompt: tokens, sampling: defaultSampling, maxTokens: 1, stop: [], shouldContinue: { true }, onText: { _ in })
        split.append(Split(promptTokens: tokens.count, render: render, tokenize: tokenize, prefill: g.promptSeconds,
                           sampleGreedy: g.decodeSeconds, sampleDefault: d.decodeSeconds))
        prompts.append(Prompt(text: text, tokens: tokens, userTokens: model.tokenizer.encode(message, addSpecial: false).count))
    }

    // Decode: the same prompt, greedy, `tg` tokens three ways.
    let decodeText = template.render([ChatMessage(role: "user", content: decodeMessage)], addGenerationPrompt: true)
    let decodeTokens = model.tokenizer.encode(decodeText, addSpecial: !template.rendersBOS(decodeText), parseSpecial: true)
    context.reset()
    let promptLogits = try context.evaluate(decodeTokens)
    var token = Greedy.token(promptLogits)
    start = clock.now
    for _ in 1..<tg { token = Greedy.token(try context.decode(token)) }
    let engineLoop = Double(tg - 1) / seconds(clock.now - start)
    context.reset()
    let loop = try context.generate(prompt: decodeTokens, sampling: .greedy, maxTokens: tg, stop: [], shouldContinue: { true }, onText: { _ in })
    let tokenLoop = Double(loop.generatedTokens - 1) / loop.decodeSeconds
    _ = try await request(sdk, "Zebra", spoiler)
    let api = try await request(sdk, decodeMessage, LlmOptions(model: id, maxTokens: tg, temperature: 0))
    // `llm.generate` (the whole text at the end): its result's own figure, from a second identical call.
    _ = try await request(sdk, "Zebra", spoiler)
    let apiResult = try await sdk.llm.generate(prompt: decodeMessage, options: LlmOptions(model: id, maxTokens: tg, temperature: 0)).tokensPerSecond
    let decode = Decode(tokens: tg, engineLoop: engineLoop, tokenLoop: tokenLoop,
                        apiStream: Double(api.outputTokens - 1) / (api.lastTextAt - api.ttft), apiResult: apiResult,
                        apiTokens: api.outputTokens,
                        loopGreedyMicroseconds: try loopOverheadMicroseconds(model: model, logits: promptLogits, sampling: .greedy),
                        loopDefaultMicroseconds: try loopOverheadMicroseconds(model: model, logits: promptLogits, sampling: defaultSampling))

    let report = Report(threads: threads, contextLength: contextLength, loadSeconds: loadSeconds,
                        pageCacheBytesAtLoad: pageCacheBytesAtLoad, fileBytes: Int(imported.model.artifact.totalSizeBytes ?? 0), cold: cold, fresh: fresh,
                        prefix: prefix, repeated: repeated, split: split, decode: decode, prompts: prompts)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    FileHandle.standardOutput.write(try encoder.encode(report))
    print("")
    try await sdk.models.unloadAll()
} catch {
    fail("\(error)")
}
