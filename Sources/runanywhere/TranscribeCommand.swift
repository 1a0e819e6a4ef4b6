import Foundation
import RunAnywhere

/// `runanywhere transcribe ID FILE.wav`: downloads and loads as needed, prints the words.
enum TranscribeCommand: Command {
    static let name = "transcribe"
    static let summary = "Transcribe a WAV file with a speech model (downloading and loading it as needed)"
    static let help = """
        Usage: runanywhere transcribe ID FILE.wav [--language L] [--threads N] [--json]

          --language L   spoken language code (en, fr, …) for multilingual models
          --threads N    CPU threads
          --json         print the result (text, segments with start/end, timing) as JSON

        The text goes to stdout, segment by segment as each is recognised (long audio is cut at
        silences); the timing goes to stderr. Needs sherpa-onnx (scripts/install-speech.sh).
        """

    static func run(arguments: [String]) async throws -> Int32 {
        let args = try Arguments(arguments, options: ["language", "threads"], flags: ["json"])
        if args.wantsHelp { Output.out(help); return ExitCode.ok }
        let id = try args.positional(0, "model id")
        let file = try args.positional(1, "WAV file")
        guard args.positionals.count == 2 else { throw UsageError("too many arguments") }
        var options = SttOptions(model: id, language: args.option("language"))
        if let t = try args.int("threads", in: LoadOptions.threadRange) { options.loadOptions = LoadOptions(threads: t) }
        if let model = await RunAnywhere.models.get(id: id), !model.isDownloaded {
            try await PullCommand.pull(id: id, quiet: args.flag("json"))
        }
        let audio = AudioInput.file(URL(fileURLWithPath: file))
        var result: TranscriptionResult?
        var first = true
        for try await event in RunAnywhere.stt.transcribeStream(audio: audio, options: options) {
            switch event {
            case .segment(let s) where !args.flag("json"):
                Output.out(((first ? "" : " ") + s.text), terminator: "")
                first = false
            case .segment:
                break
            case .completed(let r):
                result = r
            }
        }
        guard let result else { throw RunAnywhereError(.generationFailed, "transcription ended without a result") }
        if args.flag("json") {
            try Output.json(result)
        } else {
            Output.out("")
        }
        Output.stderr(String(format: "[%@ on %@: %.2f s of audio in %.2f s, real-time factor %.3f, %d segment(s)]",
                             result.modelId, result.backend.rawValue, result.audioDurationSeconds, result.processingSeconds,
                             result.realTimeFactor, result.segments.count))
        return ExitCode.ok
    }
}
