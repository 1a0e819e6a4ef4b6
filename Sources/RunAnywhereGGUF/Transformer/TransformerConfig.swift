/// The hyper-parameters of a decoder-only transformer, read from GGUF metadata (`<arch>.*` keys).
struct TransformerConfig: Sendable, Hashable {
    /// The architectures the engine runs.
    enum Architecture: String, Sendable, Hashable {
        case llama, qwen2, qwen3, gemma3
    }

    let architecture: Architecture
    let layerCount: Int
    let embeddingLength: Int
    let headCount: Int
    let headCountKV: Int
    /// Per-head dimension of queries and keys.
    let keyLength: Int
    /// Per-head dimension of values.
    let valueLength: Int
    let feedForwardLength: Int
    let vocabularySize: Int
    /// Context length the model was trained with (0 when the file does not say).
    let trainedContextLength: Int
    let ropeDimensionCount: Int
    let ropeFreqBase: Float
    let ropeFreqScale: Float
    /// NeoX-style RoPE (rotate halves) rather than interleaved pairs.
    let ropeNeoX: Bool
    let rmsNormEpsilon: Float
    /// Sliding-window size of the local attention layers (`<arch>.attention.sliding_window`), 0 when every
    /// layer attends to the whole context.
    let slidingWindow: Int
    /// Per layer: whether it is a local (sliding-window) layer.
    let isLocalLayer: [Bool]
    /// RoPE base of the local layers (`<arch>.rope.freq_base_swa`, default 10000); they use no RoPE scaling.
    let ropeFreqBaseLocal: Float
    /// Factor applied to queries before q·k (1/sqrt of the head dimension; Gemma 3 27B: of hidden / heads).
    let attentionScale: Float
    /// Factor applied to the token embeddings (Gemma: sqrt(hidden size)), or nil.
    let embeddingScale: Float?
    /// Final logit soft-capping (`<arch>.final_logit_softcapping`), or nil.
    let finalLogitSoftcap: Float?

    /// Reads and checks the configuration.
    /// - Throws: `GGUFError(.unsupported)` for an architecture the engine does not run, `.invalidFormat`
    ///   for missing or inconsistent hyper-parameters.
    init(file: GGUFFile) throws {
        guard let archName = file.string("general.architecture") else {
            throw GGUFError(.invalidFormat, "\(file.path): general.architecture is missing")
        }
        guard let arch = Architecture(rawValue: archName) else {
            throw GGUFError(.unsupported, "architecture \"\(archName)\" is not supported by the native engine (supported: \(Architecture.supportedNames))")
        }
        architecture = arch
        func required(_ key: String) throws -> Int {
            guard let v = file.int("\(archName).\(key)") else {
                throw GGUFError(.invalidFormat, "\(file.path): metadata \(archName).\(key) is missing")
            }
            guard v > 0, v < 1 << 30 else {
                throw GGUFError(.invalidFormat, "\(file.path): metadata \(archName).\(key) = \(v) is out of range")
            }
            return v
        }
        func optional(_ key: String, default value: Int) throws -> Int {
            guard file.metadata["\(archName).\(key)"] != nil else { return value }
            return try required(key)
        }
        layerCount = try required("block_count")
        embeddingLength = try required("embedding_length")
        headCount = try required("attention.head_count")
        headCountKV = try optional("attention.head_count_kv", default: headCount)
        guard headCount % headCountKV == 0 else {
            throw GGUFError(.invalidFormat, "\(file.path): head_count \(headCount) is not a multiple of head_count_kv \(headCountKV)")
        }
        guard embeddingLength % headCount == 0 || file.metadata["\(archName).attention.key_length"] != nil else {
            throw GGUFError(.invalidFormat, "\(file.path): embedding_length \(embeddingLength) is not a multiple of head_count \(headCount)")
        }
        keyLength = try optional("attention.key_length", default: embeddingLength / headCount)
        valueLength = try optional("attention.value_length", default: keyLength)
        feedForwardLength = try required("feed_forward_length")
        trainedContextLength = (try? optional("context_length", default: 0)) ?? 0
        ropeDimensionCount = try optional("rope.dimension_count", default: keyLength)
        guard ropeDimensionCount <= keyLength, ropeDimensionCount % 2 == 0, ropeDimensionCount <= 1024 else {
            throw GGUFError(.invalidFormat, "\(file.path): rope.dimension_count \(ropeDimensionCount) does not fit head dimension \(keyLength)")
        }
        let base = file.double("\(archName).rope.freq_base") ?? 10_000
        guard base.isFinite, base > 0 else {
            throw GGUFError(.invalidFormat, "\(file.path): rope.freq_base \(base) is not a positive number")
        }
        ropeFreqBase = Float(base)
        var scale: Float = 1
        let scalingType = file.string("\(archName).rope.scaling.type") ?? "none"
        switch scalingType {
        case "none", "":
            break
        case "linear":
            if let factor = file.double("\(archName).rope.scaling.factor"), factor > 0 { scale = Float(1 / factor) }
        default:
            throw GGUFError(.unsupported, "RoPE scaling \"\(scalingType)\" is not supported by the native engine")
        }
        if let legacy = file.double("\(archName).rope.scale_linear"), legacy > 0 { scale = Float(1 / legacy) }
        ropeFreqScale = scale
        ropeNeoX = arch != .llama
        (slidingWindow, isLocalLayer) = try Self.slidingWindow(file: file, arch: arch, layerCount: layerCount)
        let localBase = file.double("\(archName).rope.freq_base_swa") ?? 10_000
        guard localBase.isFinite, localBase > 0 else {
            throw GGUFError(.invalidFormat, "\(file.path): rope.freq_base_swa \(localBase) is not a positive number")
        }
        ropeFreqBaseLocal = Float(localBase)
        // As llama.cpp: Gemma 3 27B (62 layers) scales queries by hidden / heads, every other size by the head dimension.
        let scaleDimension = arch == .gemma3 && layerCount == 62 ? embeddingLength / headCount : keyLength
        attentionScale = 1 / Float(scaleDimension).squareRoot()
        embeddingScale = arch == .gemma3 ? Float(embeddingLength).squareRoot() : nil
        if let cap = file.double("\(archName).final_logit_softcapping"), cap != 0 {
            guard cap.isFinite, cap > 0 else {
                throw GGUFError(.invalidFormat, "\(file.path): final_logit_softcapping \(cap) is not a positive number")
            }
            finalLogitSoftcap = Float(cap)
        } else {
            finalLogitSoftcap = nil
        }
        let eps = file.double("\(archName).attention.layer_norm_rms_epsilon") ?? 1e-5
        guard eps.isFinite, eps >= 0 else {
            throw GGUFError(.invalidFormat, "\(file.path): layer_norm_rms_epsilon \(eps) is invalid")
        }
        rmsNormEpsilon = Float(eps)
        // The logits have one entry per row of the embedding matrix (the tokenizer's list should agree).
        guard let embd = file.tensor(named: "token_embd.weight"), embd.shape.count == 2, embd.shape[1] > 0 else {
            throw GGUFError(.invalidFormat, "\(file.path): tensor token_embd.weight is missing or not a matrix")
        }
        vocabularySize = embd.shape[1]
    }

    /// The window and which layers are local, as llama.cpp derives them for Gemma 3: a window from
    /// `<arch>.attention.sliding_window`; the pattern from `<arch>.attention.sliding_window_pattern` (an array of
    /// per-layer flags, or a period n: layer i is local unless i % n == n - 1), default period 6 (every sixth
    /// layer global). Other architectures, and a window of 0, have no local layers.
    private static func slidingWindow(file: GGUFFile, arch: Architecture, layerCount: Int) throws -> (Int, [Bool]) {
        let name = arch.rawValue
        let none = (0, [Bool](repeating: false, count: layerCount))
        guard arch == .gemma3, let window = file.int("\(name).attention.sliding_window"), window != 0 else { return none }
        guard window > 0, window < 1 << 30 else {
            throw GGUFError(.invalidFormat, "\(file.path): attention.sliding_window = \(window) is out of range")
        }
        let patternKey = "\(name).attention.sliding_window_pattern"
        if case .array(let values)? = file.metadata[patternKey] {
            let flags = values.compactMap { v -> Bool? in if case .bool(let b) = v { return b } else { return nil } }
            guard flags.count == layerCount else {
                throw GGUFError(.invalidFormat, "\(file.path): \(patternKey) has \(values.count) entries of which \(flags.count) flags, expected \(layerCount)")
            }
            return (window, flags)
        }
        let period = file.metadata[patternKey] == nil ? 6 : (file.int(patternKey) ?? -1)
        guard period >= 0 else { throw GGUFError(.invalidFormat, "\(file.path): \(patternKey) is neither flags nor a period") }
        return (window, (0..<layerCount).map { period == 0 || $0 % period < period - 1 })
    }
}

extension TransformerConfig.Architecture {
    /// The names of every architecture the engine runs, for messages.
    static let supportedNames = "llama, qwen2, qwen3, gemma3"
}
