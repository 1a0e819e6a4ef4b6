import Foundation

extension ModelManager {
    /// Asks the servers how large the files of models not downloaded and of unknown size are (the head of a GET; no
    /// body is read) and keeps the answers in the registry (`downloadSize`), so listings show sizes before anything
    /// is downloaded. Offline, or for a server that does not say, a model keeps an unknown size; nothing is thrown.
    /// The size learnt is shown, not enforced: the download itself checks what the server sends then.
    /// - Parameters:
    ///   - ids: the models to ask about (all models when nil).
    ///   - timeoutSeconds: how long each request may wait for a connection or an answer.
    /// - Returns: the sizes learnt, by model id.
    @discardableResult
    public func learnDownloadSizes(ids: [String]? = nil, timeoutSeconds: Double = 5) async -> [String: Int64] {
        let wanted = ids.map { Set($0.map(ModelID.canonical)) }
        let models = await registry.all().filter { m in
            !m.isDownloaded && m.downloadSize == nil && wanted.map { $0.contains(ModelID.canonical(m.id)) } ?? true
        }
        let tokens = self.tokens
        let learnt = await withTaskGroup(of: (ModelInfo, Int64?).self) { group in
            for model in models {
                group.addTask {
                    var total: Int64 = 0
                    for file in model.artifact.files {
                        if let known = file.sizeBytes { total += known; continue }
                        // From where the download would come: the HF_ENDPOINT mirror for a Hugging Face URL.
                        let url = tokens.resolve(file.url)
                        guard let size = await HTTPGet.size(of: url, authorization: tokens.authorizationHeader(for: url),
                                                            timeoutSeconds: timeoutSeconds) else { return (model, nil) }
                        total += size
                    }
                    return (model, total)
                }
            }
            var out: [(ModelInfo, Int64)] = []
            for await (model, size) in group { if let size { out.append((model, size)) } }
            return out
        }
        var result: [String: Int64] = [:]
        for (model, size) in learnt {
            var sized = model
            sized.downloadSize = size
            if (try? await registry.register(sized)) != nil { result[model.id] = size }
        }
        return result
    }
}
