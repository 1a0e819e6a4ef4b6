import Foundation
import Synchronization
import Testing
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport

/// Concurrent operations on one storage root: nothing corrupt, nothing deadlocked (every step has a timeout).
///
/// The loops run for `RUNANYWHERE_CHAOS_SECONDS` (default 3; bench/chaos/races.sh runs 60).
@Suite("Races")
struct RaceTests {
    static let seconds = ProcessInfo.processInfo.environment["RUNANYWHERE_CHAOS_SECONDS"].flatMap(Double.init) ?? 3
    /// Rounds each loop runs at least, past its deadline if need be: a machine busy with other jobs can make
    /// every step slow, and the checks below need some rounds to mean anything.
    static let minimumRounds = 4

    /// Counts of what the loops did.
    final class Counts: Sendable {
        private let state = Mutex<[String: Int]>([:])
        func add(_ key: String) { state.withLock { $0[key, default: 0] += 1 } }
        var all: [String: Int] { state.withLock { $0 } }
    }

    /// Runs one step with a timeout; records a typed error as `<name>-error`, anything else as an issue.
    static func step<T: Sendable>(_ name: String, _ counts: Counts, timeout: Double = 60,
                                  _ body: @escaping @Sendable () async throws -> T) async {
        switch await withTimeout(seconds: timeout, body) {
        case .success: counts.add(name)
        case .failure(let error as RunAnywhereError): counts.add("\(name)-error-\(error.code.rawValue)")
        case .failure(let error): Issue.record("\(name): \(error)")
        }
    }

    /// Whether a model the registry calls downloaded has the published bytes.
    static func consistent(_ sdk: RunAnywhereSDK, id: String, bytes: Data) async -> Bool {
        guard let model = await sdk.models.get(id: id) else { return false }
        guard model.isDownloaded else { return true }
        return model.primaryFilePath.flatMap { try? Data(contentsOf: $0) } == bytes
    }

    @Test("two tasks loading and unloading one model in a loop never deadlock and leave a usable model")
    func loadUnloadLoop() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.forest)
        let models = env.sdk.models
        let counts = Counts()
        let deadline = Date().addingTimeInterval(Self.seconds)
        // Each loop also runs a few rounds however slow a busy machine makes them (bounded: steps time out).
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var i = 0
                while Date() < deadline || i < Self.minimumRounds {
                    let context = 64 << (i % 3)
                    await Self.step("load", counts) { try await models.load(id: id, options: LoadOptions(contextLength: context, threads: 1)) }
                    i += 1
                }
            }
            group.addTask {
                var i = 0
                while Date() < deadline || i < Self.minimumRounds {
                    await Self.step("unload", counts) { try await models.unload(id: id) }
                    await Self.step("state", counts) { await models.state() }
                    await Task.yield()
                    i += 1
                }
            }
        }
        let c = counts.all
        #expect((c["load"] ?? 0) > 2 && (c["unload"] ?? 0) > 2, "\(c)")
        #expect(c.keys.filter { $0.contains("error") }.isEmpty, "\(c)")
        let result = try await env.sdk.llm.generate(prompt: "Once", options: LlmOptions(model: id, maxTokens: 4))
        #expect(!result.text.isEmpty)
        try await models.unloadAll()
        #expect(await models.state().loaded.isEmpty)
        print("races: load/unload loop \(Self.seconds) s: \(c)")
    }

    @Test("one instance deletes and re-downloads a model while another loads it: typed errors only, bytes always right")
    func deleteWhileLoading() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let id = try await env.demo(.sea)
        let published = DemoModel.gguf(.sea).data()
        // A second SDK on the same root stands in for a second process.
        let other = RunAnywhereSDK(configuration: RunAnywhereConfiguration(storageRoot: env.dir.url, environment: [:]))
        let loader = env.sdk.models, deleter = other.models
        let counts = Counts()
        let deadline = Date().addingTimeInterval(Self.seconds)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while Date() < deadline {
                    await Self.step("load", counts) { try await loader.load(id: id, options: LoadOptions(contextLength: 64, threads: 1, forceReload: true)) }
                    await Self.step("unload", counts) { try await loader.unload(id: id) }
                }
            }
            group.addTask {
                var i = 0
                while Date() < deadline || i < 1 {
                    i += 1
                    await Self.step("delete", counts) { try await deleter.delete(id: id) }
                    if !(await Self.consistent(other, id: id, bytes: published)) { counts.add("inconsistent") }
                    await Self.step("download", counts) { for try await _ in try await deleter.download(id: id) {} }
                    if !(await Self.consistent(other, id: id, bytes: published)) { counts.add("inconsistent") }
                }
            }
        }
        let c = counts.all
        #expect(c["inconsistent"] == nil, "\(c)")
        #expect((c["delete"] ?? 0) > 0 && (c["download"] ?? 0) > 0, "\(c)")
        // Whatever happened, a download now leaves a model both instances can use.
        for try await _ in try await deleter.download(id: id) {}
        #expect(await Self.consistent(env.sdk, id: id, bytes: published))
        _ = try await loader.load(id: id, options: LoadOptions(contextLength: 64, threads: 1, forceReload: true))
        print("races: delete while loading \(Self.seconds) s: \(c)")
    }

    @Test("refresh, pruning and listing while a download runs: the download completes and stays registered")
    func refreshWhileDownloading() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let size = DemoModel.gguf(.forest).data().count
        // About two seconds of transfer.
        let info = try await env.mirror.registerDemoModel(.forest, with: env.sdk, bandwidthBytesPerSecond: max(50_000, size / 2))
        let models = env.sdk.models
        let counts = Counts()
        let finished = Counts()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await Self.step("download", counts, timeout: 60) { for try await _ in try await models.download(id: info.id) {} }
                finished.add("download")
            }
            group.addTask {
                var i = 0
                while finished.all.isEmpty || i < Self.minimumRounds {
                    let prune = i % 2 == 1
                    let during = finished.all.isEmpty
                    await Self.step("refresh", counts) { await models.refresh(rescanLocal: true, pruneOrphans: prune) }
                    if during && finished.all.isEmpty { counts.add("refresh-during-download") }
                    await Self.step("list", counts) { try await models.list() }
                    i += 1
                }
            }
        }
        let c = counts.all
        #expect(c["download"] == 1 && (c["refresh"] ?? 0) >= Self.minimumRounds, "\(c)")
        // At least one refresh (with its rescan and pruning) ran start to end inside the download.
        #expect((c["refresh-during-download"] ?? 0) >= 1, "\(c)")
        #expect(c.keys.filter { $0.contains("error") }.isEmpty, "\(c)")
        let model = try #require(await models.get(id: info.id))
        #expect(model.isDownloaded)
        #expect(await Self.consistent(env.sdk, id: info.id, bytes: DemoModel.gguf(.forest).data()))
        #expect(await models.refresh().downloadedCount >= 1)
        print("races: refresh while downloading: \(c)")
    }

    @Test("deleting a model while it downloads ends the download in a typed error or a verified install, never a wrong file")
    func deleteWhileDownloading() async throws {
        let env = try DemoEnvironment(); defer { env.close() }
        let bytes = DemoModel.gguf(.sea).data()
        let info = try await env.mirror.registerDemoModel(.sea, with: env.sdk, bandwidthBytesPerSecond: max(50_000, bytes.count))
        let models = env.sdk.models
        let counts = Counts()
        for round in 0..<3 {
            let stream = try await models.download(id: info.id)
            let pause = UInt64(100_000_000 * (round + 1))
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await Self.step("download", counts) { for try await _ in stream {} } }
                group.addTask {
                    try? await Task.sleep(nanoseconds: pause)
                    await Self.step("delete", counts) { try await models.delete(id: info.id) }
                }
            }
            #expect(await Self.consistent(env.sdk, id: info.id, bytes: bytes), "round \(round): \(counts.all)")
            try await models.delete(id: info.id)
        }
        for try await _ in try await models.download(id: info.id) {}
        #expect(await Self.consistent(env.sdk, id: info.id, bytes: bytes))
        #expect(await models.get(id: info.id)?.isDownloaded == true)
        print("races: delete while downloading: \(counts.all)")
    }
}
