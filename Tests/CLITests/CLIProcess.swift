import Foundation
import Glibc
import RunAnywhereTestSupport

/// A `runanywhere` process the test talks to while it runs: writes its standard input, reads what it printed so
/// far, sends it signals.
final class CLIProcess: @unchecked Sendable {  // the buffers are guarded by `lock`
    let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    init(_ arguments: [String], home: String, root: String? = nil, environment extra: [String: String] = [:]) throws {
        guard let binary = CLI.binary else { throw CocoaError(.fileNoSuchFile) }
        signal(SIGPIPE, SIG_IGN)  // writing to a process that has exited must fail the test, not kill the runner
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ["RUNANYWHERE_HOME": root ?? home + "/root", "HOME": home, "NO_COLOR": "1",
                               "PATH": "/usr/bin:/bin"].merging(extra) { _, b in b }
        let o = Pipe(), e = Pipe()
        process.standardInput = input
        process.standardOutput = o
        process.standardError = e
        o.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.lock.withLock { self?.out.append(d) }
        }
        e.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.lock.withLock { self?.err.append(d) }
        }
        try process.run()
    }

    var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

    /// Writes `text` to its standard input.
    func send(_ text: String) { input.fileHandleForWriting.write(Data(text.utf8)) }

    /// Closes its standard input.
    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    func interrupt() { kill(process.processIdentifier, SIGINT) }

    /// Waits until `condition` holds (true) or `timeout` seconds pass (false).
    func waitFor(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Waits for the exit (SIGKILL after `timeout` seconds) and returns the status, nil on a timeout.
    func wait(timeout: Double = 120) -> Int32? {
        guard waitFor(timeout: timeout, { !process.isRunning }) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        usleep(50_000)  // the last output reaches the readability handlers
        return process.terminationStatus
    }
}

/// Deterministic bytes that do not compress.
func noise(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

/// Every file below `path`, relative to it.
func filesBelow(_ path: String) -> [String] {
    (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter {
        var dir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path + "/" + $0, isDirectory: &dir) && !dir.boolValue
    }
}
