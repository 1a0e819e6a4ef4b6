import Foundation
import RunAnywhereCore
import RunAnywhereGGUF
import RunAnywhereImaging

extension NativeBackend {
    /// The projector file of a downloaded `.vision` model (nil for other models).
    func projectorFile(_ model: ModelInfo) throws -> URL? {
        guard model.category == .vision else { return nil }
        guard let dir = model.localPath ?? model.primaryFilePath?.deletingLastPathComponent(),
              let file = model.artifact.files.first(where: { $0.role == .projector }) else {
            throw RunAnywhereError(.invalidModelFormat, "Vision model '\(model.id)' has no projector file on disk.", modelId: model.id)
        }
        return dir.appendingPathComponent(file.fileName)
    }

    /// The projector of a `.vision` model, opened once for the whole load (nil for other models), and its share of the
    /// memory: its mapped weights, and while an image is encoded the encoder's activations plus the largest image's
    /// embeddings (the image tokens' KV entries are part of the context's cache); an image never becomes more tokens
    /// than the context holds.
    func openProjector(_ model: ModelInfo, embeddingLength: Int, contextLength: Int) throws
        -> (vision: GGUFVisionModel, weights: Int, working: Int)? {
        guard let path = try projectorFile(model) else { return nil }
        do {
            let vision = try GGUFVisionModel(path: path.path)
            let tokens = min(vision.maxTokensPerImage ?? contextLength, contextLength)
            return (vision, vision.file.fileSize, vision.encoderScratchBytes + tokens * embeddingLength * 4)
        } catch let error as GGUFError {
            throw error.runAnywhereError(modelId: model.id, path: path)
        }
    }
}

extension NativeModel: VisionLanguageModel {
    func generate(_ request: BackendGenerationRequest, images: [VlmImage], onText: (String) -> Void,
                  shouldContinue: () -> Bool) throws -> BackendGenerationStats {
        guard !images.isEmpty else { return try generate(request, onText: onText, shouldContinue: shouldContinue) }
        guard let vision else {
            throw RunAnywhereError(.invalidConfiguration, "Model '\(modelId)' has no vision projector, so it cannot take images.", modelId: modelId)
        }
        do {
            // Images become many tokens (SmolVLM-256M: up to 13 tiles of 64); refuse before minutes of encoding
            // when they cannot fit the context at all.
            let pixels = try images.map { try decode($0) }
            let imageTokens = try pixels.reduce(0) { $0 + (try vision.tokenCount(width: $1.width, height: $1.height)) }
            guard imageTokens < context.contextLength else {
                throw RunAnywhereError(.invalidConfiguration, "The images become \(imageTokens) image tokens, more than the context window of \(context.contextLength). Load the model with a larger LoadOptions.contextLength, or send fewer or smaller images.", modelId: modelId)
            }
            var embedded: [ImageEmbeddings] = []
            for image in pixels {
                guard shouldContinue() else { break }
                embedded.append(try context.encode(image, with: vision))
            }
            let o = request.options
            let sampling = SamplingParameters(temperature: Float(o.temperature), topK: o.topK, topP: Float(o.topP), minP: Float(o.minP),
                                              repetitionPenalty: Float(o.repetitionPenalty), seed: o.seed)
            let stats = try context.generate(parts: promptParts(request, images: embedded), sampling: sampling, maxTokens: o.maxTokens,
                                             stop: o.stopSequences, shouldContinue: shouldContinue, onText: onText)
            return BackendGenerationStats(promptTokens: stats.promptTokens, outputTokens: stats.generatedTokens,
                                          promptSeconds: stats.promptSeconds + embedded.reduce(0) { $0 + $1.encodeSeconds },
                                          decodeSeconds: stats.decodeSeconds, finishReason: RunAnywhereCore.FinishReason(stats.finishReason))
        } catch let error as GGUFError {
            throw RunAnywhereError(.generationFailed, "Generation with '\(modelId)' failed: \(error.message).", modelId: modelId)
        }
    }

    /// The images before the prompt text. The chat template renders the turn; the images go right before the
    /// user's text in it. When the template does not show the text as written (SmolVLM's template wants typed
    /// content lists), SmolVLM's own layout is used: `<|im_start|>User:` images, text `<end_of_utterance>\nAssistant:`.
    func promptParts(_ request: BackendGenerationRequest, images: [ImageEmbeddings]) -> [VisionPromptPart] {
        let imageParts = images.map { VisionPromptPart.image($0) }
        let rendered = renderPrompt(request)
        if template != nil, !request.options.rawPrompt, let at = rendered.range(of: request.prompt, options: .backwards) {
            return [.text(String(rendered[..<at.lowerBound]))] + imageParts + [.text(String(rendered[at.lowerBound...]))]
        }
        if request.options.rawPrompt { return imageParts + [.text(request.prompt)] }
        var head = "<|im_start|>"
        if let system = request.options.systemPrompt { head += "System: \(system)<end_of_utterance>\n" }
        for turn in request.options.history {
            head += "\(turn.role == .user ? "User" : "Assistant"): \(turn.content)<end_of_utterance>\n"
        }
        return [.text(head + "User:")] + imageParts + [.text(request.prompt + "<end_of_utterance>\nAssistant:")]
    }

    /// Pixels of an image, decoded with the system's libpng / libjpeg-turbo.
    func decode(_ image: VlmImage) throws -> RGBImage {
        do {
            switch image.source {
            case .file(let url): return try ImageDecoder.decode(contentsOf: url)
            case .encoded(let data): return try ImageDecoder.decode(data)
            case .pixels(let w, let h, let rgb): return try RGBImage(width: w, height: h, pixels: rgb)
            }
        } catch let error as ImageDecodingError {
            throw RunAnywhereError(.invalidConfiguration, "The image could not be used: \(error.message).", modelId: modelId)
        } catch let error as GGUFError {
            throw RunAnywhereError(.invalidConfiguration, "The image could not be used: \(error.message).", modelId: modelId)
        }
    }
}
