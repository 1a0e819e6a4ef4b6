import Foundation
import RunAnywhere
@testable import RunAnywhereCore
import RunAnywhereTestSupport
import Synchronization
import Testing

/// A seeded random schedule of server faults over single-file, multi-file and archive models, downloaded
/// through the public API. Every run must end completed with the right bytes, or with a typed error when
/// the schedule held a fault that legitimately ends a download (changed bytes, redirect loop, bad scheme).
///
/// CI runs 200 downloads; `RUNANYWHERE_CHAOS_DOWNLOADS=5000` (bench/chaos/faults.sh) runs the long campaign,
/// `RUNANYWHERE_CHAOS_SEED` picks another schedule.
@Suite("Fault campaign")
struct FaultCampaignTests {
    @Test("seeded faults over single-file, multi-file and archive downloads end verified or in a typed error, leaving nothing behind")
    func campaign() async throws {
        let env = ProcessInfo.processInfo.environment
        let runs = env["RUNANYWHERE_CHAOS_DOWNLOADS"].flatMap(Int.init) ?? 200
        let seed = env["RUNANYWHERE_CHAOS_SEED"].flatMap(UInt64.init) ?? 20_261_130
        let workers = 4
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.recordsRequests = false
        let tally = CampaignTally()
        let started = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<workers {
                group.addTask {
                    var run = w
                    while run < runs {
                        // A fresh storage root every 25 runs: deleted models stay registered, and a registry of
                        // thousands would measure the registry rather than the faults.
                        let dir = try TemporaryDirectory(prefix: "runanywhere-chaos")
                        defer { dir.remove() }
                        let sdk = RunAnywhereSDK(configuration: RunAnywhereConfiguration(
                            storageRoot: dir.url, environment: ["HOME": dir.path]))
                        var policy = fastPolicy(stall: 0.3)
                        policy.maxRetryAfter = 0.05
                        sdk.models.downloads.policy = policy
                        for _ in 0..<25 where run < runs {
                            var rng = SeededGenerator(seed: seed &+ UInt64(run) &* 0x9E37_79B9)
                            let plan = try CampaignRun.make(index: run, rng: &rng, server: server)
                            try await plan.execute(sdk: sdk, server: server, tally: tally)
                            for file in plan.files { server.removeRoutes(withPrefix: file.path) }
                            run += workers
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let t = tally.snapshot
        print("fault campaign: seed \(seed), \(t.runs) downloads (\(t.kinds)), \(t.faults) faults injected (\(t.faultCounts)), files served \(t.quirks), "
              + "\(t.completed) completed verified, \(t.typedErrors) typed errors (\(t.errorCodes)), \(t.failures) failures, "
              + String(format: "%.1f s", Date().timeIntervalSince(started)))
        #expect(t.runs == runs)
        #expect(t.failures == 0)
        #expect(t.faults >= runs)
    }
}

// MARK: - Schedule

/// The faults the campaign draws from. `endsDownload` ones may legitimately end a download in an error.
enum Fault: String, CaseIterable, Sendable {
    case drop, status500, status502, status503, status429, retryAfter503, retryAfter429, stall, truncate
    case longerLength, shorterLength, corrupt, etagSameBytes, etagNewBytes
    case redirectSameHost, redirectOtherHost, redirectLoop, redirectFile, redirectFTP

    var endsDownload: Bool {
        switch self {
        case .corrupt, .etagNewBytes, .shorterLength, .redirectLoop, .redirectFile, .redirectFTP: true
        default: false
        }
    }

    /// Relative frequency.
    var weight: Int {
        switch self {
        case .drop, .truncate, .status500, .status503: 6
        case .stall: 2
        case .redirectLoop, .redirectFile, .redirectFTP, .etagNewBytes: 1
        default: 3
        }
    }
}

/// One file served by the campaign: its bytes, route and fault plan.
struct CampaignFile {
    var path: String
    var name: String
    var body: [UInt8]
    var sha: String
    var faults: [Fault]
    /// How the server treats the file besides the faults: `ranges` honours Range and sends an ETag;
    /// `noRanges` always answers 200 with the whole file; `noValidator` sends no ETag, so nothing can resume;
    /// `weakETag` sends only a weak one (If-Range never matches); `lastModifiedOnly` has a date and no ETag.
    var quirk = "ranges"
}

/// One seeded download.
struct CampaignRun {
    enum Kind: String { case single, multi, archive }

    var index: Int
    var kind: Kind
    var id: String
    var files: [CampaignFile]
    /// For archives, the files expected in the model folder.
    var archived: [String: [UInt8]]
    var registerSHA: Bool

    static func make(index: Int, rng: inout SeededGenerator, server: LoopbackHTTPServer) throws -> CampaignRun {
        let roll = Int.random(in: 0..<100, using: &rng)
        let kind: Kind = roll < 55 ? .single : (roll < 80 ? .multi : .archive)
        let id = "chaos-\(index)"
        var archived: [String: [UInt8]] = [:]
        var bodies: [(String, [UInt8])] = []
        switch kind {
        case .single:
            bodies = [("weights.bin", testBytes(Int.random(in: 2_000...120_000, using: &rng), seed: rng.next()))]
        case .multi:
            for f in 0..<Int.random(in: 2...4, using: &rng) {
                bodies.append(("part\(f).bin", testBytes(Int.random(in: 1_000...60_000, using: &rng), seed: rng.next())))
            }
        case .archive:
            archived = ["model/weights.bin": testBytes(Int.random(in: 1_000...80_000, using: &rng), seed: rng.next()),
                        "model/config.json": Array("{\"run\": \(index)}".utf8)]
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chaos-archive-\(UUID().uuidString).tar.gz")
            defer { try? FileManager.default.removeItem(at: scratch) }
            try writeArchive([.directory("model")] + archived.sorted { $0.key < $1.key }.map { .file($0.key, $0.value) },
                             format: .tarGz, to: scratch)
            bodies = [("model.tar.gz", [UInt8](try Data(contentsOf: scratch)))]
        }
        let weights = Fault.allCases.flatMap { Array(repeating: $0, count: $0.weight) }
        var files: [CampaignFile] = []
        for (name, body) in bodies {
            let count = Int.random(in: 0...3, using: &rng)
            let faults = (0..<count).map { _ in weights[Int.random(in: 0..<weights.count, using: &rng)] }
            files.append(CampaignFile(path: "/\(id)/\(name)", name: name, body: body, sha: try sha256Hex(body), faults: faults))
        }
        // Drawn from their own generator so the fault schedule of a seed stays what it was: 1 in 10 of each quirk.
        var quirks = SeededGenerator(seed: UInt64(index) &* 0x2545_F491_4F6C_DD1D ^ 0xC0FF_EE)
        let special = ["noRanges", "noValidator", "weakETag", "lastModifiedOnly"]
        for i in files.indices {
            let q = Int.random(in: 0..<10, using: &quirks)
            files[i].quirk = q < special.count ? special[q] : "ranges"
        }
        let registerSHA = Int.random(in: 0..<4, using: &rng) != 0
        let run = CampaignRun(index: index, kind: kind, id: id, files: files, archived: archived, registerSHA: registerSHA)
        run.publish(on: server, rng: &rng)
        return run
    }

    /// Sets the routes: each file with its fault plan, plus the aliases and loops its redirects lead to.
    func publish(on server: LoopbackHTTPServer, rng: inout SeededGenerator) {
        for file in files {
            var plan: [LoopbackAction] = []
            for (k, fault) in file.faults.enumerated() {
                let size = file.body.count
                let offset = Int.random(in: 0..<max(1, size), using: &rng)
                let alias = "\(file.path).alias\(k)"
                switch fault {
                case .drop: plan.append(.dropAfter(bytes: offset))
                case .status500: plan.append(.status(500))
                case .status502: plan.append(.status(502))
                case .status503: plan.append(.status(503))
                case .status429: plan.append(.status(429))
                case .retryAfter503: plan.append(.retryAfter(seconds: 1, status: 503))
                case .retryAfter429: plan.append(.retryAfter(seconds: 2, status: 429))
                case .stall: plan.append(.stallAfter(bytes: offset, seconds: 0.6))
                case .truncate: plan.append(.truncateAfter(bytes: offset))
                case .longerLength: plan.append(.declaredLength(size + 1 + offset % 1000))
                case .shorterLength: plan.append(.declaredLength(max(0, size - 1 - offset % 1000)))
                case .corrupt: plan.append(.corrupt(offset: offset))
                case .etagSameBytes: plan.append(.replaceResource(body: file.body, etag: "\"\(file.path)-v\(k + 2)\""))
                case .etagNewBytes:
                    var changed = file.body
                    if !changed.isEmpty { changed[offset] ^= 0x5A }
                    plan.append(.replaceResource(body: changed, etag: "\"\(file.path)-changed\(k)\""))
                case .redirectSameHost:
                    plan.append(.redirect(to: alias, status: [301, 302, 307, 308][k % 4]))
                    server.setRoute(alias, Self.route(file))
                case .redirectOtherHost:
                    plan.append(.redirect(to: "http://localhost:\(server.port)\(alias)"))
                    server.setRoute(alias, Self.route(file))
                case .redirectLoop:
                    plan.append(.redirect(to: alias))
                    server.setRoute(alias, .redirect(to: "\(alias)b"))
                    server.setRoute("\(alias)b", .redirect(to: alias))
                case .redirectFile: plan.append(.redirect(to: "file:///etc/passwd"))
                case .redirectFTP: plan.append(.redirect(to: "ftp://127.0.0.1:\(server.port)\(file.path)"))
                }
            }
            var route = Self.route(file)
            route.plan = plan
            server.setRoute(file.path, route)
        }
    }

    static func route(_ file: CampaignFile) -> LoopbackRoute {
        let etag: String? = switch file.quirk {
        case "noValidator", "lastModifiedOnly": nil
        case "weakETag": "W/\"\(file.path)-v1\""
        default: "\"\(file.path)-v1\""
        }
        return LoopbackRoute(body: file.body, etag: etag,
                             lastModified: file.quirk == "lastModifiedOnly" ? "Mon, 30 Nov 2026 10:00:00 GMT" : nil,
                             acceptsRanges: file.quirk != "noRanges", linkedSHA256: file.sha)
    }

    /// Whether the schedule holds a fault that may end a download with an error.
    var mayFail: Bool { files.contains { $0.faults.contains(where: \.endsDownload) } }

    // MARK: - Run

    func execute(sdk: RunAnywhereSDK, server: LoopbackHTTPServer, tally: CampaignTally) async throws {
        let models = sdk.models
        try await register(with: sdk, server: server)
        var outcome: Result<ModelInfo, any Error> = .failure(RunAnywhereError(.downloadFailed, "not started"))
        var problems: [String] = []
        // Like a user pressing "retry": up to three downloads while the schedule still holds faults.
        for _ in 0..<3 {
            outcome = await withTimeout(seconds: 60) {
                var completed: ModelInfo?
                for try await event in try await models.download(id: id) {
                    if case .completed(let info) = event { completed = info }
                }
                guard let completed else { throw RunAnywhereError(.downloadFailed, "stream ended without completing") }
                return completed
            }
            if case .success = outcome { break }
        }
        let current = await models.get(id: id)
        switch outcome {
        case .success(let info):
            problems += verify(info)
        case .failure(let error):
            if let error = error as? RunAnywhereError {
                if !mayFail { problems.append("failed although every fault was transient: \(error)") }
                tally.error(error.code.rawValue)
            } else {
                problems.append("ended in an untyped error: \(error)")
            }
        }
        // Never a registered model with wrong bytes.
        if let current, current.isDownloaded { problems += verify(current) }

        try await models.delete(id: id)
        problems += leftovers(root: models.storageRoot)
        let injected = files.flatMap { file in file.faults.prefix(file.faults.count - (server.route(file.path)?.plan.count ?? 0)) }
        for file in files { tally.quirk(file.quirk) }
        tally.record(kind: kind.rawValue, faults: injected, completed: (try? outcome.get()) != nil, problems: problems,
                     describe: "run \(index) (\(kind.rawValue), faults \(files.map { $0.faults.map(\.rawValue) }))")
    }

    private func register(with sdk: RunAnywhereSDK, server: LoopbackHTTPServer) async throws {
        switch kind {
        case .single:
            let f = files[0]
            _ = try await sdk.registerModel(id: id, name: id, url: server.url(f.path).absoluteString, framework: .llamaCpp,
                                            modality: .language, sha256: registerSHA ? f.sha : nil,
                                            sizeBytes: registerSHA ? Int64(f.body.count) : nil)
        case .multi:
            let descriptors = files.map { f in
                ModelFileDescriptor(url: server.url(f.path), fileName: f.name, sizeBytes: registerSHA ? Int64(f.body.count) : nil,
                                    sha256: registerSHA ? f.sha : nil)
            }
            _ = try await sdk.registerModel(multiFile: descriptors, id: id, name: id, framework: .llamaCpp, modality: .language)
        case .archive:
            let f = files[0]
            _ = try await sdk.registerModel(archive: server.url(f.path).absoluteString,
                                            structure: ArchiveStructure(rootDirectory: "model", expectedFiles: ["weights.bin"]),
                                            id: id, name: id, framework: .llamaCpp, modality: .language,
                                            sha256: registerSHA ? f.sha : nil, sizeBytes: registerSHA ? Int64(f.body.count) : nil)
        }
    }

    /// Problems with the bytes of a model the registry calls downloaded.
    private func verify(_ info: ModelInfo) -> [String] {
        guard let dir = info.localPath else {
            return ["run \(index): downloaded without a local path"]
        }
        var problems: [String] = []
        let expected: [String: [UInt8]] = kind == .archive
            ? Dictionary(uniqueKeysWithValues: archived.map { (String($0.key.dropFirst("model/".count)), $0.value) })
            : Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.body) })
        for (name, bytes) in expected {
            let url = dir.appendingPathComponent(name)
            if fileBytes(url) != bytes { problems.append("run \(index): registered \(name) with wrong bytes at \(url.path)") }
        }
        return problems
    }

    /// Anything left under the storage root besides the kept registrations.
    private func leftovers(root: URL) -> [String] {
        listTree(root).filter { path in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            return !isDirectory.boolValue && !(path.hasPrefix("models/") && path.hasSuffix("/manifest.json")) && !path.hasPrefix("catalog/")
        }.map { "run \(index): left \($0) behind after delete" }
    }
}

/// The campaign's counts, shared by its workers.
final class CampaignTally: Sendable {
    struct Snapshot {
        var runs = 0, faults = 0, completed = 0, typedErrors = 0, failures = 0
        var kinds: [String: Int] = [:]
        var faultCounts: [String: Int] = [:]
        var errorCodes: [String: Int] = [:]
        var quirks: [String: Int] = [:]
    }

    private let state = Mutex(Snapshot())

    var snapshot: Snapshot { state.withLock { $0 } }

    func quirk(_ name: String) {
        state.withLock { $0.quirks[name, default: 0] += 1 }
    }

    func error(_ code: String) {
        state.withLock { $0.errorCodes[code, default: 0] += 1; $0.typedErrors += 1 }
    }

    func record(kind: String, faults: [Fault], completed: Bool, problems: [String], describe: String) {
        state.withLock { s in
            s.runs += 1
            s.kinds[kind, default: 0] += 1
            s.faults += faults.count
            for f in faults { s.faultCounts[f.rawValue, default: 0] += 1 }
            if completed { s.completed += 1 }
            if !problems.isEmpty { s.failures += 1 }
        }
        for p in problems { Issue.record("\(describe): \(p)") }
    }
}
