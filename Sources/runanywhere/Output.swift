import Foundation
import RunAnywhere

/// Exit codes scripts can rely on.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let notFound: Int32 = 3
    static let network: Int32 = 4
    static let storage: Int32 = 5
    static let memory: Int32 = 6
    static let verification: Int32 = 7
    static let interrupted: Int32 = 130

    static let help = """
        Exit codes: 0 ok, 1 failure, 2 usage error, 3 model not found, 4 network or authentication,
                    5 disk full or storage error, 6 not enough memory, 7 verification failed, 130 interrupted.
        """

    static func of(_ code: RunAnywhereError.Code) -> Int32 {
        switch code {
        case .modelNotFound: return notFound
        case .networkUnavailable, .downloadFailed, .authenticationRequired: return network
        case .insufficientStorage, .storageFailure: return storage
        case .insufficientMemory: return memory
        case .checksumMismatch, .extractionFailed, .invalidModelFormat: return verification
        case .invalidConfiguration: return usage
        case .cancelled: return interrupted
        default: return failure
        }
    }
}

/// A usage mistake: printed with the command's help hint, exit code 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Terminal output: stdout for results, stderr for errors and progress.
enum Output {
    /// Whether stdout is a terminal.
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    /// Whether stderr is a terminal.
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    /// Colours only on a terminal and without NO_COLOR.
    static var useColor: Bool { stderrIsTTY && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

    /// Writes to stdout: the one writer of the CLI's standard output, unbuffered, so text streamed token by
    /// token, tables and messages reach a pipe in the order they were written.
    static func out(_ text: String = "", terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    /// Writes to stderr.
    static func stderr(_ text: String, terminator: String = "\n") {
        // Unbuffered, as stdout (``out(_:terminator:)``): lines keep their order when both go to one file, and no
        // stdio lock is taken (fflush would wait for the lock `readLine` holds on stdin while chat waits for input).
        FileHandle.standardError.write(Data((text + terminator).utf8))
    }

    /// One clear error line on stderr.
    static func error(_ message: String) {
        let prefix = useColor ? "\u{1B}[31merror:\u{1B}[0m" : "error:"
        stderr("\(prefix) \(Redact.text(message))")
    }

    /// Pretty JSON on stdout.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(value)
        out(Redact.text(String(decoding: data, as: UTF8.self)))
    }

    /// Runs a command body, turning errors into one stderr line and an exit code.
    static func guarded(_ body: () async throws -> Int32) async -> Int32 {
        do {
            return try await body()
        } catch {
            return report(error)
        }
    }

    /// Prints `failure` as one stderr line in the CLI's words and returns its exit code.
    @discardableResult
    static func report(_ failure: any Error) -> Int32 {
        switch failure {
        case let e as UsageError:
            error(e.message)
            return ExitCode.usage
        case let e as RunAnywhereError:
            error(CLIWords.message(e))
            return ExitCode.of(e.code)
        case is CancellationError:
            error("interrupted")
            return ExitCode.interrupted
        default:
            error(CLIWords.describe(failure))
            return ExitCode.failure
        }
    }

    /// Table rows padded to column widths.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { i in all.map { $0[i].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
