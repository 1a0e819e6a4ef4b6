import CKernels
import Foundation
import RunAnywhereGGUF

/// Settings of `real-check compare`.
struct CompareOptions {
    var path = "native"
    var threads = 2
    /// Allowed difference of each of llama.cpp's top-20 logits at the prompt's last position (logits).
    var tolerance: Float = 1
    /// Greedy tokens are compared up to the first step where llama.cpp's top-2 margin is below this (logits);
    /// default twice the tolerance: when every logit is within the tolerance, such a margin cannot flip.
    var margin: Float?
}

extension CompareOptions {
    var marginOrDefault: Float { margin ?? 2 * tolerance }
}

/// One prompt of a llama.cpp reference file (bench/real/llama_reference.py).
struct ReferenceEntry {
    let name: String
    let text: String
    let addSpecial: Bool
    let parseSpecial: Bool
    let ids: [Int32]
    let top: [(id: Int32, logit: Float)]
    let greedy: [Int32]
    let margins: [Float]
    let expect: [String]

    init(_ d: [String: Any]) {
        func ints(_ k: String) -> [Int32] { (d[k] as? [Int] ?? []).map { Int32($0) } }
        name = d["name"] as? String ?? "?"
        text = d["text"] as? String ?? ""
        addSpecial = d["add_special"] as? Bool ?? true
        parseSpecial = d["parse_special"] as? Bool ?? false
        ids = ints("ids")
        top = (d["top"] as? [[Double]] ?? []).map { (Int32($0[0]), Float($0[1])) }
        greedy = ints("greedy")
        margins = (d["margins"] as? [Double] ?? []).map { Float($0) }
        expect = d["expect"] as? [String] ?? []
    }
}

/// The outcome for one prompt.
struct PromptResult {
    var tokensEqual = false
    var topRelative: Float = 0
    var topAbsolute: Float = 0
    /// Leading greedy tokens equal to llama.cpp's, whatever the margins.
    var equalPrefix = 0
    var compared = 0
    var agreed = 0
    var generated = 0
    var answerOK: Bool?
    var text = ""

    var passed: Bool { tokensEqual && agreed == compared && answerOK != false }
}

func compare(model: GGUFModel, referencePath: String, options: CompareOptions) -> Bool {
    guard let root = readJSON(referencePath) as? [String: Any], let list = root["prompts"] as? [[String: Any]] else {
        fail("\(referencePath): not a reference file")
    }
    let entries = list.map(ReferenceEntry.init)
    let longest = entries.map { $0.ids.count + $0.greedy.count }.max() ?? 1
    let context: GGUFContext
    do {
        context = try GGUFContext(model: model, contextLength: longest + 8, threads: options.threads)
    } catch {
        fail("cannot create a context: \(error)")
    }
    let kernels = String(cString: ra_kernel_path_name(ra_kernel_path()))
    print("kernels: \(kernels); top-20 logits within \(options.tolerance); greedy compared while llama.cpp's top-2 margin >= \(options.marginOrDefault)")
    print("")
    print("| prompt | tokens equal | top-20 max diff (relative) | greedy agreed / compared | equal prefix / generated | answer | our text |")
    print("|---|---|---:|---:|---:|---|---|")
    var all = true
    var worst: Float = 0, worstAbsolute: Float = 0
    var agreedTotal = 0, comparedTotal = 0
    let start = Date()
    for e in entries {
        var r = PromptResult()
        do {
            r = try run(e, context: context, model: model, options: options)
        } catch {
            print("| \(e.name) | error: \(error) | | | | | |")
            all = false
            continue
        }
        r.tokensEqual = model.tokenizer.encode(e.text, addSpecial: e.addSpecial, parseSpecial: e.parseSpecial) == e.ids
        let ok = r.passed && r.topAbsolute <= options.tolerance
        all = all && ok
        worst = max(worst, r.topRelative)
        worstAbsolute = max(worstAbsolute, r.topAbsolute)
        agreedTotal += r.agreed
        comparedTotal += r.compared
        let answer = r.answerOK.map { $0 ? "ok" : "WRONG" } ?? "-"
        let shown = r.text.replacingOccurrences(of: "\n", with: "⏎").replacingOccurrences(of: "|", with: "\\|")
        print("| \(e.name) | \(r.tokensEqual ? "yes" : "NO") | \(String(format: "%.3f (%.4f)", r.topAbsolute, r.topRelative)) | \(r.agreed) / \(r.compared) | \(r.equalPrefix) / \(r.generated) | \(answer) | \(shown.prefix(60)) |")
    }

    print("")
    print("summary: \(all ? "AGREE" : "DISAGREE") on \(kernels): \(entries.count) prompts, greedy \(agreedTotal)/\(comparedTotal) compared tokens equal, worst top-20 difference \(String(format: "%.3f", worstAbsolute)) logits (relative \(String(format: "%.4f", worst))), \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    return all
}

/// Runs one prompt: logits at its last position, then free-running greedy decoding.
func run(_ e: ReferenceEntry, context: GGUFContext, model: GGUFModel, options: CompareOptions) throws -> PromptResult {
    var r = PromptResult()
    context.reset()
    var logits = try context.evaluate(e.ids)
    let scale = e.top.map { abs($0.logit) }.max() ?? 1
    for (id, logit) in e.top { r.topAbsolute = max(r.topAbsolute, abs(logits[Int(id)] - logit)) }
    r.topRelative = r.topAbsolute / scale
    var ours: [Int32] = []
    for step in 0..<e.greedy.count {
        let id = Greedy.token(logits)
        ours.append(id)
        if step + 1 < e.greedy.count { logits = try context.decode(id) }
    }
    r.generated = ours.count
    r.equalPrefix = zip(ours, e.greedy).prefix { $0 == $1 }.count
    // Compared while the histories are equal and llama.cpp's choice is clear.
    for step in 0..<ours.count {
        guard e.margins[step] >= options.marginOrDefault else { break }
        r.compared += 1
        if ours[step] == e.greedy[step] { r.agreed += 1 } else { break }
    }
    let visible = ours.prefix { !model.tokenizer.isEndOfGeneration($0) }
    r.text = model.tokenizer.decode(Array(visible))
    if !e.expect.isEmpty {
        r.answerOK = e.expect.contains { r.text.lowercased().contains($0.lowercased()) }
    }
    return r
}
