import Foundation
import RunAnywhere
import RunAnywhereTestSupport
import Testing

@Suite("CLI with a remote server", .enabled(if: CLI.binary != nil, "the runanywhere binary is not built beside the tests (run `swift build` first)"))
struct RemoteCLITests {
    @Test("run --backend remote streams the server's answer; models list --remote lists its models; failures exit 4 or 2")
    func remote() throws {
        let fake = try FakeOpenAIServer(models: ["srv-model", "other"])
        defer { fake.stop() }
        let cli = try CLI(); defer { cli.home.remove() }
        let url = fake.baseURL.absoluteString
        let list = try cli.run("models", "list", "--remote", "--remote-url", url, "--json")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(cli.json(list) as? [String] == ["srv-model", "other"])
        let run = try cli.run("run", "mine", "Hello", "--backend", "remote", "--remote-url", url, "--server-model", "srv-model",
                              "--api-key", "k-42", "--temperature", "0")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Hello, world"))
        #expect(run.stderr.contains("on remote"))
        let post = try #require(fake.server.requests(to: "/v1/chat/completions").first)
        #expect(post.header("Authorization") == "Bearer k-42")
        // Nothing named: a usage error, nothing sent.
        let before = fake.server.acceptedConnectionCount
        let missing = try cli.run("run", "mine", "Hello", "--backend", "remote")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--remote-url"))
        #expect(fake.server.acceptedConnectionCount == before)
        // A name the server does not list: exit 3; a wrong key: exit 4.
        let unknown = try cli.run("run", "mine", "Hello", "--backend", "remote", "--remote-url", url, "--server-model", "nope")
        #expect(unknown.status == 3, "\(unknown.stderr)")
        fake.setError(status: 401, message: "bad key")
        let denied = try cli.run("run", "mine", "Hello", "--backend", "remote", "--remote-url", url, "--server-model", "srv-model")
        #expect(denied.status == 4, "\(denied.stderr)")
        #expect(denied.stderr.contains("RUNANYWHERE_REMOTE_API_KEY"))
    }
}
