import Foundation

/// Where llama.cpp's shared libraries are looked for, in order:
/// 1. the directory the app set (``LlamaCppBackend/init(libraryDirectory:)``);
/// 2. `RUNANYWHERE_LLAMACPP_LIB` (a directory, or the path of `libllama` itself);
/// 3. the project-local folder `scripts/install-llamacpp.sh` fills, `.runanywhere-deps/llamacpp/lib`, in the
///    current directory or any parent of it or of the running executable.
public enum LlamaCppLocation {
    /// The environment variable that points at the libraries.
    public static let environmentVariable = "RUNANYWHERE_LLAMACPP_LIB"
    /// The project-local folder, relative to a project root.
    public static let projectFolder = ".runanywhere-deps/llamacpp/lib"

    /// The directories to try, first match wins (a directory holding `libllama`).
    static func candidates(explicit: URL?, environment: [String: String]) -> [URL] {
        var list: [URL] = []
        if let explicit { list.append(explicit) }
        if let value = environment[environmentVariable], !value.isEmpty {
            let url = URL(fileURLWithPath: value)
            list.append(url.lastPathComponent.hasPrefix("libllama") ? url.deletingLastPathComponent() : url)
        }
        var roots = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        if let exe = Bundle.main.executableURL { roots.append(exe.deletingLastPathComponent()) }
        for root in roots {
            var dir = root.standardizedFileURL
            while true {
                list.append(dir.appendingPathComponent(projectFolder))
                let parent = dir.deletingLastPathComponent()
                if parent.path == dir.path { break }
                dir = parent
            }
        }
        return list
    }

    /// The first candidate that holds `libllama`, or a description of where it looked.
    static func resolve(explicit: URL?, environment: [String: String]) -> Result<URL, LlamaCppUnavailable> {
        let all = candidates(explicit: explicit, environment: environment)
        let library = LlamaCppLibrary.fileName("llama")
        // An explicit choice (setting or environment) that does not hold the library is an error, not a fallthrough.
        let pinned = explicit != nil || environment[environmentVariable].map { !$0.isEmpty } == true
        if pinned, let first = all.first {
            if FileManager.default.fileExists(atPath: first.appendingPathComponent(library).path) { return .success(first) }
            let via = explicit != nil ? "the library directory set on LlamaCppBackend" : environmentVariable
            return .failure(LlamaCppUnavailable("llama.cpp is not installed where \(via) points: \(first.path) has no \(library). Run scripts/install-llamacpp.sh or point it at a folder holding \(library) and libggml*"))
        }
        if let found = all.first(where: { FileManager.default.fileExists(atPath: $0.appendingPathComponent(library).path) }) {
            return .success(found)
        }
        return .failure(LlamaCppUnavailable("llama.cpp is not installed: no \(library) in \(projectFolder) (current directory, executable directory or their parents) and \(environmentVariable) is not set. Install it with scripts/install-llamacpp.sh (builds llama.cpp from llama-cpp-python 0.3.36, 6-10 minutes) or set \(environmentVariable) to a folder holding \(library) and libggml*"))
    }
}
