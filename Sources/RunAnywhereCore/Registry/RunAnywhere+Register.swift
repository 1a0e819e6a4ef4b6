import Foundation

extension RunAnywhereSDK {
    /// Registers a single-file model by URL. Without an `id`, a stable one is derived from the URL
    /// (`…/Qwen3-0.6B-Q8_0.gguf` → `qwen3-0.6b-q8_0`). Registering the same id again keeps its download state.
    ///
    /// ```swift
    /// let info = try await RunAnywhere.registerModel(
    ///     name: "My model", url: "https://example.com/model.gguf", framework: .llamaCpp, modality: .language)
    /// ```
    /// - Throws: `.invalidConfiguration` for a bad id, URL (only http/https, no credentials) or checksum.
    @discardableResult
    public func registerModel(id: String? = nil, name: String, url: String, framework: InferenceFramework,
                              modality: ModelCategory, sha256: String? = nil, sizeBytes: Int64? = nil,
                              contextLength: Int? = nil) async throws -> ModelInfo {
        let parsed = try Self.parseURL(url)
        let file = ModelFileDescriptor(url: parsed, sizeBytes: sizeBytes, sha256: sha256, role: .model)
        let modelId = try await resolvedID(id, url: parsed)
        let model = ModelInfo(id: modelId, name: name, category: modality, framework: framework,
                              format: ModelFormat(fileName: file.fileName), artifact: .singleFile(file),
                              sha256: file.sha256, contextLength: contextLength, source: .registered)
        return try await models.register(model)
    }

    /// Registers a model shipped as an archive (tar.gz, tar.bz2, tar.xz, zip) whose layout you declare.
    @discardableResult
    public func registerModel(archive: String, structure: ArchiveStructure, id: String? = nil, name: String,
                              framework: InferenceFramework, modality: ModelCategory, sha256: String? = nil,
                              sizeBytes: Int64? = nil) async throws -> ModelInfo {
        let parsed = try Self.parseURL(archive)
        var structure = structure
        if structure.format == nil { structure.format = ArchiveFormat(fileName: parsed.lastPathComponent) }
        guard structure.format != nil else {
            throw RunAnywhereError(.invalidConfiguration, "Cannot tell the archive format of '\(parsed.lastPathComponent)'; set ArchiveStructure.format.")
        }
        for path in structure.expectedFiles + [structure.primaryFile, structure.rootDirectory].compactMap({ $0 }) {
            try ModelRegistry.validateRelativePath(path)
        }
        let file = ModelFileDescriptor(url: parsed, sizeBytes: sizeBytes, sha256: sha256, role: .model)
        let modelId = try await resolvedID(id, url: parsed)
        let format = structure.primaryFile.map { ModelFormat(fileName: $0) } ?? (framework == .onnx ? .onnx : .unknown)
        let model = ModelInfo(id: modelId, name: name, category: modality, framework: framework, format: format,
                              artifact: .archive(file, structure: structure), sha256: file.sha256, source: .registered)
        return try await models.register(model)
    }

    /// Registers a model made of several files (a VLM and its projector, an encoder/decoder pair).
    @discardableResult
    public func registerModel(multiFile descriptors: [ModelFileDescriptor], id: String, name: String,
                              framework: InferenceFramework, modality: ModelCategory) async throws -> ModelInfo {
        guard !descriptors.isEmpty else {
            throw RunAnywhereError(.invalidConfiguration, "A multi-file model needs at least one file descriptor.")
        }
        let names = descriptors.map(\.fileName)
        guard Set(names).count == names.count else {
            throw RunAnywhereError(.invalidConfiguration, "Two descriptors of '\(id)' share a file name.")
        }
        let main = descriptors.first { $0.role == .model } ?? descriptors[0]
        let model = ModelInfo(id: id, name: name, category: modality, framework: framework,
                              format: ModelFormat(fileName: main.fileName), artifact: .multiFile(descriptors), source: .registered)
        return try await models.register(model)
    }

    private func resolvedID(_ id: String?, url: URL) async throws -> String {
        if let id {
            try ModelID.validate(id)
            return ModelID.canonical(id)
        }
        return await models.derivedID(for: url)
    }

    static func parseURL(_ string: String) throws -> URL {
        guard let url = URL(string: string.trimmingCharacters(in: .whitespaces)), let scheme = url.scheme?.lowercased(), url.host != nil else {
            throw RunAnywhereError(.invalidConfiguration, "'\(string.prefix(200))' is not a valid URL.")
        }
        guard url.isHTTPOrHTTPS else {
            throw RunAnywhereError(.invalidConfiguration, "Unsupported URL scheme '\(scheme)' in '\(string.prefix(200))': only http and https are allowed.")
        }
        return url
    }
}
