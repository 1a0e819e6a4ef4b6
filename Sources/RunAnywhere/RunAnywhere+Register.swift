import RunAnywhereCore

extension RunAnywhere {
    /// Registers a single-file model by URL. See ``RunAnywhereSDK/registerModel(id:name:url:framework:modality:sha256:sizeBytes:contextLength:)``.
    @discardableResult
    public static func registerModel(id: String? = nil, name: String, url: String, framework: InferenceFramework,
                                     modality: ModelCategory, sha256: String? = nil, sizeBytes: Int64? = nil,
                                     contextLength: Int? = nil) async throws -> ModelInfo {
        try await shared.registerModel(id: id, name: name, url: url, framework: framework, modality: modality,
                                       sha256: sha256, sizeBytes: sizeBytes, contextLength: contextLength)
    }

    /// Registers a model shipped as an archive. See ``RunAnywhereSDK/registerModel(archive:structure:id:name:framework:modality:sha256:sizeBytes:)``.
    @discardableResult
    public static func registerModel(archive: String, structure: ArchiveStructure, id: String? = nil, name: String,
                                     framework: InferenceFramework, modality: ModelCategory, sha256: String? = nil,
                                     sizeBytes: Int64? = nil) async throws -> ModelInfo {
        try await shared.registerModel(archive: archive, structure: structure, id: id, name: name, framework: framework,
                                       modality: modality, sha256: sha256, sizeBytes: sizeBytes)
    }

    /// Registers a multi-file model. See ``RunAnywhereSDK/registerModel(multiFile:id:name:framework:modality:)``.
    @discardableResult
    public static func registerModel(multiFile descriptors: [ModelFileDescriptor], id: String, name: String,
                                     framework: InferenceFramework, modality: ModelCategory) async throws -> ModelInfo {
        try await shared.registerModel(multiFile: descriptors, id: id, name: name, framework: framework, modality: modality)
    }
}
