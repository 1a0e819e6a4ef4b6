// vlm-bench: times the native engine's image encoding and time to first token on one image
// (bench/vlm/run.sh compares it with llama.cpp's mtmd on the same files and threads).
//
//   vlm-bench --text T.gguf --mmproj M.gguf --image photo.png [--threads N] [--reps R] [--scalar] [--dump F.bin]
import CKernels
import Foundation
import RunAnywhereGGUF
import RunAnywhereImaging

func value(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: "--" + name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("vlm-bench: \(message)\n".utf8))
    exit(2)
}

guard let textPath = value("text"), let projPath = value("mmproj"), let imagePath = value("image") else {
    fail("usage: vlm-bench --text T.gguf --mmproj M.gguf --image FILE [--threads N] [--reps R] [--scalar]")
}
let threads = Int(value("threads") ?? "2") ?? 2
let reps = max(1, Int(value("reps") ?? "3") ?? 3)
if CommandLine.arguments.contains("--scalar") { ra_set_cpu_features_mask(0) }

do {
    let image = try ImageDecoder.decode(contentsOf: URL(fileURLWithPath: imagePath))
    let model = try GGUFModel(path: textPath)
    let vision = try GGUFVisionModel(path: projPath)
    let context = try GGUFContext(model: model, contextLength: 2048, threads: threads, batchSize: 512)
    var encodes: [Double] = [], ttfts: [Double] = []
    var tokens = 0
    for _ in 0..<reps {
        let clock = ContinuousClock()
        let start = clock.now
        let embedded = try context.encode(image, with: vision)
        encodes.append(embedded.encodeSeconds)
        if let dump = value("dump"), encodes.count == 1 {  // float32 image embeddings, tiles in mtmd's order
            try embedded.values.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: dump)) }
        }
        context.reset()
        let parts: [VisionPromptPart] = [.text("<|im_start|>User:"), .image(embedded),
                                         .text("What is in this picture?<end_of_utterance>\nAssistant:")]
        var first: Double?
        let stats = try context.generate(parts: parts, sampling: .greedy, maxTokens: 1, stop: [], shouldContinue: { true },
                                         onText: { _ in if first == nil { first = 0 } })
        let c = (clock.now - start).components
        ttfts.append(Double(c.seconds) + Double(c.attoseconds) * 1e-18)
        tokens = stats.promptTokens
    }
    let median = { (xs: [Double]) in xs.sorted()[xs.count / 2] }
    print(String(format: "{\"path\": \"%@\", \"threads\": %d, \"image\": \"%dx%d\", \"prompt_tokens\": %d, \"encode_s\": %.4f, \"ttft_s\": %.4f}",
                 String(cString: ra_kernel_path_name(ra_kernel_path())), threads, image.width, image.height, tokens,
                 median(encodes), median(ttfts)))
} catch {
    fail("\(error)")
}
