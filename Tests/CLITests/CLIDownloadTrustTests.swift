import Foundation
import Glibc
import Testing
import RunAnywhere
import RunAnywhereCore
import RunAnywhereTestSupport

/// Downloads from the command line as a demanding user meets them: Ctrl-C, several ids, a server that is not
/// there, secrets in URLs, deleting during a pull (issue #21).
@Suite("CLI downloads a user trusts", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct CLIDownloadTrustTests {
    @Test("Ctrl-C before the first checkpoint keeps every byte received: the journal records them, models info shows them, the next pull resumes there")
    func interruptKeepsBytes() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let body = noise(6 << 20, seed: 21)
        // 1 MiB/s: the SIGINT lands long before the downloader's 2 MiB checkpoint.
        let url = mirror.publish("slow.bin", data: Data(body), bandwidthBytesPerSecond: 1 << 20)
        #expect(try cli.run("models", "register", url.absoluteString, "--id", "slow").status == 0)
        let root = cli.home.path + "/root"
        let partial = root + "/downloads/slow/slow.bin.partial"
        let pull = try CLIProcess(["models", "pull", "slow"], home: cli.home.path)
        #expect(pull.waitFor(timeout: 30) { (FileSystemProbe.size(partial) ?? 0) > 0 })
        usleep(300_000)
        pull.interrupt()
        #expect(pull.wait() == 130, "\(pull.stderr)")
        #expect(pull.stderr.contains("run `runanywhere models pull slow` to resume"), "\(pull.stderr)")
        let journal = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/downloads/slow/slow.bin.journal"))) as? [String: Any])
        let written = try #require(journal["bytesWritten"] as? Int)
        #expect(written > 0 && written == FileSystemProbe.size(partial), "journal \(written) bytes, partial \(FileSystemProbe.size(partial) ?? -1)")
        let info = try cli.run("models", "info", "slow")
        #expect(info.stdout.contains("partial") && info.stdout.contains("on disk"), "\(info.stdout)")
        let infoJSON = try #require(cli.json(try cli.run("models", "info", "slow", "--json")) as? [String: Any])
        #expect(infoJSON["partialBytes"] as? Int == written)
        mirror.server.clearRequests()
        mirror.server.setRoute("/slow.bin", LoopbackRoute(body: body, etag: mirror.server.route("/slow.bin")?.etag, linkedSHA256: mirror.server.route("/slow.bin")?.linkedSHA256))
        let again = try cli.run("models", "pull", "slow")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("Resuming slow"))
        #expect(mirror.server.requests(to: "/slow.bin").first?.header("Range") == "bytes=\(written)-")
    }

    @Test("pull a b c tries every id, reports each, exits with the first failure's code; nothing is left in downloads/")
    func pullSeveral() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let a = mirror.publish("a.bin", data: Data(noise(50_000, seed: 1)))
        let c = mirror.publish("c.bin", data: Data(noise(50_000, seed: 2)))
        _ = try cli.run("models", "register", a.absoluteString, "--id", "a")
        _ = try cli.run("models", "register", c.absoluteString, "--id", "c")
        let r = try cli.run("models", "pull", "a", "nope", "c")
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("a is ready") && r.stderr.contains("c is ready") && r.stderr.contains("'nope'"), "\(r.stderr)")
        #expect(r.stderr.contains("2 of 3 pulled; failed: nope"), "\(r.stderr)")
        let left = filesBelow(cli.home.path + "/root/downloads")
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a refused connection fails in seconds with exit 4 and says nothing listens there; no .lock or empty .partial stays")
    func refusedFailsFast() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let server = try LoopbackHTTPServer()
        let url = server.url("/gone.gguf")
        server.stop()
        _ = try cli.run("models", "register", url.absoluteString, "--id", "gone")
        let started = Date()
        let r = try cli.run("models", "pull", "gone")
        let seconds = Date().timeIntervalSince(started)
        #expect(r.status == 4, "\(r.stderr)")
        #expect(seconds < 8, "took \(seconds) s")
        #expect(r.stderr.contains("refused the connection"), "\(r.stderr)")
        let left = filesBelow(cli.home.path + "/root/downloads")
        #expect(left.isEmpty, "\(left)")
    }

    @Test("\"verifying\" is said only when there is a SHA-256 to verify against")
    func verifyingOnlyWithAHash() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let server = try LoopbackHTTPServer(); defer { server.stop() }
        let body = noise(40_000, seed: 5)
        server.setRoute("/plain.bin", LoopbackRoute(body: body, etag: "\"p\""))
        server.setRoute("/hashed.bin", LoopbackRoute(body: body, etag: "\"h\"", linkedSHA256: SHA256Hasher.hexDigest(of: body)))
        _ = try cli.run("models", "register", server.url("/plain.bin").absoluteString, "--id", "plain")
        _ = try cli.run("models", "register", server.url("/hashed.bin").absoluteString, "--id", "hashed")
        let plain = try cli.run("models", "pull", "plain")
        #expect(plain.status == 0 && !plain.stderr.contains("verifying"), "\(plain.stderr)")
        let hashed = try cli.run("models", "pull", "hashed")
        #expect(hashed.status == 0 && hashed.stderr.contains("verifying"), "\(hashed.stderr)")
    }

    @Test("a secret in a URL's query string is not printed (info, --json, errors) and the manifest is mode 0600")
    func querySecrets() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let server = try LoopbackHTTPServer()
        let url = server.url("/m.gguf").absoluteString + "?token=S3cretValue42&x=1"
        server.stop()
        let reg = try cli.run("models", "register", url, "--id", "signed", "--json")
        #expect(reg.status == 0, "\(reg.stderr)")
        var printed = reg.stdout + reg.stderr
        for args in [["models", "info", "signed"], ["models", "info", "signed", "--json"], ["models", "list", "--json"], ["models", "pull", "signed"]] {
            let r = try cli.run(args)
            printed += r.stdout + r.stderr
        }
        #expect(!printed.contains("S3cretValue42"), "\(printed)")
        #expect(printed.contains("token=REDACTED"))
        let manifest = cli.home.path + "/root/models/llamaCpp/signed/manifest.json"
        var st = stat()
        #expect(stat(manifest, &st) == 0 && st.st_mode & 0o077 == 0, "mode \(String(st.st_mode & 0o777, radix: 8))")
    }

    @Test("rm of a model never downloaded says so; rm during a pull makes the pull say the model was deleted while it downloaded")
    func removeCases() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let url = mirror.publish("big.bin", data: Data(noise(6 << 20, seed: 9)), bandwidthBytesPerSecond: 1 << 20)
        _ = try cli.run("models", "register", url.absoluteString, "--id", "big")
        let never = try cli.run("models", "rm", "big")
        #expect(never.status == 0 && never.stdout.contains("big was not downloaded: nothing to delete."), "\(never.stdout)")
        let pull = try CLIProcess(["models", "pull", "big"], home: cli.home.path)
        #expect(pull.waitFor(timeout: 30) { FileManager.default.fileExists(atPath: cli.home.path + "/root/downloads/big/big.bin.partial") })
        let rm = try cli.run("models", "rm", "big")
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(pull.wait() != 0)
        #expect(pull.stderr.contains("deleted (or its folder removed) while it downloaded"), "\(pull.stderr)")
    }
}

extension CLIDownloadTrustTests {
    @Test("sizes unknown before a download are learnt from the server (models info, refresh --remote) and kept for models list")
    func sizesLearnt() throws {
        let cli = try CLI(); defer { cli.home.remove() }
        let mirror = try ModelMirror(); defer { mirror.stop() }
        let body = Data(noise(48_000, seed: 4))
        let url = mirror.publish("sized.bin", data: body)
        _ = try cli.run("models", "register", url.absoluteString, "--id", "sized")
        func listed(_ id: String) throws -> [String: Any]? {
            (cli.json(try cli.run("models", "list", "--json")) as? [[String: Any]])?.first { $0["id"] as? String == id }
        }
        #expect(try listed("sized")?["downloadSize"] == nil)
        #expect(try cli.run("models", "list").stderr.contains("SIZE unknown"))
        let info = try #require(cli.json(try cli.run("models", "info", "sized", "--json")) as? [String: Any])
        #expect(info["downloadSize"] as? Int == body.count)
        #expect(try listed("sized")?["downloadSize"] as? Int == body.count, "kept in the manifest")
        // A remote catalog's model of unknown size gets it at refresh --remote.
        let gguf = DemoModel.gguf(.forest).data()
        let catalog = #"{"version": 1, "models": [{"id": "far", "name": "Far", "category": "language", "framework": "llamaCpp", "files": [{"url": "\#(mirror.publish("far.gguf", data: gguf).absoluteString)", "fileName": "far.gguf"}]}]}"#
        let catalogURL = mirror.publish("catalog.json", data: Data(catalog.utf8)).absoluteString
        let refresh = try cli.run(["models", "refresh", "--remote"], environment: ["RUNANYWHERE_CATALOG_URL": catalogURL])
        #expect(refresh.status == 0 && refresh.stdout.contains("Learnt the download size of 1 model: far."), "\(refresh.stdout)\(refresh.stderr)")
        #expect(try listed("far")?["downloadSize"] as? Int == gguf.count)
        let pull = try cli.run("models", "pull", "far")
        #expect(pull.status == 0 && pull.stderr.contains("Downloading far: \(ByteFormatter.string(Int64(gguf.count)))"), "\(pull.stderr)")
    }
}

/// Small file probes for the CLI tests.
enum FileSystemProbe {
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}
