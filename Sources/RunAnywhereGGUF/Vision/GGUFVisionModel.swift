import CKernels

/// The image embeddings of one image: one block of `tokensPerTile` tokens per tile, the slices row by row and then
/// the global tile, each token `width` floats (the text model's embedding length).
public struct ImageEmbeddings: Sendable {
    /// Tiles per row of the slice grid.
    public let columns: Int
    /// Rows of the slice grid.
    public let rows: Int
    /// Image tokens per tile.
    public let tokensPerTile: Int
    /// Floats per token.
    public let width: Int
    /// `(rows × columns + 1) × tokensPerTile × width` floats.
    public let values: [Float]
    /// A hash of the pixels, so a prompt with the same image can reuse the KV cache.
    public let contentHash: UInt64
    /// Seconds the encoder took.
    public let encodeSeconds: Double

    /// Total image tokens.
    public var tokenCount: Int { (rows * columns + 1) * tokensPerTile }
}

/// A vision projector file (llama.cpp's `clip` architecture with the idefics3 projector, as SmolVLM's mmproj GGUF)
/// opened for inference: SigLIP encoder, pixel shuffle and projector on the engine's C kernels.
///
/// ```swift
/// let vision = try GGUFVisionModel(path: "/models/mmproj-SmolVLM-256M-Instruct-Q8_0.gguf")
/// let embeddings = try vision.encode(image, threads: 4)
/// ```
public final class GGUFVisionModel: @unchecked Sendable {
    /// The mapped file.
    public let file: GGUFFile
    let config: ClipConfig
    let weights: ClipWeights

    /// Opens a projector file and checks every tensor.
    /// - Throws: ``GGUFError``: `.unsupported` for another projector type or tensor type, `.invalidFormat` for a
    ///   missing tensor or a wrong shape, `.io` when the file cannot be read.
    public init(path: String) throws {
        file = try GGUFFile(path: path)
        config = try ClipConfig(file: file)
        weights = try ClipWeights(file: file, config: config)
        file.releaseHeaderPages()
    }

    /// Width of an image token; must equal the text model's embedding length.
    public var embeddingLength: Int { config.projectionLength }
    /// Image tokens per tile.
    public var tokensPerTile: Int { config.tokensPerTile }
    /// Side of a tile in pixels.
    public var tileSize: Int { config.imageSize }

    /// Image tokens an image of this size becomes (slices and the global tile).
    /// - Throws: as ``encode(_:threads:)`` for a degenerate size.
    public func tokenCount(width: Int, height: Int) throws -> Int {
        let g = try config.grid(width: width, height: height)
        return (g.columns * g.rows + 1) * config.tokensPerTile
    }

    /// Most image tokens one image can become (a square image: the full grid); `nil` for projector files without a
    /// longest edge, whose tile count grows with the image (the context length bounds it then).
    public var maxTokensPerImage: Int? {
        guard let longestEdge = config.longestEdge else { return nil }
        let side = (longestEdge + config.imageSize - 1) / config.imageSize
        return (side * side + 1) * config.tokensPerTile
    }

    /// Bytes of scratch the encoder allocates while it runs (one tile's buffers, exactly what it maps; given back when
    /// the image is encoded).
    public var encoderScratchBytes: Int { ClipEncoder.layout(config, weights).0.byteCount }

    /// Encodes an image with a thread pool of its own.
    /// - Throws: ``GGUFError`` when the image cannot be tiled or the buffers cannot be allocated.
    public func encode(_ image: RGBImage, threads: Int) throws -> ImageEmbeddings {
        guard let pool = ra_pool_create(Int32(clamping: min(max(1, threads), 512))) else {
            throw GGUFError(.io, "could not start \(threads) worker threads")
        }
        defer { ra_pool_destroy(pool) }
        return try encode(image, pool: pool)
    }

    /// Encodes an image on a given pool (e.g. a context's).
    func encode(_ image: RGBImage, pool: OpaquePointer?) throws -> ImageEmbeddings {
        let clock = ContinuousClock()
        let start = clock.now
        let tiled = try config.tiles(of: image)
        let encoder = try ClipEncoder(config: config, weights: weights)
        let perTile = config.tokensPerTile * config.projectionLength
        var values = [Float](repeating: 0, count: tiled.tiles.count * perTile)
        values.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            for (i, tile) in tiled.tiles.enumerated() {
                config.normalised(tile).withUnsafeBufferPointer { px in
                    if let p = px.baseAddress { encoder.encode(tile: p, pool: pool, into: base + i * perTile) }
                }
            }
        }
        return ImageEmbeddings(columns: tiled.columns, rows: tiled.rows, tokensPerTile: config.tokensPerTile,
                               width: config.projectionLength, values: values, contentHash: Self.hash(image),
                               encodeSeconds: GGUFContext.seconds(clock.now - start))
    }

    /// FNV-1a over the size and the pixels.
    static func hash(_ image: RGBImage) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ b: UInt64) { h = (h ^ b) &* 0x100_0000_01b3 }
        mix(UInt64(image.width))
        mix(UInt64(image.height))
        for b in image.pixels { mix(UInt64(b)) }
        return h
    }
}
