// download-bench: drives the SDK's downloader for bench/download/run.sh. Not a product.
//
//   download-bench file URL DIR [--connections N] [--size BYTES] [--sha256 HEX] [--no-progress] [--kill-at BYTES]
//       FileDownloader (the engine under `models pull`), default policy except --connections; the file lands
//       in DIR/out, its partial and journal in DIR/work (so a killed run resumes when run again).
//       --kill-at: once progress reports at least BYTES written, print {"killedAt": bytes} and SIGKILL itself.
//   download-bench model ID URL... [--connections N]
//       The public API with RUNANYWHERE_HOME from the environment: registers ID as a model of these files
//       (sizes unknown, as `models register` without --size) and downloads it with RunAnywhere.models.download(id:).
//
// Prints one JSON line: seconds, bytes, progress callbacks or events, and the SHA-256 for `file`.
import Foundation
import RunAnywhere
import Synchronization

struct Failure: Error, CustomStringConvertible { var description: String }

func option(_ args: [String], _ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func positionals(_ args: [String]) -> [String] {
    var out: [String] = []
    var i = 0
    while i < args.count {
        if args[i].hasPrefix("--") { i += args[i] == "--no-progress" ? 1 : 2; continue }
        out.append(args[i])
        i += 1
    }
    return out
}

func json(_ fields: [String: Any]) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
    return String(decoding: data, as: UTF8.self)
}

func runFile(_ args: [String]) async throws {
    let pos = positionals(args)
    guard pos.count >= 2, let url = URL(string: pos[0]) else { throw Failure(description: "usage: file URL DIR [options]") }
    let dir = URL(fileURLWithPath: pos[1])
    var policy = DownloadPolicy()
    if let n = option(args, "--connections").flatMap(Int.init) { policy.maxConnections = n }
    let request = FileDownloadRequest(url: url, destination: dir.appendingPathComponent("out/\(url.lastPathComponent)"),
                                      workingDirectory: dir.appendingPathComponent("work"),
                                      expectedSize: option(args, "--size").flatMap(Int64.init),
                                      expectedSHA256: option(args, "--sha256"))
    let callbacks = Atomic<Int>(0)
    let counting = !args.contains("--no-progress")
    let killAt = option(args, "--kill-at").flatMap(Int64.init)
    let started = Date()
    let result = try await FileDownloader(policy: policy).download(request, progress: { p in
        if counting { callbacks.add(1, ordering: .relaxed) }
        if let killAt, p.bytesDone >= killAt {
            FileHandle.standardOutput.write(Data((json(["killedAt": p.bytesDone]) + "\n").utf8))
            kill(getpid(), SIGKILL)
        }
    })
    let seconds = Date().timeIntervalSince(started)
    print(json(["seconds": seconds, "bytes": result.size, "sha256": result.sha256, "resumedFrom": result.resumedFrom,
                "progressCallbacks": callbacks.load(ordering: .relaxed), "retries": result.retries]))
}

func runModel(_ args: [String]) async throws {
    let pos = positionals(args)
    guard pos.count >= 2 else { throw Failure(description: "usage: model ID URL...") }
    let id = pos[0]
    var descriptors: [ModelFileDescriptor] = []
    for raw in pos.dropFirst() {
        guard let url = URL(string: raw) else { throw Failure(description: "not a URL: \(raw)") }
        descriptors.append(ModelFileDescriptor(url: url))
    }
    _ = try await RunAnywhere.registerModel(multiFile: descriptors, id: id, name: id, framework: .llamaCpp, modality: .language)
    let started = Date()
    var events = 0
    var bytes: Int64 = 0
    for try await event in try await RunAnywhere.models.download(id: id) {
        events += 1
        if case .completed(let info) = event { bytes = info.downloadSize ?? 0 }
    }
    let seconds = Date().timeIntervalSince(started)
    print(json(["seconds": seconds, "bytes": bytes, "events": events]))
}

let args = Array(CommandLine.arguments.dropFirst())
do {
    switch args.first {
    case "file": try await runFile(Array(args.dropFirst()))
    case "model": try await runModel(Array(args.dropFirst()))
    default: throw Failure(description: "usage: download-bench file|model ...")
    }
} catch {
    FileHandle.standardError.write(Data("download-bench: \(error)\n".utf8))
    exit(1)
}
