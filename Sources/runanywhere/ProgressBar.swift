import Foundation
import RunAnywhere
import Synchronization

/// Download progress on stderr: a redrawn bar on a terminal, a line every few seconds otherwise.
final class ProgressBar: Sendable {
    private struct State {
        var lastLine = 0.0
        var drawn = false
    }

    private let label: String
    private let enabled: Bool
    private let tty = Output.stderrIsTTY
    private let state = Mutex(State())

    init(label: String, enabled: Bool) {
        self.label = label
        self.enabled = enabled
    }

    func start(totalBytes: Int64?, files: Int, resumed: Int64) {
        guard enabled else { return }
        var text = "Downloading \(label): \(totalBytes.map(ByteFormatter.string) ?? "size unknown")"
        if files > 1 { text += " in \(files) files" }
        if resumed > 0 { text += ", \(ByteFormatter.string(resumed)) already here" }
        Output.stderr(text)
    }

    func update(_ p: DownloadProgress) {
        guard enabled else { return }
        let now = Date().timeIntervalSince1970
        let line = Self.describe(p)
        state.withLock { s in
            if tty {
                let width = 24
                let fraction = p.overallProgress ?? p.fraction ?? 0
                let filled = Int((fraction * Double(width)).rounded(.down))
                let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                Output.stderr("\r\u{1B}[2K\(bar) \(line)", terminator: "")
                s.drawn = true
            } else if now - s.lastLine >= 2 {
                Output.stderr(line)
                s.lastLine = now
            }
        }
    }

    func note(_ text: String) {
        guard enabled else { return }
        state.withLock { s in
            if tty && s.drawn { Output.stderr("\r\u{1B}[2K", terminator: ""); s.drawn = false }
        }
        Output.stderr(text)
    }

    func finish(_ text: String) { note(text) }

    func abort() {
        guard enabled else { return }
        state.withLock { s in
            if tty && s.drawn { Output.stderr(""); s.drawn = false }
        }
    }

    /// "42.0% 268 MB / 639 MB, 31.2 MB/s, ETA 12 s, retry 1, file 1/2".
    static func describe(_ p: DownloadProgress) -> String {
        var parts: [String] = []
        if let pct = p.overallProgress.map({ $0 * 100 }) ?? p.percent { parts.append(String(format: "%5.1f%%", pct)) }
        let total = p.overallBytesTotal.map { " / " + ByteFormatter.string($0) } ?? ""
        parts.append(ByteFormatter.string(p.overallBytesDone) + total)
        if let bps = p.bytesPerSecond { parts.append(ByteFormatter.string(Int64(bps)) + "/s") }
        if let eta = p.etaSeconds { parts.append("ETA " + formatSeconds(eta)) }
        if p.retryAttempt > 0 { parts.append("retry \(p.retryAttempt)") }
        if p.totalFiles > 1 { parts.append("file \(p.currentFileIndex + 1)/\(p.totalFiles)") }
        return parts.joined(separator: ", ")
    }

    static func formatSeconds(_ s: Double) -> String {
        if s < 60 { return "\(Int(s.rounded())) s" }
        if s < 3600 { return "\(Int(s) / 60) min \(Int(s) % 60) s" }
        return "\(Int(s) / 3600) h \(Int(s) % 3600 / 60) min"
    }
}
