// real-check: drives the native GGUF engine (RunAnywhereGGUF, not the SDK) for the real-weights check
// (bench/real/run.sh) and the tiny Gemma 3 reference (bench/real/tiny_gemma3_reference.py).
//
//   real-check write-tiny-gemma3 DIR
//       writes the tiny random-weight Gemma 3 models of TinyGemma3 (RunAnywhereTestSupport) into DIR
//   real-check render MODEL PROMPTS.json OUT.json
//       expands the prompt list: chat entries are rendered with the model's own chat template (our Jinja
//       runtime), or dropped when the model has none; every entry gets the exact text and whether
//       special-token text is parsed
//   real-check greedy MODEL TEXT [N] [--cpu P]
//       prints the engine's greedy continuation of TEXT (N tokens, default 24) and the tokens it used
//   real-check compare MODEL REFERENCE.json [--cpu scalar|avx2|avx512|native] [--threads N]
//                      [--tolerance T] [--margin M]
//       compares the engine with llama.cpp's outputs (bench/real/llama_reference.py): tokenization, the
//       top-20 logits at the prompt's last position (each within T logits, default 1), free-running greedy
//       tokens up to the first step where llama.cpp's top-2 margin is below M (default 2T), and the expected
//       answers of chat prompts. Prints a Markdown table; exit status 1 when anything disagrees.
import CKernels
import Foundation
import RunAnywhereGGUF
import RunAnywhereTestSupport

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

func readJSON(_ path: String) -> Any {
    guard let data = FileManager.default.contents(atPath: path),
          let value = try? JSONSerialization.jsonObject(with: data) else { fail("cannot read JSON from \(path)") }
    return value
}

func writeJSON(_ value: Any, to path: String) {
    do {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
    } catch {
        fail("cannot write \(path): \(error)")
    }
}

func openModel(_ path: String) -> GGUFModel {
    do { return try GGUFModel(path: path) } catch { fail("cannot open \(path): \(error)") }
}

/// Restricts the kernels to one path (the names of bench/engine-first's --cpu).
func setPath(_ name: String) {
    guard KernelPath.restrictProcess(to: name) else { fail("--cpu needs one of \(KernelPath.processNames.joined(separator: ", "))") }
}

func writeTinyGemma3(_ dir: String) {
    do {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for name in TinyGemma3.names {
            guard let spec = TinyGemma3.spec(name) else { continue }
            let path = dir + "/\(name).gguf"
            try GGUFWriter.tinyModel(spec).write(to: path)
            guard let bytes = FileManager.default.contents(atPath: path) else { fail("cannot read back \(path)") }
            print(name, path, String(TinyGemma3.fingerprint(bytes), radix: 16))
        }
    } catch {
        fail("cannot write the tiny Gemma 3 models: \(error)")
    }
}

func render(_ modelPath: String, _ promptsPath: String, _ outPath: String) {
    let model = openModel(modelPath)
    guard let entries = readJSON(promptsPath) as? [[String: Any]] else { fail("\(promptsPath): expected a list of prompts") }
    let template = ChatTemplate(file: model.file)
    var out: [[String: Any]] = []
    for var e in entries {
        if let question = e["chat"] as? String {
            guard let template else { continue }   // a base model (Gemma 3 270M) has no chat template
            let text = template.render([ChatMessage(role: "user", content: question)], addGenerationPrompt: true)
            e["text"] = text
            e["parse_special"] = true
            e["add_special"] = !template.rendersBOS(text)
        } else {
            e["parse_special"] = false
            e["add_special"] = true
        }
        out.append(e)
    }
    writeJSON(out, to: outPath)
}

func greedy(_ model: GGUFModel, _ text: String, count: Int) {
    let ids = model.tokenizer.encode(text)
    do {
        let context = try GGUFContext(model: model, contextLength: ids.count + count + 1, threads: 2)
        var logits = try context.evaluate(ids)
        var out: [Int32] = []
        for _ in 0..<count {
            let id = Greedy.token(logits)
            out.append(id)
            logits = try context.decode(id)
        }
        print("prompt ids: \(ids)")
        print("greedy ids: \(out)")
        print(text + model.tokenizer.decode(out))
    } catch {
        fail("generation failed: \(error)")
    }
}

var args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else {
    fail("usage: real-check write-tiny-gemma3 DIR | render MODEL PROMPTS OUT | compare MODEL REFERENCE [options]")
}
args.removeFirst()
switch command {
case "write-tiny-gemma3":
    guard args.count == 1 else { fail("usage: real-check write-tiny-gemma3 DIR") }
    writeTinyGemma3(args[0])
case "render":
    guard args.count == 3 else { fail("usage: real-check render MODEL PROMPTS.json OUT.json") }
    render(args[0], args[1], args[2])
case "greedy":
    if let i = args.firstIndex(of: "--cpu"), i + 1 < args.count {
        setPath(args[i + 1])
        args.removeSubrange(i...(i + 1))
    }
    guard args.count == 2 || args.count == 3 else { fail("usage: real-check greedy MODEL TEXT [N] [--cpu P]") }
    greedy(openModel(args[0]), args[1], count: args.count == 3 ? Int(args[2]) ?? 24 : 24)
case "compare":
    var options = CompareOptions()
    var positional: [String] = []
    while !args.isEmpty {
        let a = args.removeFirst()
        func value() -> String {
            guard !args.isEmpty else { fail("\(a) needs a value") }
            return args.removeFirst()
        }
        switch a {
        case "--cpu": options.path = value()
        case "--threads": options.threads = Int(value()) ?? options.threads
        case "--margin": options.margin = Float(value())
        case "--tolerance": options.tolerance = Float(value()) ?? options.tolerance
        default: positional.append(a)
        }
    }
    guard positional.count == 2 else { fail("usage: real-check compare MODEL REFERENCE.json [--cpu P] [--threads N] [--tolerance T] [--margin M]") }
    setPath(options.path)
    let ok = compare(model: openModel(positional[0]), referencePath: positional[1], options: options)
    exit(ok ? 0 : 1)
default:
    fail("unknown command \(command)")
}
