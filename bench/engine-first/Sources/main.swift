// engine-bench: prompt (pp) and decode (tg) throughput of the native GGUF engine, like llama-bench.
//
//   engine-bench MODEL.gguf [--threads 2] [--pp 128] [--tg 64] [--reps 3] [--depth 0]
//   engine-bench MODEL.gguf --report [--threads 2] [--pp 128] [--tg 128] [--ctx 256] [--depth 0]
//   --cpu scalar|avx2|avx2-vnni|avx512|avx512-vnni|native: run the kernels of that path only (default: the best this CPU has)
//   --x8-prefetch BYTES: how far ahead the AVX2 decode kernels of repacked rows prefetch (0: not at all; default: the
//             CPU's choice, ra_x8_prefetch), to compare both on one machine
//   --no-repack: keep Q4_K and Q5_K matrices in the file's layout (GGUFModel(path:repackWeights: false)), for before/after
//   --sample: tg through GGUFContext.generate with the default SamplingParameters (seed 1), the token loop
//             the CLI runs (sampling, detokenizing) instead of decode + argmax (not with --report)
//
// --report (used by bench/engine/run.sh, one process per measurement): load time (model + context),
// RSS after load, one pp run and one tg run after a warm-up, peak RSS, printed as one RESULT line (the tg run
// starts after `depth` random tokens were evaluated into the cache, in batches of `pp`; with depth > 0,
// pp_depth is one more batch of `pp` tokens timed there and taken out of the cache again before tg).
//
// pp: `pp` random tokens evaluated as one batch after `depth` random tokens already in the cache (0: an empty
// cache; a new chat message after a long history); tg: `tg` tokens decoded one at a time after `depth` tokens.
// Each is repeated `reps` times; mean, spread and best run are printed as Markdown.
import Foundation
import RunAnywhereGGUF
import CKernels

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

var args = Array(CommandLine.arguments.dropFirst())
var threads = 2, pp = 128, tg = 64, reps = 3, depth = 0, ctx = 0
var report = false, sample = false, repack = true
var path: String?
while !args.isEmpty {
    let a = args.removeFirst()
    func value(minimum: Int = 1) -> Int {
        guard !args.isEmpty, let v = Int(args.removeFirst()), v >= minimum else { fail("\(a) needs a number >= \(minimum)") }
        return v
    }
    switch a {
    case "--threads": threads = value()
    case "--pp": pp = value()
    case "--tg": tg = value()
    case "--reps": reps = value()
    case "--depth": depth = value(minimum: 0)
    case "--ctx": ctx = value()
    case "--report": report = true
    case "--sample": sample = true
    case "--no-repack": repack = false
    case "--x8-prefetch": ra_set_x8_prefetch(Int32(value(minimum: 0)))
    case "--cpu":
        // Restrict the kernels to a lower path than the CPU offers (what a machine without AVX-512 would run).
        guard !args.isEmpty else { fail("--cpu needs a path name or native") }
        let name = args.removeFirst()
        let path = ra_kernel_path_named(name)
        guard name == "native" || path >= 0 else { fail("--cpu \(name): not a kernel path of this architecture (or native)") }
        ra_set_cpu_features_mask(name == "native" ? -1 : ra_kernel_path_mask(path))
    case "-h", "--help":
        print("usage: engine-bench MODEL.gguf [--threads N] [--pp N] [--tg N] [--reps N] [--depth N] [--cpu scalar|avx2|avx2-vnni|avx512|avx512-vnni|native] [--sample] [--no-repack] [--x8-prefetch BYTES]")
        exit(0)
    default:
        if path == nil { path = a } else { fail("unexpected argument \(a)") }
    }
}
FileHandle.standardError.write(Data("kernels: \(String(cString: ra_kernel_path_name(ra_kernel_path()))), repacked rows prefetched \(ra_x8_prefetch(Int32(RA_Q4_K))) bytes ahead (Q3_K, Q2_K: \(ra_x8_prefetch(Int32(RA_Q3_K))))\n".utf8))
guard let path else { fail("usage: engine-bench MODEL.gguf [--threads N] [--pp N] [--tg N] [--reps N] [--depth N]") }

let clock = ContinuousClock()
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

/// A "Vm..." line of /proc/self/status in MiB (-1 when it cannot be read).
func statusMiB(_ key: String) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        let digits = line.split(separator: " ").compactMap { Double($0) }
        if let kb = digits.first { return kb / 1024 }
    }
    return -1
}

if report {
    do {
        let t0 = clock.now
        let model = try GGUFModel(path: path, repackWeights: repack)
        let context = try GGUFContext(model: model, contextLength: max(ctx, pp, depth + max(tg, pp) + 1), threads: threads, batchSize: pp)
        let loadSeconds = seconds(clock.now - t0)
        let rssLoad = statusMiB("VmRSS")
        let vocab = Int32(model.vocabularySize)
        var rng = SystemRandomNumberGenerator()
        _ = try context.evaluate((0..<pp).map { _ in Int32.random(in: 0..<vocab, using: &rng) })   // warm-up
        context.reset()
        let tokens = (0..<pp).map { _ in Int32.random(in: 0..<vocab, using: &rng) }
        var start = clock.now
        _ = try context.evaluate(tokens)
        let ppRate = Double(pp) / seconds(clock.now - start)
        context.reset()
        var ppDepthRate = ppRate
        if depth > 0 {
            _ = try context.evaluate((0..<depth).map { _ in Int32.random(in: 0..<vocab, using: &rng) })
            let batch = (0..<pp).map { _ in Int32.random(in: 0..<vocab, using: &rng) }
            start = clock.now
            _ = try context.evaluate(batch)
            ppDepthRate = Double(pp) / seconds(clock.now - start)
            context.truncate(to: depth)
        }
        var token: Int32 = 1
        start = clock.now
        for _ in 0..<tg {
            token = Greedy.token(try context.decode(token))
        }
        let tgRate = Double(tg) / seconds(clock.now - start)
        print(String(format: "RESULT load_s=%.4f pp=%.3f tg=%.3f pp_depth=%.3f rss_load_mib=%.1f rss_peak_mib=%.1f",
                     loadSeconds, ppRate, tgRate, ppDepthRate, rssLoad, statusMiB("VmHWM")))
    } catch {
        fail("engine-bench: \(error)")
    }
    exit(0)
}

do {
    let t0 = clock.now
    let model = try GGUFModel(path: path, repackWeights: repack)
    let loadSeconds = seconds(clock.now - t0)
    let context = try GGUFContext(model: model, contextLength: depth + max(pp, tg) + 16, threads: threads, batchSize: pp)
    var rng = SystemRandomNumberGenerator()
    let vocab = Int32(model.vocabularySize)
    let d = model.description
    print("model: \(path)")
    print("arch \(d.architecture), \(d.blockCount) layers, hidden \(d.embeddingLength), \(d.quantization), \(d.tensorBytes / 1_000_000) MB of tensors; load \(String(format: "%.2f", loadSeconds)) s; threads \(threads); kernels \(String(cString: ra_kernel_path_name(ra_kernel_path())))")

    // Warm-up: touch every weight page once.
    _ = try context.evaluate([1, 2, 3, 4])
    context.reset()

    var ppRates: [Double] = []
    for _ in 0..<reps {
        let tokens = (0..<pp).map { _ in Int32.random(in: 0..<vocab, using: &rng) }
        context.reset()
        if depth > 0 { _ = try context.evaluate((0..<depth).map { _ in Int32.random(in: 0..<vocab, using: &rng) }) }
        let start = clock.now
        _ = try context.evaluate(tokens)
        ppRates.append(Double(pp) / seconds(clock.now - start))
    }
    var tgRates: [Double] = []
    for _ in 0..<reps {
        context.reset()
        if depth > 0 { _ = try context.evaluate((0..<depth).map { _ in Int32.random(in: 0..<vocab, using: &rng) }) }
        if sample {
            var parameters = SamplingParameters()
            parameters.seed = 1
            let stats = try context.generate(prompt: context.cachedTokens + [1], sampling: parameters, maxTokens: tg, stop: [],
                                             shouldContinue: { true }, onText: { _ in })
            tgRates.append(Double(stats.generatedTokens) / stats.decodeSeconds)
            continue
        }
        var token: Int32 = 1
        let start = clock.now
        for _ in 0..<tg {
            token = Greedy.token(try context.decode(token))
        }
        tgRates.append(Double(tg) / seconds(clock.now - start))
    }
    func summary(_ r: [Double]) -> String {
        let mean = r.reduce(0, +) / Double(r.count)
        let sd = (r.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(1, r.count - 1))).squareRoot()
        return String(format: "%.2f ± %.2f | %.2f", mean, sd, r.max() ?? 0)
    }
    print("")
    print("| test | threads | tokens/s (mean ± sd) | best |")
    print("|---|---:|---:|---:|")
    print("| pp\(pp)\(depth > 0 ? " @ d\(depth)" : "") | \(threads) | \(summary(ppRates)) |")
    print("| tg\(tg)\(depth > 0 ? " @ d\(depth)" : "") | \(threads) | \(summary(tgRates)) |")
} catch {
    fail("engine-bench: \(error)")
}
