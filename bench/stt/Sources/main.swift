// Speech benchmark driver (bench/stt/run.sh): registers the Moonshine model from a loopback mirror, then in
// this one process measures load time, each clip's words and processing time over several repetitions, and
// the resident memory before the first load, after it, after unload, and around a second load/unload cycle
// (total RSS, and the anonymous part: heap and arenas, without the library's mapped code).
// Prints one JSON object on stdout.
import Foundation
import RunAnywhere
import RunAnywhereSherpa
import RunAnywhereTestSupport

struct Report: Encodable {
    struct Clip: Encodable { var file: String; var text: String; var audioSeconds: Double; var processingSeconds: [Double] }
    var threads: Int
    var loadSeconds: [Double]
    var rssBeforeFirstLoad: Int64
    var rssAfterLoad: Int64
    var rssAfterFirstUnload: Int64
    var rssBeforeSecondLoad: Int64
    var rssAfterSecondUnload: Int64
    var heapBeforeFirstLoad: Int64
    var heapAfterLoad: Int64
    var heapAfterFirstUnload: Int64
    var clips: [Clip]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("stt-bench: \(message)\n".utf8))
    exit(1)
}

func rss() -> Int64 { ChildProcessProbe.residentBytes() ?? 0 }

/// Resident bytes that are anonymous memory (heap, arenas), from /proc/self/smaps_rollup; 0 off Linux.
func anonymous() -> Int64 {
    guard let text = try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("Anonymous:") {
        return (Int64(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
    return 0
}

let args = CommandLine.arguments
guard args.count >= 4, let threads = Int(args[2]), let reps = Int(args[3]) else {
    fail("usage: stt-bench TESTDATA THREADS REPS CLIP.wav...")
}
let testdata = URL(fileURLWithPath: args[1])
let clips = args.dropFirst(4).map { URL(fileURLWithPath: $0) }

do {
    let work = try TemporaryDirectory(prefix: "runanywhere-stt-bench")
    defer { work.remove() }
    let mirror = try ModelMirror()
    defer { mirror.stop() }
    let url = try SpeechTestData.publishMoonshine(on: mirror, scratch: work.url)
    let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: work.url.appendingPathComponent("home")))
    await sdk.models.registerBackend(SherpaOnnxBackend(vadModelPath: testdata.appendingPathComponent("silero_vad.onnx").path))
    try await SpeechTestData.registerMoonshine(url, with: sdk)
    for try await _ in try await sdk.models.download(id: "moonshine-base-en") {}
    let load = LoadOptions(threads: threads)

    let before = rss()
    let anonBefore = anonymous()
    let first = try await sdk.models.load(id: "moonshine-base-en", options: load)
    let afterLoad = rss()
    let anonLoaded = anonymous()
    var results: [Report.Clip] = []
    for clip in clips {
        var times: [Double] = []
        var text = ""
        var seconds = 0.0
        for _ in 0..<reps {
            let r = try await sdk.stt.transcribe(audio: .file(clip), options: SttOptions(model: "moonshine-base-en"))
            times.append(r.processingSeconds)
            text = r.text
            seconds = r.audioDurationSeconds
        }
        results.append(.init(file: clip.lastPathComponent, text: text, audioSeconds: seconds, processingSeconds: times))
    }
    try await sdk.models.unload(id: "moonshine-base-en")
    try await Task.sleep(for: .milliseconds(300))   // a load task's closure can hold the model a moment longer
    let afterUnload = rss()
    let anonUnloaded = anonymous()
    let beforeSecond = rss()
    let second = try await sdk.models.load(id: "moonshine-base-en", options: load)
    _ = try await sdk.stt.transcribe(audio: .file(clips[0]), options: SttOptions(model: "moonshine-base-en"))
    try await sdk.models.unload(id: "moonshine-base-en")
    try await Task.sleep(for: .milliseconds(300))
    let afterSecond = rss()
    let report = Report(threads: threads, loadSeconds: [first.loadSeconds, second.loadSeconds], rssBeforeFirstLoad: before,
                        rssAfterLoad: afterLoad, rssAfterFirstUnload: afterUnload, rssBeforeSecondLoad: beforeSecond,
                        rssAfterSecondUnload: afterSecond, heapBeforeFirstLoad: anonBefore, heapAfterLoad: anonLoaded,
                        heapAfterFirstUnload: anonUnloaded, clips: results)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    FileHandle.standardOutput.write(try encoder.encode(report))
} catch {
    fail("\(error)")
}
