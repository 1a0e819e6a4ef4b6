/// The hyper-parameters of a SmolVLM-style vision projector file (llama.cpp's `clip` architecture with the
/// `idefics3` projector): a SigLIP ViT over square tiles, pixel shuffle and a linear projector.
struct ClipConfig: Sendable, Hashable {
    /// Side of a tile in pixels (`clip.vision.image_size`).
    let imageSize: Int
    /// Side of a patch in pixels.
    let patchSize: Int
    let embeddingLength: Int
    let feedForwardLength: Int
    let layerCount: Int
    let headCount: Int
    let layerNormEpsilon: Float
    /// Width of an image token: the text model's embedding length.
    let projectionLength: Int
    /// Pixel-shuffle factor: s × s patches become one image token.
    let scaleFactor: Int
    /// Longest side an image is resized to before it is cut into tiles (`clip.vision.preproc_image_size`); `nil`
    /// in files converted before llama.cpp wrote that key, which mtmd tiles the older way (see `tiles(of:)`).
    let longestEdge: Int?
    let mean: [Float]
    let std: [Float]

    /// Patches along a tile side.
    var patchesPerSide: Int { imageSize / patchSize }
    /// Image tokens one tile gives.
    var tokensPerTile: Int { (patchesPerSide / scaleFactor) * (patchesPerSide / scaleFactor) }
    var headDimension: Int { embeddingLength / headCount }

    /// Reads and checks the configuration.
    /// - Throws: `GGUFError(.unsupported)` for another projector or activation, `.invalidFormat` for missing or
    ///   inconsistent values.
    init(file: GGUFFile) throws {
        let path = file.path
        guard file.string("general.architecture") == "clip" else {
            throw GGUFError(.unsupported, "\(path) is not a vision projector (general.architecture is \(file.string("general.architecture") ?? "missing"), expected clip)")
        }
        let projector = file.string("clip.projector_type") ?? file.string("clip.vision.projector_type") ?? "missing"
        guard projector == "idefics3" else {
            throw GGUFError(.unsupported, "\(path): projector type \(projector) is not supported by the native engine (supported: idefics3, as SmolVLM uses)")
        }
        guard file.bool("clip.has_vision_encoder") != false else {
            throw GGUFError(.unsupported, "\(path) has no vision encoder")
        }
        guard file.bool("clip.use_gelu") == true, file.bool("clip.use_silu") != true else {
            throw GGUFError(.unsupported, "\(path): only the GELU feed-forward (clip.use_gelu) is supported")
        }
        func required(_ key: String, max: Int = 1 << 20) throws -> Int {
            guard let v = file.int("clip.vision.\(key)") else {
                throw GGUFError(.invalidFormat, "\(path): metadata clip.vision.\(key) is missing")
            }
            guard v > 0, v <= max else {
                throw GGUFError(.invalidFormat, "\(path): metadata clip.vision.\(key) = \(v) is out of range")
            }
            return v
        }
        imageSize = try required("image_size", max: 4096)
        patchSize = try required("patch_size", max: 64)
        embeddingLength = try required("embedding_length", max: 16384)
        feedForwardLength = try required("feed_forward_length", max: 65536)
        layerCount = try required("block_count", max: 256)
        headCount = try required("attention.head_count", max: 256)
        projectionLength = try required("projection_dim", max: 65536)
        scaleFactor = file.int("clip.vision.projector.scale_factor") ?? 1
        longestEdge = file.int("clip.vision.preproc_image_size")
        layerNormEpsilon = Float(file.double("clip.vision.attention.layer_norm_epsilon") ?? 1e-6)
        mean = file.floatArray("clip.vision.image_mean") ?? []
        std = file.floatArray("clip.vision.image_std") ?? []
        guard mean.count >= 3, std.count >= 3, std.prefix(3).allSatisfy({ $0 > 0 }) else {
            throw GGUFError(.invalidFormat, "\(path): clip.vision.image_mean / image_std need three values (std positive)")
        }
        guard imageSize % patchSize == 0, scaleFactor >= 1, (imageSize / patchSize) % scaleFactor == 0 else {
            throw GGUFError(.invalidFormat, "\(path): tile \(imageSize) px is not a whole number of \(patchSize) px patches in groups of \(scaleFactor)")
        }
        guard embeddingLength % headCount == 0 else {
            throw GGUFError(.invalidFormat, "\(path): embedding length \(embeddingLength) is not a multiple of \(headCount) heads")
        }
        if let longestEdge, longestEdge < imageSize || longestEdge > 16384 {
            throw GGUFError(.invalidFormat, "\(path): clip.vision.preproc_image_size (\(longestEdge)) must be at least the tile size \(imageSize) and at most 16384")
        }
    }
}
