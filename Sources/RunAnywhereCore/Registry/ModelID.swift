import Foundation

/// Rules for model ids: they name folders, so they must be safe as one.
public enum ModelID {
    /// The longest id accepted.
    public static let maxLength = 128

    /// Throws `.invalidConfiguration` unless `id` is 1–128 characters of letters, digits, `.`, `_` and `-`,
    /// not starting with `.` or `-`. Such an id cannot contain a path separator, `..`, NUL or a control character.
    public static func validate(_ id: String) throws {
        func fail(_ why: String) -> RunAnywhereError {
            let shown = id.unicodeScalars.map { $0.properties.generalCategory == .control ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
            return RunAnywhereError(.invalidConfiguration, "Invalid model id '\(shown.prefix(80))': \(why). Ids use letters, digits, '.', '_' and '-' (at most \(maxLength) characters).")
        }
        if id.isEmpty { throw fail("it is empty") }
        if id.utf8.count > maxLength { throw fail("it is \(id.utf8.count) characters long") }
        for scalar in id.unicodeScalars {
            let ok = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
                || scalar == "." || scalar == "_" || scalar == "-"
            if !ok {
                if scalar == "/" || scalar == "\\" { throw fail("it contains a path separator") }
                if scalar.properties.generalCategory == .control { throw fail("it contains a control character") }
                throw fail("it contains '\(scalar)'")
            }
        }
        if id.hasPrefix(".") || id.hasPrefix("-") { throw fail("it starts with '\(id.prefix(1))'") }
    }

    /// The one form an id is stored and looked up in: lower case. Ids are case-insensitive (`Stories260K` and
    /// `stories260k` are one model), as the file systems of macOS and Windows are.
    public static func canonical(_ id: String) -> String { id.lowercased() }

    /// Whether `id` passes ``validate(_:)``.
    public static func isValid(_ id: String) -> Bool { (try? validate(id)) != nil }

    /// A readable id from a URL's file name: `…/Qwen3-0.6B-Q8_0.gguf` → `qwen3-0.6b-q8_0`.
    public static func stem(of url: URL) -> String {
        var name = url.lastPathComponent.lowercased()
        for ext in [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tgz", ".tar", ".zip", ".gguf", ".onnx", ".bin", ".safetensors"]
        where name.hasSuffix(ext) {
            name = String(name.dropLast(ext.count))
            break
        }
        var out = ""
        for scalar in name.unicodeScalars {
            let ok = (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") || scalar == "." || scalar == "_" || scalar == "-"
            out.append(ok ? Character(scalar) : "-")
        }
        while out.contains("--") { out = out.replacingOccurrences(of: "--", with: "-") }
        out = String(out.drop(while: { $0 == "." || $0 == "-" }))
        while out.hasSuffix("-") || out.hasSuffix(".") { out.removeLast() }
        if out.isEmpty { out = "model" }
        return String(out.prefix(maxLength - 9))
    }

    /// ``stem(of:)`` plus 8 hex digits of the URL's SHA-256: stable and unique per URL.
    public static func hashed(from url: URL) -> String {
        "\(stem(of: url))-\(SHA256Hasher.hexDigest(of: Array(url.absoluteString.utf8)).prefix(8))"
    }
}
