import Foundation

/// Where the SDK keeps its files.
///
/// ```
/// models/<framework>/<model-id>/<files...>      finished, verified files
/// models/<framework>/<model-id>/manifest.json   what the registry knows (no secrets, no absolute paths)
/// downloads/<model-id>/<file>.partial + .journal resumable state
/// catalog/remote.json                           last fetched remote catalog
/// token                                         Hugging Face token (0600), only when asked to persist
/// ```
public struct StorageLayout: Sendable, Hashable {
    /// The storage root.
    public let root: URL

    /// Uses `root` as the storage root.
    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// The default root: `$RUNANYWHERE_HOME`, else `$XDG_DATA_HOME/runanywhere`, else `~/.local/share/runanywhere`.
    public static func defaultRoot(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let home = environment["RUNANYWHERE_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("runanywhere", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share/runanywhere", isDirectory: true)
    }

    /// `models/`.
    public var modelsDirectory: URL { root.appendingPathComponent("models", isDirectory: true) }
    /// `downloads/`.
    public var downloadsDirectory: URL { root.appendingPathComponent("downloads", isDirectory: true) }
    /// `catalog/remote.json`.
    public var remoteCatalogCache: URL { root.appendingPathComponent("catalog/remote.json") }
    /// `token`.
    public var tokenFile: URL { root.appendingPathComponent("token") }

    /// `models/<framework>/<id>/`. The id must have been validated.
    public func modelDirectory(id: String, framework: InferenceFramework) -> URL {
        modelsDirectory.appendingPathComponent(framework.rawValue, isDirectory: true)
            .appendingPathComponent(id, isDirectory: true)
    }

    /// `models/<framework>/<id>/manifest.json`.
    public func manifestURL(id: String, framework: InferenceFramework) -> URL {
        modelDirectory(id: id, framework: framework).appendingPathComponent("manifest.json")
    }

    /// `downloads/<id>/`.
    public func downloadDirectory(id: String) -> URL {
        downloadsDirectory.appendingPathComponent(id, isDirectory: true)
    }
}
