// The documentation's "complete picker", driven from the terminal.
//
//   swift run model-picker            then type: list · download ID · use ID · ask TEXT · delete ID · register URL · quit
//
// Everything below the `ModelPicker` class is terminal plumbing; the class itself is the page's code
// (without @Observable, which needs Apple's Observation module) plus `ask`, to show the model in use.
import Foundation
import RunAnywhere

@MainActor
final class ModelPicker {
    var models: [ModelInfo] = []
    var downloading: String?
    var fraction: Double = 0
    var current: String?

    func load() async throws {
        models = try await RunAnywhere.models.list(filter: ModelFilter(category: .language))
    }

    func download(_ id: String) async throws {
        downloading = id
        fraction = 0
        defer { downloading = nil }

        for try await event in try await RunAnywhere.models.download(id: id) {
            if case .progress(let p) = event {
                fraction = Double(p.fraction ?? 0)
                print(String(format: "\r  %@ %5.1f%%", id, fraction * 100), terminator: "")
                fflush(nil)
            }
        }
        print("")
        try await load()
    }

    func use(_ id: String) async throws {
        try await RunAnywhere.models.unloadAll(category: .language)
        _ = try await RunAnywhere.models.load(id: id)
        current = id
    }

    func delete(_ id: String) async throws {
        try await RunAnywhere.models.delete(id: id)
        if current == id { current = nil }
        try await load()
    }

    func ask(_ prompt: String) async throws -> GenerationResult {
        try await RunAnywhere.llm.generate(prompt: prompt, options: LlmOptions(model: current, maxTokens: 128))
    }
}

@MainActor
func runPicker() async {
    let picker = ModelPicker()
    func show() {
        for m in picker.models {
            let mark = m.id == picker.current ? "*" : m.isDownloaded ? "✓" : " "
            print("  \(mark) \(m.id.padding(toLength: 18, withPad: " ", startingAt: 0)) \(m.name)")
        }
    }
    do {
        try await picker.load()
        show()
    } catch {
        print("error: \(error)")
    }
    print("commands: list · download ID · use ID · ask TEXT · delete ID · register URL · quit")
    while true {
        print("> ", terminator: "")
        fflush(nil)
        guard let line = readLine() else { return }
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard let command = parts.first else { continue }
        let argument = parts.count > 1 ? parts[1] : ""
        do {
            switch command {
            case "list": try await picker.load(); show()
            case "download": try await picker.download(argument)
            case "use": try await picker.use(argument); print("  using \(argument)")
            case "ask":
                let r = try await picker.ask(argument)
                print(r.text)
                print(String(format: "  [%d tokens, %.1f tok/s]", r.outputTokens, r.tokensPerSecond))
            case "delete": try await picker.delete(argument)
            case "register":
                let info = try await RunAnywhere.registerModel(name: URL(string: argument)?.lastPathComponent ?? argument, url: argument,
                                                               framework: .llamaCpp, modality: .language)
                print("  registered \(info.id)")
                try await picker.load()
            case "quit", "exit": return
            default: print("unknown command \(command)")
            }
        } catch {
            print("error: \((error as? RunAnywhereError)?.message ?? "\(error)")")
        }
    }
}

await runPicker()
