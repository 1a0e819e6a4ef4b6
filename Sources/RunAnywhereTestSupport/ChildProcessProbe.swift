import Foundation

/// Runs part of a test in a fresh copy of the test binary, so process-wide figures (resident memory)
/// are not disturbed by other tests running in parallel.
///
/// The parent calls ``run(suite:name:environment:)``; the test binary starts again with
/// `--filter <suite>` and `RUNANYWHERE_PROBE=<name>`. The child-side test is enabled only when
/// ``isChild(_:)`` is true; it measures and calls ``report(_:)``, and the parent gets those bytes back.
public enum ChildProcessProbe {
    static let nameVariable = "RUNANYWHERE_PROBE"
    static let outputVariable = "RUNANYWHERE_PROBE_OUT"

    /// Whether this process is the child started for probe `name`.
    public static func isChild(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[nameVariable] == name
    }

    /// In the child: hands `data` back to the parent.
    public static func report(_ data: Data) throws {
        guard let path = ProcessInfo.processInfo.environment[outputVariable] else {
            throw CocoaError(.fileNoSuchFile)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// In the parent: runs the tests of `suite` in a child process with `RUNANYWHERE_PROBE=name` (plus
    /// `environment`) and returns what the child reported, or nil when it reported nothing or failed.
    public static func run(suite: String, name: String, environment extra: [String: String] = [:]) throws -> Data? {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let dir = try TemporaryDirectory(prefix: "runanywhere-probe")
        defer { dir.remove() }
        let out = dir.path + "/report"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--testing-library", "swift-testing", "--filter", suite]
        var environment = ProcessInfo.processInfo.environment
        environment[nameVariable] = name
        environment[outputVariable] = out
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return try? Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// This process's resident set size in bytes (`/proc/self/statm`), or nil off Linux.
    public static func residentBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The most resident memory this process has had since it started or since ``resetPeakResident()``
    /// (`VmHWM` of /proc/self/status), or nil where there is no /proc.
    public static func peakResidentBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = line.split(separator: " ").dropFirst().first.flatMap({ Int64($0) }) else { return nil }
        return kb * 1024
    }

    /// Starts the peak over from the current resident size (writes 5 to /proc/self/clear_refs); false where the
    /// kernel does not allow it.
    @discardableResult
    public static func resetPeakResident() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}
