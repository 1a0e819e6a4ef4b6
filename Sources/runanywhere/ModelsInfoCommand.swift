import Foundation
import RunAnywhere

/// `runanywhere models info ID`.
enum ModelsInfoCommand: Command {
    static let name = "info"
    static let summary = "Show everything known of one model"
    static let help = """
        Usage: runanywhere models info ID [--json]

        A model not downloaded whose size is unknown gets it from its server (when online, within 5 s); it is kept.
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, flags: ["json"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let id = try args.positional(0, "model id (see `runanywhere models list`)")
        guard var m = await RunAnywhere.models.get(id: id) else { throw RunAnywhereError.modelNotFound(id) }
        if !m.isDownloaded, m.downloadSize == nil, await !RunAnywhere.models.learnDownloadSizes(ids: [m.id]).isEmpty {
            // Asked the server (when online) for the size, and kept it.
            m = await RunAnywhere.models.get(id: id) ?? m
        }
        let partial = await RunAnywhere.models.resumableBytes(id: m.id)
        if args.flag("json") {
            try Output.json(ModelJSON(m, partialBytes: partial))
            return ExitCode.ok
        }
        var lines: [(String, String)] = [
            ("id", m.id), ("name", m.name), ("category", m.category.rawValue), ("framework", m.framework.rawValue),
            ("format", m.format.rawValue), ("source", m.source.rawValue), ("downloaded", m.isDownloaded ? "yes" : "no"),
            ("size", ModelText.size(m.downloadSize)),
        ]
        if let partial {
            let of = m.downloadSize.map { " of \(ByteFormatter.string($0)) (\(Int(100 * Double(partial) / Double(max(1, $0))))%)" } ?? ""
            lines.append(("partial", "\(ByteFormatter.string(partial))\(of) on disk; `runanywhere models pull \(m.id)` resumes"))
        }
        if let q = m.quantization { lines.append(("quantization", q)) }
        if let a = m.architecture { lines.append(("architecture", a)) }
        if let p = m.parameterCount { lines.append(("parameters", String(format: "%.2fM", Double(p) / 1e6))) }
        if let c = m.contextLength { lines.append(("context length", "\(c)")) }
        if let r = m.memoryRequirement { lines.append(("memory", ByteFormatter.string(r))) }
        if let s = m.sha256 { lines.append(("sha256", s)) }
        if let p = m.localPath { lines.append(("path", p.path)) }
        if let s = m.summary { lines.append(("description", s)) }
        for (i, f) in m.artifact.files.enumerated() {
            lines.append(("file \(i + 1)", "\(f.fileName) [\(f.role.rawValue)] \(ModelText.size(f.sizeBytes)) \(Redact.text(f.url.absoluteString))"))
        }
        if case .archive(_, let s) = m.artifact {
            lines.append(("archive", "\(s.format?.rawValue ?? "auto")\(s.rootDirectory.map { ", root \($0)/" } ?? "")\(s.expectedFiles.isEmpty ? "" : ", expects " + s.expectedFiles.joined(separator: ", "))"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        for (k, v) in lines { Output.out("\(k.padding(toLength: width, withPad: " ", startingAt: 0))  \(v)") }
        return ExitCode.ok
    }
}
