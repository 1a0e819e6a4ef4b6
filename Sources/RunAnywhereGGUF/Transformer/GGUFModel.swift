import CKernels

/// Options for loading a model into a context.
public struct GGUFLoadParameters: Sendable, Hashable, Codable {
    /// Tokens the KV cache holds; nil: the model's trained context length capped at 4096.
    public var contextLength: Int?
    /// Threads for the forward pass (caller included); nil: every core.
    public var threads: Int?
    /// Most tokens evaluated in one pass of prompt processing.
    public var batchSize: Int

    /// The most context a load allocates when it does not say (the model's trained length when smaller).
    public static let defaultMaximumContextLength = 4096
    /// Tokens evaluated at once during prompt processing unless said otherwise (sizes the scratch memory).
    public static let defaultBatchSize = 256

    /// The context a load gets when it does not say: the trained length (4096 when the file does not say), capped
    /// at ``defaultMaximumContextLength``.
    public static func defaultContextLength(trained: Int) -> Int {
        min(trained > 0 ? trained : defaultMaximumContextLength, defaultMaximumContextLength)
    }

    /// Creates load parameters.
    public init(contextLength: Int? = nil, threads: Int? = nil, batchSize: Int = GGUFLoadParameters.defaultBatchSize) {
        self.contextLength = contextLength
        self.threads = threads
        self.batchSize = batchSize
    }
}

/// A GGUF model opened for inference: the mapped weights, validated against the configuration.
/// Immutable and shareable between contexts.
///
/// ```swift
/// let model = try GGUFModel(path: "/models/qwen3-0.6b-q8_0.gguf")
/// let context = try GGUFContext(model: model, contextLength: 2048, threads: 4)
/// let logits = try context.evaluate(model.tokenizer.encode("Hello"))
/// ```
public final class GGUFModel: @unchecked Sendable {
    /// The mapped file (weights point into it).
    public let file: GGUFFile
    /// Architecture and sizes, for display and memory estimates.
    public let description: GGUFModelDescription
    /// The model's tokenizer.
    public let tokenizer: GGUFTokenizer
    let config: TransformerConfig
    let weights: TransformerWeights

    /// Opens a model file and checks every tensor the engine needs.
    /// - Parameter repackWeights: repack Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, IQ4_XS, IQ4_NL, Q4_0, Q5_0, Q4_1, Q5_1 and Q8_0
    ///   matrices at load into the layout the CPU's decode kernels multiply fastest, where it has them (x86 with AVX2,
    ///   AVX-512 included: 1.2–1.9× those products' rate from memory on AVX2 machines, 1.1–1.5× decode on a Zen 4 with
    ///   AVX-512; the same results). It costs an anonymous copy of those matrices (Q4_K and Q5_K 2.3–2.8% larger than
    ///   in the file, the others the same size; the file's pages of them are let go) and the time to write it. `false`
    ///   keeps every matrix in the mapped file (for measuring the difference).
    /// - Throws: ``GGUFError``: `.unsupported` for an architecture or tensor type the engine does not run
    ///   (the message names it), `.invalidFormat` for a missing tensor or a wrong shape, `.io` when the file cannot be
    ///   read or the memory for repacked matrices cannot be had.
    public convenience init(path: String, repackWeights: Bool = true) throws {
        try self.init(file: GGUFFile(path: path), repackWeights: repackWeights)
    }

    /// Uses an already opened file.
    /// - Throws: as ``init(path:repackWeights:)``.
    public convenience init(file: GGUFFile, repackWeights: Bool = true) throws {
        try self.init(file: file, repackWeights: repackWeights, repackPieceBytes: TransformerWeights.repackPieceBytes)
    }

    /// repackPieceBytes: the file's bytes of a matrix repacked at a time (tests make it small to cut matrices into
    /// many pieces).
    init(file: GGUFFile, repackWeights: Bool, repackPieceBytes: Int) throws {
        self.file = file
        config = try TransformerConfig(file: file)
        // Huge pages first, so that the read-ahead below, the repacking and the first forward pass fill the page cache
        // in 2 MiB folios.
        file.adviseHugePages()
        // The repacking and the first forward pass read every layer's weights: when the file is not in the page cache,
        // asking for all of it now lets the kernel read it in large sequential requests, instead of page faults one
        // read-ahead window at a time. The page cache fills, not this process's resident size (nothing is mapped until
        // touched).
        file.prefetchTensorData()
        weights = try TransformerWeights(file: file, config: config, repack: repackWeights, pieceBytes: repackPieceBytes)
        description = try GGUFModelDescription(file: file)
        tokenizer = try GGUFTokenizer(file: file)
        guard tokenizer.vocabularySize <= config.vocabularySize else {
            throw GGUFError(.invalidFormat, "\(file.path): the tokenizer has \(tokenizer.vocabularySize) tokens but token_embd.weight only \(config.vocabularySize) rows")
        }
        // The header was copied into the metadata and the tokenizer tables: drop its pages and the heap
        // left over from parsing, so the resident size after load is the tables, not them twice.
        file.releaseHeaderPages()
        ra_release_free_memory()
    }

    /// Number of logits per position (rows of the output matrix).
    public var vocabularySize: Int { config.vocabularySize }

    /// The context length the model was trained with (0 when the file does not say).
    public var trainedContextLength: Int { config.trainedContextLength }
}
