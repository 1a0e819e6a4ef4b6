import Foundation
import Glibc
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Testing

/// The `runanywhere` executable built beside the test bundle (or `$RUNANYWHERE_CLI`), when there is one.
let cliPath: String? = {
    let fm = FileManager.default
    if let path = ProcessInfo.processInfo.environment["RUNANYWHERE_CLI"], fm.isExecutableFile(atPath: path) { return path }
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("runanywhere").path
        if fm.isExecutableFile(atPath: candidate), !candidate.hasSuffix(".xctest") { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return nil
}()

/// One `runanywhere` process over a storage root.
final class CLIProcess: @unchecked Sendable {  // the Process is only started, signalled and waited on
    let process = Process()
    let output: URL

    init(_ arguments: [String], home: URL, environment extra: [String: String] = [:]) throws {
        guard let cliPath else { throw RunAnywhereError(.invalidConfiguration, "no runanywhere executable") }
        output = home.deletingLastPathComponent().appendingPathComponent("cli-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.executableURL = URL(fileURLWithPath: cliPath)
        process.arguments = arguments
        process.environment = ["RUNANYWHERE_HOME": home.path, "HOME": home.path, "NO_COLOR": "1",
                               "PATH": "/usr/bin:/bin"].merging(extra) { _, b in b }
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try? handle.close()
    }

    var pid: Int32 { process.processIdentifier }

    func kill9() { kill(process.processIdentifier, SIGKILL) }

    /// Waits for the exit (killing the process after `timeout` seconds) and returns its status, nil on timeout.
    func wait(timeout: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                kill9()
                process.waitUntilExit()
                return nil
            }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    var log: String {
        defer { try? FileManager.default.removeItem(at: output) }
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
}

/// Kills a CLI pull at random points and resumes it; lets several processes pull one model at once.
///
/// CI kills 4 times; `RUNANYWHERE_CHAOS_KILLS=50` (bench/chaos/kills.sh) runs the long version.
@Suite("Process chaos", .enabled(if: cliPath != nil, "needs the runanywhere executable (swift build) beside the tests"))
struct ProcessChaosTests {
    /// Over two of the downloader's 8 MB checkpoints, so most kills leave flushed bytes to resume from.
    static let size = 20 << 20
    static let rate = 10 << 20
    static let body: [UInt8] = {
        let block = testBytes(1 << 20, seed: 77)
        return (0..<20).flatMap { i in block.map { $0 ^ UInt8(i) } }
    }()

    /// The same bytes as `model/weights.bin` in a tar.gz (random bytes: it stays about 20 MB).
    static let archive: [UInt8] = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kill-archive-\(UUID().uuidString).tar.gz")
        defer { try? FileManager.default.removeItem(at: url) }
        guard (try? writeArchive([.directory("model"), .file("model/weights.bin", body)], format: .tarGz, to: url)) != nil,
              let data = try? Data(contentsOf: url) else { return [] }
        return [UInt8](data)
    }()

    /// A storage root with one registered model `killme` served at a capped rate.
    struct Fixture {
        let dir: TemporaryDirectory
        let server: LoopbackHTTPServer
        let body: [UInt8]
        let sha: String
        var home: URL { dir.url.appendingPathComponent("home") }

        /// With `archive`, the model is `killme.tar.gz` holding `model/weights.bin`, unpacked with `model/` as its folder.
        init(id: String = "killme", rate: Int = ProcessChaosTests.rate, archive: Bool = false) async throws {
            dir = try TemporaryDirectory(prefix: "runanywhere-kill")
            server = try LoopbackHTTPServer()
            body = ProcessChaosTests.body
            let served = archive ? ProcessChaosTests.archive : body
            sha = try sha256Hex(served)
            let path = archive ? "/\(id).tar.gz" : "/\(id).bin"
            server.setRoute(path, LoopbackRoute(body: served, etag: "\"\(id)\"", linkedSHA256: sha, bandwidthBytesPerSecond: rate))
            let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: home, environment: ["HOME": dir.path]))
            if archive {
                _ = try await sdk.registerModel(archive: server.url(path).absoluteString,
                                                structure: ArchiveStructure(rootDirectory: "model", expectedFiles: ["weights.bin"]),
                                                id: id, name: id, framework: .llamaCpp, modality: .language,
                                                sha256: sha, sizeBytes: Int64(served.count))
            } else {
                _ = try await sdk.registerModel(id: id, name: id, url: server.url(path).absoluteString, framework: .llamaCpp,
                                                modality: .language, sha256: sha, sizeBytes: Int64(served.count))
            }
        }

        func cleanUp() {
            server.stop()
            dir.remove()
        }

        /// What a fresh SDK over the root says about `id`; a problem when it is downloaded with wrong bytes.
        func consistency(_ id: String = "killme") async -> (downloaded: Bool, problem: String?) {
            let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: home, environment: ["HOME": dir.path]))
            guard let model = await sdk.models.get(id: id) else { return (false, "\(id) is no longer registered") }
            guard model.isDownloaded else { return (false, nil) }
            guard let folder = model.localPath, fileBytes(folder.appendingPathComponent("weights.bin")) == body
                    || model.primaryFilePath.flatMap(fileBytes) == body else {
                return (true, "\(id) is marked downloaded but its file is missing or wrong")
            }
            return (true, nil)
        }
    }

    @Test("kill -9 of a pull at random points: the registry stays consistent and a new process resumes to a verified file",
          arguments: ["file", "archive"])
    func kills(kind: String) async throws {
        let kills = ProcessInfo.processInfo.environment["RUNANYWHERE_CHAOS_KILLS"].flatMap(Int.init) ?? 4
        let f = try await Fixture(archive: kind == "archive")
        defer { f.cleanUp() }
        var rng = SeededGenerator(seed: 4242)
        var resumedFromPartial = 0, killedAfterDone = 0
        let fullTime = Double(Self.size) / Double(Self.rate)
        for k in 0..<kills {
            let pull = try CLIProcess(["models", "pull", "killme", "--quiet"], home: f.home)
            // Spread over the whole pull (and a little after it): start, mid-file, checkpoint, verify, install.
            let slot = (fullTime + 0.4) / Double(kills)
            let delay = 0.05 + slot * (Double(k) + Double.random(in: 0..<1, using: &rng))
            try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            pull.kill9()
            _ = await pull.wait(timeout: 10)
            _ = pull.log
            let after = await f.consistency()
            #expect(after.problem == nil, "kill \(k) at \(delay) s: \(after.problem ?? "")")
            if after.downloaded { killedAfterDone += 1 }
            let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: f.home, environment: ["HOME": f.dir.path]))
            if await sdk.models.isResumable(id: "killme") { resumedFromPartial += 1 }

            let resume = try CLIProcess(["models", "pull", "killme", "--quiet"], home: f.home)
            let status = await resume.wait(timeout: 30)
            let log = resume.log
            #expect(status == 0, "resume after kill \(k) exited \(String(describing: status)): \(log)")
            let done = await f.consistency()
            #expect(done.downloaded && done.problem == nil, "after kill \(k): \(done.problem ?? "not downloaded")")
            try await sdk.models.delete(id: "killme")
            let left = listTree(f.home).filter { !isDirectory(f.home.appendingPathComponent($0)) && !$0.hasSuffix("/manifest.json") }
            #expect(left.isEmpty, "after kill \(k) and delete, left behind: \(left)")
        }
        print("process kills (\(kind)): \(kills) kills of `runanywhere models pull`, \(resumedFromPartial) resumed from a partial, "
              + "\(killedAfterDone) landed after completion, \(kills) verified resumes, failures: 0 unless reported above")
        #expect(resumedFromPartial > 0)
    }

    @Test("2, 4 and 8 processes pulling the same model at once all finish with one verified file", arguments: [2, 4, 8])
    func concurrentPulls(processes: Int) async throws {
        let f = try await Fixture(id: "shared", rate: 40 << 20)
        defer { f.cleanUp() }
        let pulls = try (0..<processes).map { _ in try CLIProcess(["models", "pull", "shared", "--quiet"], home: f.home) }
        for (i, pull) in pulls.enumerated() {
            let status = await pull.wait(timeout: 60)
            let log = pull.log
            #expect(status == 0, "process \(i) of \(processes) exited \(String(describing: status)): \(log)")
        }
        let state = await f.consistency("shared")
        #expect(state.downloaded && state.problem == nil, "\(state.problem ?? "not downloaded")")
        // One transfer: the others waited on the lock and found the model installed.
        let full = f.server.requests(to: "/shared.bin").filter { $0.header("Range") == nil }
        #expect(full.count == 1)
        let leftovers = listTree(f.home.appendingPathComponent("downloads/shared")).filter { $0 != ".lock" }
        #expect(leftovers.isEmpty, "left in downloads/shared: \(leftovers)")
    }

    @Test("`models rm` in one process while another pulls: the pull exits with an error code, nothing is corrupt, a new pull completes")
    func removeWhilePulling() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        var statuses: [String] = []
        for delay in [0.4, 1.4] {
            let pull = try CLIProcess(["models", "pull", "killme", "--quiet"], home: f.home)
            try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            let remove = try CLIProcess(["models", "rm", "killme"], home: f.home)
            let removed = await remove.wait(timeout: 30)
            let removeLog = remove.log
            #expect(removed == 0, "rm after \(delay) s exited \(String(describing: removed)): \(removeLog)")
            let status = await pull.wait(timeout: 30)
            let log = pull.log
            statuses.append("rm at \(delay) s: pull exit \(status.map(String.init) ?? "timeout") \(log.split(separator: "\n").last ?? "")")
            // 0 when it finished first; otherwise one of the documented exit codes (storage, network, interrupted).
            #expect(status.map { [0, 1, 4, 5, 7, 130].contains($0) } == true, "pull exited \(String(describing: status)): \(log)")
            let state = await f.consistency()
            #expect(state.problem == nil, "after rm at \(delay) s: \(state.problem ?? "")")
            let again = try CLIProcess(["models", "pull", "killme", "--quiet"], home: f.home)
            let final = await again.wait(timeout: 30)
            let againLog = again.log
            #expect(final == 0, "\(againLog)")
            let done = await f.consistency()
            #expect(done.downloaded && done.problem == nil)
            let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: f.home, environment: ["HOME": f.dir.path]))
            try await sdk.models.delete(id: "killme")
        }
        print("remove while pulling: \(statuses)")
    }
}
