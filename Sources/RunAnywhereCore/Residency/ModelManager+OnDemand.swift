import Foundation

extension ModelManager {
    /// What a service (llm, stt) needs of a model, for ``residentModel(_:loadOptions:need:)``.
    struct ModelNeed {
        /// Categories that can serve the call.
        var categories: Set<ModelCategory>
        /// The category whose most recent resident model serves a call that names none.
        var fallback: ModelCategory
        /// "language model", "speech recognition model".
        var kind: String
        /// Where callers name the model: "LlmOptions(model:)".
        var optionsField: String
    }

    /// The id of the model a service call uses, resident: the one named (downloaded and loaded on demand;
    /// a resident one is reused unless load options are given), else the most recently used resident model
    /// of `need.fallback`.
    /// - Throws: `.modelNotLoaded` when none is named and none is resident; `.invalidConfiguration` for a model
    ///   of another category; the errors of download and load.
    func residentModel(_ id: String?, loadOptions: LoadOptions?, need: ModelNeed) async throws -> String {
        guard let id else {
            if let resident = await residency.mostRecent(category: need.fallback) { return resident }
            throw RunAnywhereError(.modelNotLoaded, "No \(need.kind) is loaded. Name one in \(need.optionsField) or load one with models.load(id:).")
        }
        var model = try await require(id)
        guard need.categories.contains(model.category) else {
            throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' is a \(model.category.rawValue) model, not a \(need.kind).", modelId: id)
        }
        if !model.isDownloaded, !residency.mayServeRemotely(model, loadOptions) {
            model = try await downloadToCompletion(id: model.id)
        }
        if await residency.isResident(model.id), loadOptions == nil {
            return model.id
        }
        _ = try await residency.load(model, options: loadOptions ?? LoadOptions(), evictIfNeeded: true)
        return model.id
    }
}
