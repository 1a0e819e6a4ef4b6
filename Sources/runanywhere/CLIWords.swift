import Foundation
import RunAnywhere

/// The CLI's rendering of the SDK's errors: the SDK speaks to Swift callers (`RunAnywhere.setHfToken(_:)`,
/// `LoadOptions.threads`); a person at a terminal needs the flag or the environment variable instead.
enum CLIWords {
    /// SDK words and the CLI words that replace them, in order.
    static let replacements: [(sdk: String, cli: String)] = [
        ("set a token with RunAnywhere.setHfToken(_:)", "set the HF_TOKEN environment variable to a Hugging Face token (export HF_TOKEN=hf_...)"),
        ("use setHfToken (or a token header) instead of user:password in the URL", "set HF_TOKEN instead of putting user:password in the URL"),
        ("RunAnywhere.setHfToken(_:)", "HF_TOKEN"),
        ("LoadOptions.threads", "--threads"),
        ("a larger LoadOptions.contextLength", "a larger --context-length"),
        ("LoadOptions.contextLength", "--context-length"),
        ("no remoteCatalogURL is configured (RunAnywhereConfiguration.remoteCatalogURL or RUNANYWHERE_CATALOG_URL)",
         "no remote catalog is configured: set RUNANYWHERE_CATALOG_URL to its URL"),
        ("use a smaller contextLength", "use a smaller --context-length"),
        ("Delete it first with models.delete(id:), or choose another id.", "Add --force to replace it (its files are deleted), or choose another --id."),
    ]

    /// SDK words in `text` replaced by the CLI's.
    static func text(_ text: String) -> String {
        replacements.reduce(text) { $0.replacingOccurrences(of: $1.sdk, with: $1.cli) }
    }

    /// The message of `error` in the CLI's words.
    static func message(_ error: RunAnywhereError) -> String {
        var text = text(error.message)
        let root = RunAnywhere.models.storageRoot.path
        if error.code == .storageFailure || error.code == .insufficientStorage, text.contains(root),
           !text.contains("RUNANYWHERE_HOME") {
            text += " The storage root \(root) comes from \(ProcessInfo.processInfo.environment["RUNANYWHERE_HOME"].map { _ in "RUNANYWHERE_HOME" } ?? "the default (set RUNANYWHERE_HOME to use another folder)")."
        }
        return text
    }

    /// Any other error, without Foundation's domain-and-number form.
    static func describe(_ error: any Error) -> String {
        if let e = error as? RunAnywhereError { return message(e) }
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return ns.localizedDescription
    }
}

/// Hides secrets that URLs carry in their query strings (`?token=…`, signed links) from everything the CLI prints.
enum Redact {
    /// Query parameter names (lowercased) whose values are secrets, or contain one of these words.
    static let secretWords = ["token", "key", "sig", "secret", "password", "passwd", "auth", "credential", "session", "jwt"]

    /// `text` with the value of every secret-looking query parameter of the URLs in it replaced by `REDACTED`.
    static func text(_ text: String) -> String {
        guard text.contains("?") || text.contains("&") else { return text }
        return text.replacing(/([?&])([A-Za-z0-9_.\-]+)=([^&\s"'<>]*)/) { match in
            let name = String(match.output.2)
            let lower = name.lowercased()
            guard secretWords.contains(where: { lower.contains($0) }) else { return String(match.output.0) }
            return "\(match.output.1)\(name)=REDACTED"
        }
    }
}
