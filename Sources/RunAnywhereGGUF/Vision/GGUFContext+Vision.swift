/// A part of a prompt with images: text (chat markup included, special tokens parsed) or an encoded image.
public enum VisionPromptPart: Sendable {
    /// Text, tokenized with special tokens parsed.
    case text(String)
    /// An image, placed as llama.cpp's mtmd places idefics3 images (see ``GGUFContext/visionPromptKeys(_:)``).
    case image(ImageEmbeddings)
}

/// A prompt as a row per position: token ids, or image tokens (whose keys are negative placeholders).
struct VisionSequence {
    enum Run {
        case tokens(Range<Int>)
        /// Positions `range` take image tokens from `first` on.
        case image(ImageEmbeddings, first: Int, range: Range<Int>)
    }

    /// Per position: the token id, or for an image token a negative key derived from the image's pixels and the
    /// token's index, so the KV cache prefix is reused only for the same image at the same place.
    var keys: [Int32] = []
    var runs: [Run] = []

    mutating func append(_ tokens: [Int32]) {
        guard !tokens.isEmpty else { return }
        runs.append(.tokens(keys.count..<(keys.count + tokens.count)))
        keys += tokens
    }

    mutating func append(_ image: ImageEmbeddings, tile: Int) {
        let n = image.tokensPerTile, first = tile * n
        runs.append(.image(image, first: first, range: keys.count..<(keys.count + n)))
        for i in first..<(first + n) {
            let mixed = (image.contentHash ^ UInt64(i)) &* 0x9E37_79B9_7F4A_7C15
            keys.append(-1 - Int32(truncatingIfNeeded: mixed >> 34))
        }
    }
}

extension GGUFContext {
    /// The positions of a prompt with images, as mtmd lays out idefics3 (SmolVLM) images: before each slice
    /// `<fake_token_around_image><row_R_col_C>` and its image tokens, `\n` after each row but the last, then
    /// `\n\n<fake_token_around_image><global-img>`, the global tile's tokens and `<fake_token_around_image>`.
    /// Text parts are tokenized one by one with special tokens parsed; the BOS token starts the prompt when the
    /// vocabulary adds one.
    /// - Returns: token ids, with a negative placeholder for each image token.
    /// - Throws: `GGUFError(.unsupported)` when the vocabulary lacks the image marker tokens or an image's token
    ///   width differs from the model's embedding length.
    public func visionPromptKeys(_ parts: [VisionPromptPart]) throws -> [Int32] {
        try visionSequence(parts).keys
    }

    func visionSequence(_ parts: [VisionPromptPart]) throws -> VisionSequence {
        let tok = model.tokenizer
        var seq = VisionSequence()
        if tok.addsBOS, let bos = tok.bosTokenId { seq.append([bos]) }
        var markers: [String: Int32] = [:]
        func marker(_ text: String) throws -> Int32 {
            if let id = markers[text] { return id }
            let bytes = Array(text.utf8)
            for id in 0..<Int32(tok.vocabularySize) where tok.piece(for: id) == bytes {
                markers[text] = id
                return id
            }
            throw GGUFError(.unsupported, "the model's vocabulary has no token \"\(text.debugDescription)\", which idefics3 image prompts need")
        }
        for part in parts {
            switch part {
            case .text(let text):
                seq.append(tok.encode(text, addSpecial: false, parseSpecial: true))
            case .image(let image):
                guard image.width == model.config.embeddingLength else {
                    throw GGUFError(.unsupported, "image tokens are \(image.width) wide but the text model's embeddings are \(model.config.embeddingLength): the projector does not belong to this model")
                }
                for y in 0..<image.rows {
                    for x in 0..<image.columns {
                        seq.append(tok.encode("<fake_token_around_image><row_\(y + 1)_col_\(x + 1)>", addSpecial: false, parseSpecial: true))
                        seq.append(image, tile: y * image.columns + x)
                    }
                    if y != image.rows - 1 { seq.append([try marker("\n")]) }
                }
                seq.append([try marker("\n\n"), try marker("<fake_token_around_image>"), try marker("<global-img>")])
                seq.append(image, tile: image.rows * image.columns)
                seq.append([try marker("<fake_token_around_image>")])
            }
        }
        return seq
    }

    /// Generates text after a prompt with images, streaming it as ``generate(prompt:sampling:maxTokens:stop:shouldContinue:onText:)``
    /// does. Image tokens enter the text model at consecutive positions under the ordinary causal mask; a cached prefix
    /// (same text, same images) is reused.
    /// - Returns: counts and timings; the prompt counts include the image tokens (encoding time is not included).
    /// - Throws: ``GGUFError`` as ``visionPromptKeys(_:)``, or when the prompt does not fit in the context or does
    ///   not end with text.
    public func generate(parts: [VisionPromptPart], sampling: SamplingParameters, maxTokens: Int, stop: [String],
                         shouldContinue: () -> Bool, onText: (String) -> Void) throws -> GenerationStats {
        let seq = try visionSequence(parts)
        guard let last = seq.keys.last, last >= 0 else {
            throw GGUFError(.unsupported, "a prompt with images must end with text")
        }
        guard seq.keys.count <= contextLength else {
            throw GGUFError(.unsupported, "the prompt has \(seq.keys.count) tokens (images included), more than the context length \(contextLength)")
        }
        var common = 0
        let cached = cachedTokens
        while common < min(cached.count, seq.keys.count - 1) && cached[common] == seq.keys[common] { common += 1 }
        truncate(to: common)
        let clock = ContinuousClock()
        let start = clock.now
        // Everything but the last token; generate() evaluates that one and samples.
        let end = seq.keys.count - 1
        for run in seq.runs {
            guard shouldContinue() else { break }
            switch run {
            case .tokens(let r):
                let lo = max(r.lowerBound, common), hi = min(r.upperBound, end)
                if lo < hi { _ = try evaluate(Array(seq.keys[lo..<hi])) }
            case .image(let image, let first, let r):
                let lo = max(r.lowerBound, common), hi = min(r.upperBound, end)
                if lo < hi { try evaluate(image, tokens: (first + lo - r.lowerBound)..<(first + hi - r.lowerBound), keys: Array(seq.keys[lo..<hi])) }
            }
        }
        let imageSeconds = Self.seconds(clock.now - start)
        let evaluatedBefore = position - common
        guard position == end else {   // cancelled between runs
            return GenerationStats(promptTokens: seq.keys.count, evaluatedPromptTokens: evaluatedBefore, generatedTokens: 0,
                                   promptSeconds: imageSeconds, decodeSeconds: 0, finishReason: .cancelled, tokens: [])
        }
        var stats = try generate(prompt: seq.keys, sampling: sampling, maxTokens: maxTokens, stop: stop,
                                 shouldContinue: shouldContinue, onText: onText)
        stats.evaluatedPromptTokens += evaluatedBefore
        stats.promptSeconds += imageSeconds
        return stats
    }

    /// Evaluates image tokens `tokens` of an image at the next positions, in passes of up to `batchSize`.
    func evaluate(_ image: ImageEmbeddings, tokens: Range<Int>, keys: [Int32]) throws {
        guard transformer.position + tokens.count <= contextLength else {
            throw GGUFError(.unsupported, "context is full: \(transformer.position) tokens cached + \(tokens.count) image tokens exceed the context length \(contextLength)")
        }
        var scratch = [Float](repeating: 0, count: model.vocabularySize)
        image.values.withUnsafeBufferPointer { values in
            scratch.withUnsafeMutableBufferPointer { logits in
                guard let base = values.baseAddress, let out = logits.baseAddress else { return }
                var t = tokens.lowerBound
                while t < tokens.upperBound {
                    let n = min(batchSize, tokens.upperBound - t)
                    transformer.forward(embeddings: base + t * image.width, count: n, allLogits: false, logits: out)
                    t += n
                }
            }
        }
        cachedTokens += keys
    }

    /// Encodes an image on this context's thread pool.
    /// - Throws: as ``GGUFVisionModel/encode(_:threads:)``.
    public func encode(_ image: RGBImage, with vision: GGUFVisionModel) throws -> ImageEmbeddings {
        try vision.encode(image, pool: transformer.pool)
    }
}
