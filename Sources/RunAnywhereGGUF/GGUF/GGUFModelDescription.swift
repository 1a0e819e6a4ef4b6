/// How rotary position embedding pairs the values of a head.
public enum GGUFRopeStyle: String, Sendable, Hashable, Codable {
    /// Consecutive pairs (x[2i], x[2i+1]), as llama.cpp's `LLAMA_ROPE_TYPE_NORM` (Llama, Mistral, DeepSeek, ...).
    case normal
    /// Pairs half a rotation apart (x[i], x[i + n_rot/2]), as `LLAMA_ROPE_TYPE_NEOX` (Qwen2/3, Phi-3, Gemma, ...).
    case neox
}

/// RoPE context-extension settings (`<arch>.rope.scaling.*`).
public struct GGUFRopeScaling: Sendable, Hashable, Codable {
    /// The scaling method: `"linear"`, `"yarn"`, `"longrope"`, ...
    public var type: String
    /// The scaling factor (context multiplier).
    public var factor: Double
    /// The context length the model was trained with before extension, when given.
    public var originalContextLength: Int?

    /// Creates rope scaling settings.
    public init(type: String, factor: Double, originalContextLength: Int? = nil) {
        self.type = type
        self.factor = factor
        self.originalContextLength = originalContextLength
    }
}

/// The shape and settings of a transformer model, read from GGUF metadata and its tensor directory.
///
/// ```swift
/// let file = try GGUFFile(path: path)
/// let model = try GGUFModelDescription(file: file)
/// print(model.architecture, model.blockCount, model.quantization)   // "qwen3 28 Q4_K_M"
/// ```
public struct GGUFModelDescription: Sendable, Hashable, Codable {
    /// `general.architecture`, e.g. `"llama"`, `"qwen3"`.
    public var architecture: String
    /// `general.name`, when present.
    public var name: String?
    /// Number of transformer blocks (`<arch>.block_count`).
    public var blockCount: Int
    /// Hidden size (`<arch>.embedding_length`).
    public var embeddingLength: Int
    /// Query heads (`<arch>.attention.head_count`; the largest value when given per layer).
    public var headCount: Int
    /// Key/value heads (`<arch>.attention.head_count_kv`, default `headCount`).
    public var headCountKV: Int
    /// Dimension of each key head (`<arch>.attention.key_length`, default `embeddingLength / headCount`).
    public var keyLength: Int
    /// Dimension of each value head (`<arch>.attention.value_length`, default `keyLength`).
    public var valueLength: Int
    /// Feed-forward inner size (`<arch>.feed_forward_length`; the largest value when given per layer).
    public var feedForwardLength: Int
    /// Context length the model was trained for (`<arch>.context_length`).
    public var contextLength: Int
    /// RoPE base frequency (`<arch>.rope.freq_base`, default 10000).
    public var ropeFreqBase: Double
    /// Number of dimensions of each head that are rotated (`<arch>.rope.dimension_count`, default `keyLength`).
    public var ropeDimensionCount: Int
    /// How RoPE pairs values, by architecture (as llama.cpp decides it).
    public var ropeStyle: GGUFRopeStyle
    /// RoPE context extension, or nil when none.
    public var ropeScaling: GGUFRopeScaling?
    /// RMSNorm epsilon (`<arch>.attention.layer_norm_rms_epsilon`, default 1e-5).
    public var rmsNormEpsilon: Double
    /// Vocabulary size (tokenizer token count, else `<arch>.vocab_size`, else the embedding rows).
    public var vocabSize: Int
    /// `general.file_type` (llama.cpp's `llama_ftype`), when present.
    public var fileType: Int?
    /// Quantization name, e.g. `"Q4_K_M"`, `"Q8_0"`, `"F16"`; from `general.file_type`, or from the
    /// most common matrix type when that key is absent.
    public var quantization: String
    /// `tokenizer.chat_template`, when present.
    public var chatTemplate: String?
    /// Whether the output projection reuses the token embedding (`token_embd.weight` present,
    /// `output.weight` absent).
    public var hasTiedOutput: Bool
    /// Total number of weights (elements of every tensor).
    public var parameterCount: Int
    /// Sum of the byte counts of every tensor.
    public var tensorBytes: Int
    /// How many tensors have each ggml type, keyed by type name (`"Q4_K"`, `"F32"`, ...).
    public var tensorTypeCounts: [String: Int]
    /// How many tensors have each type the engine cannot compute with (``GGMLType/isComputable``), keyed by type name
    /// (`"IQ2_XXS"`, `"IQ3_S"`, ...); empty for a file whose every tensor it can use.
    public var uncomputableTensorTypes: [String: Int]

    /// Reads the description of a GGUF model.
    ///
    /// - Throws: ``GGUFError`` `.invalidFormat` naming the key when a required key
    ///   (`general.architecture`, `<arch>.block_count`, `.embedding_length`, `.attention.head_count`,
    ///   `.context_length`) is missing or the sizes are inconsistent.
    public init(file: GGUFFile) throws {
        guard let arch = file.string("general.architecture"), !arch.isEmpty else {
            throw GGUFError(.invalidFormat, "\(file.path): general.architecture is missing")
        }
        func key(_ suffix: String) -> String { "\(arch).\(suffix)" }
        func required(_ suffix: String) throws -> Int {
            guard let v = Self.positiveInt(file, key(suffix)) else {
                throw GGUFError(.invalidFormat, "\(file.path): \(key(suffix)) is missing or not a positive integer")
            }
            return v
        }
        architecture = arch
        name = file.string("general.name")
        blockCount = try required("block_count")
        embeddingLength = try required("embedding_length")
        headCount = try required("attention.head_count")
        headCountKV = Self.positiveInt(file, key("attention.head_count_kv")) ?? headCount
        contextLength = try required("context_length")
        feedForwardLength = Self.positiveInt(file, key("feed_forward_length")) ?? 0

        if let k = Self.positiveInt(file, key("attention.key_length")) {
            keyLength = k
        } else {
            guard embeddingLength % headCount == 0 else {
                throw GGUFError(.invalidFormat, "\(file.path): \(key("embedding_length")) \(embeddingLength) is not a multiple of the head count \(headCount) and \(key("attention.key_length")) is missing")
            }
            keyLength = embeddingLength / headCount
        }
        valueLength = Self.positiveInt(file, key("attention.value_length")) ?? keyLength
        guard headCount % headCountKV == 0 else {
            throw GGUFError(.invalidFormat, "\(file.path): head count \(headCount) is not a multiple of the key/value head count \(headCountKV)")
        }

        func number(_ suffix: String, default value: Double, allowsZero: Bool = false) throws -> Double {
            guard let v = file.double(key(suffix)) else { return value }
            guard v.isFinite, v > 0 || (allowsZero && v == 0) else {
                throw GGUFError(.invalidFormat, "\(file.path): \(key(suffix)) is \(v), not a positive number")
            }
            return v
        }
        ropeFreqBase = try number("rope.freq_base", default: 10_000)
        ropeDimensionCount = Self.positiveInt(file, key("rope.dimension_count")) ?? keyLength
        ropeStyle = Self.neoxArchitectures.contains(arch) ? .neox : .normal
        let scalingType = file.string(key("rope.scaling.type"))
        let scalingFactor = file.metadata[key("rope.scaling.factor")] != nil
            ? try number("rope.scaling.factor", default: 1, allowsZero: true)
            : try number("rope.scale_linear", default: 1, allowsZero: true)
        if scalingFactor != 0, scalingFactor != 1, scalingType != "none" {
            ropeScaling = GGUFRopeScaling(type: scalingType ?? "linear", factor: scalingFactor,
                                          originalContextLength: Self.positiveInt(file, key("rope.scaling.original_context_length")))
        } else {
            ropeScaling = nil
        }
        rmsNormEpsilon = try number("attention.layer_norm_rms_epsilon", default: 1e-5, allowsZero: true)

        let embedding = file.tensor(named: "token_embd.weight")
        if let tokens = file.metadata["tokenizer.ggml.tokens"]?.arrayValue {
            vocabSize = tokens.count
        } else if let v = Self.positiveInt(file, key("vocab_size")) {
            vocabSize = v
        } else if let e = embedding, e.shape.count >= 2 {
            vocabSize = e.shape[1]
        } else {
            vocabSize = 0
        }

        var counts: [String: Int] = [:], uncomputable: [String: Int] = [:]
        var matrixTypes: [GGMLType: Int] = [:]
        var parameters = 0
        var bytes = 0
        for t in file.tensors {
            counts[t.type.name, default: 0] += 1
            if !t.type.isComputable { uncomputable[t.type.name, default: 0] += 1 }
            if t.shape.count >= 2 { matrixTypes[t.type, default: 0] += 1 }
            // Each tensor lies within the file, so these sums cannot overflow.
            parameters += t.elementCount
            bytes += t.byteCount
        }
        tensorTypeCounts = counts
        uncomputableTensorTypes = uncomputable
        parameterCount = parameters
        tensorBytes = bytes

        let ftype = file.int("general.file_type")
        fileType = ftype
        if let ftype, let named = Self.fileTypeName(ftype) {
            quantization = named
        } else if let common = matrixTypes.max(by: { a, b in
            a.value != b.value ? a.value < b.value : a.key.rawValue > b.key.rawValue  // ties: lowest type id
        })?.key {
            quantization = common.name
        } else {
            quantization = "unknown"
        }
        chatTemplate = file.string("tokenizer.chat_template")
        hasTiedOutput = file.tensor(named: "output.weight") == nil && embedding != nil
    }

    /// A positive integer at `key`, or the largest element of a per-layer integer array.
    private static func positiveInt(_ file: GGUFFile, _ key: String) -> Int? {
        if let v = file.int(key) { return v > 0 ? v : nil }
        if let values = file.intArray(key), let largest = values.max(), largest > 0 { return largest }
        return nil
    }

    /// Architectures whose RoPE pairs values offset by n_rot/2 (llama.cpp's NEOX rope type).
    static let neoxArchitectures: Set<String> = [
        "falcon", "grok", "dbrx", "bert", "jina-bert-v2", "nomic-bert", "nomic-bert-moe", "stablelm", "bitnet",
        "qwen", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "olmo2", "olmoe", "phi2", "phi3", "phimoe", "plamo",
        "gemma", "gemma2", "gemma3", "gemma3n", "gemma-embedding", "starcoder2", "openelm", "gptneox", "codeshell",
        "orion", "nemotron", "exaone", "exaone4", "minicpm3", "dots1", "hunyuan-moe", "hunyuan-dense", "gpt-oss",
        "lfm2", "smallthinker", "seed_oss", "ernie4_5-moe",
    ]

    /// The llama.cpp name of a `general.file_type` value (`llama_ftype`), e.g. 15 → `"Q4_K_M"`.
    public static func fileTypeName(_ fileType: Int) -> String? {
        switch fileType & ~1024 {  // 1024 marks a guessed file type
        case 0: return "F32"
        case 1: return "F16"
        case 2: return "Q4_0"
        case 3: return "Q4_1"
        case 7: return "Q8_0"
        case 8: return "Q5_0"
        case 9: return "Q5_1"
        case 10: return "Q2_K"
        case 11: return "Q3_K_S"
        case 12: return "Q3_K_M"
        case 13: return "Q3_K_L"
        case 14: return "Q4_K_S"
        case 15: return "Q4_K_M"
        case 16: return "Q5_K_S"
        case 17: return "Q5_K_M"
        case 18: return "Q6_K"
        case 19: return "IQ2_XXS"
        case 20: return "IQ2_XS"
        case 21: return "Q2_K_S"
        case 22: return "IQ3_XS"
        case 23: return "IQ3_XXS"
        case 24: return "IQ1_S"
        case 25: return "IQ4_NL"
        case 26: return "IQ3_S"
        case 27: return "IQ3_M"
        case 28: return "IQ2_S"
        case 29: return "IQ2_M"
        case 30: return "IQ4_XS"
        case 31: return "IQ1_M"
        case 32: return "BF16"
        case 36: return "TQ1_0"
        case 37: return "TQ2_0"
        case 38: return "MXFP4_MOE"
        case 39: return "NVFP4"
        case 40: return "Q1_0"
        default: return nil
        }
    }
}
