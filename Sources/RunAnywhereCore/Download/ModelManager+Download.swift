import Foundation

extension ModelManager {
    /// Downloads a model's files, verifies them and registers the model as downloaded.
    ///
    /// Returns at once; the stream carries `started`, `progress`…, `verifying`, (`extracting`) and
    /// `completed`, or ends by throwing a ``RunAnywhereError``. Interrupted downloads resume from the bytes
    /// already on disk. Two calls for one model share one transfer. Cancelling the consuming task (or
    /// dropping every stream) stops the transfer and keeps the partial bytes for later.
    ///
    /// ```swift
    /// for try await event in try await RunAnywhere.models.download(id: "qwen3-0.6b") {
    ///     if case .progress(let p) = event { print(p.percent ?? 0) }
    /// }
    /// ```
    /// - Throws: `.modelNotFound` for an unknown id, `.invalidConfiguration` for an id that cannot exist or a model
    ///   that exists only on a remote endpoint.
    public func download(id: String) async throws -> AsyncThrowingStream<DownloadEvent, any Error> {
        let model = try await require(id)
        if model.source == .remote {
            throw RunAnywhereError(.invalidConfiguration, "Model '\(id)' is served by a remote endpoint and has no files to download: use it directly (llm.generate, models.load) and the server runs it.", modelId: id)
        }
        if model.isDownloaded {
            return AsyncThrowingStream { continuation in
                continuation.yield(.completed(model))
                continuation.finish()
            }
        }
        if model.source == .imported { throw Self.importedFileGone(model) }
        return downloads.download(model)
    }

    /// Stops the download of `id` for every caller sharing it and returns once it has ended, with the bytes
    /// received so far flushed to disk and recorded, so a later ``download(id:)`` resumes from all of them
    /// (Ctrl-C in a command-line tool, an app going to the background). Streams of it end with `.cancelled`.
    /// Does nothing when no download of `id` runs in this process.
    public func cancelDownload(id: String) async {
        guard let model = await get(id: id) else { return }
        await downloads.cancel(id: model.id)
    }

    /// How many bytes of an interrupted download of this model are on disk, ready to be continued; nil when
    /// there are none (or the model is downloaded).
    public func resumableBytes(id: String) async -> Int64? {
        guard let model = await get(id: id), !model.isDownloaded else { return nil }
        return downloads.resumableBytes(model)
    }

    /// True when bytes of an interrupted download of this model are on disk and a new `download(id:)`
    /// would continue from them (also after the process restarted).
    public func isResumable(id: String) async -> Bool {
        guard let model = await get(id: id), !model.isDownloaded else { return false }
        return downloads.isResumable(model)
    }
}
