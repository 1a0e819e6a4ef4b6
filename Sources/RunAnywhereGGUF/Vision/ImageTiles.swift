/// An image cut into tiles the way llama.cpp's mtmd does for idefics3 (SmolVLM), following Hugging Face's
/// Idefics3 image processor: Lanczos-resize so the longest side is `longestEdge` (the other side truncated, then
/// made even; small images are enlarged too), Lanczos-stretch both sides up to whole tiles, cut the result into
/// tiles row by row, and add a global tile: the stretched image resized to one tile.
///
/// Projector files without a longest edge (converted before llama.cpp wrote `clip.vision.preproc_image_size`, as
/// the SmolVLM files published in early 2025 are) take mtmd's older path: each side rounded to the nearest whole
/// number of tiles (at least one), the image fitted into that size with bicubic resampling and centred on black,
/// cut into tiles, and the global tile a bicubic resize of the original image.
struct TiledImage: Sendable {
    /// Tiles per row.
    let columns: Int
    /// Rows of tiles.
    let rows: Int
    /// The `rows × columns` slices row by row, then the global tile.
    let tiles: [RGBImage]
}

extension ClipConfig {
    /// The tile grid of an image of this size, and the size the image is resized to before it is cut.
    /// - Throws: `GGUFError(.unsupported)` when the aspect ratio is so extreme that a side would round to nothing.
    func grid(width: Int, height: Int) throws -> (resizedWidth: Int, resizedHeight: Int, columns: Int, rows: Int) {
        guard let longestEdge else {
            // mtmd rounds in single precision, halves away from zero.
            func side(_ n: Int) -> Int { max(imageSize, Int((Float(n) / Float(imageSize)).rounded()) * imageSize) }
            let w = side(width), h = side(height)
            return (w, h, w / imageSize, h / imageSize)
        }
        let aspect = Double(width) / Double(height)
        var rw: Int, rh: Int
        if width >= height {
            rw = longestEdge
            rh = Int(Double(longestEdge) / aspect)
            rh += rh % 2
        } else {
            rh = longestEdge
            rw = Int(Double(longestEdge) * aspect)
            rw += rw % 2
        }
        guard rw > 0, rh > 0 else {
            throw GGUFError(.unsupported, "an image of \(width)×\(height) pixels is too narrow for the vision encoder (aspect ratio beyond \(longestEdge):1)")
        }
        return (rw, rh, (rw + imageSize - 1) / imageSize, (rh + imageSize - 1) / imageSize)
    }

    /// Resizes and cuts an image into tiles.
    func tiles(of image: RGBImage) throws -> TiledImage {
        let g = try grid(width: image.width, height: image.height)
        let refined: RGBImage, global: RGBImage
        if longestEdge == nil {
            refined = image.resizedPadded(width: g.resizedWidth, height: g.resizedHeight, filter: .bicubic)
            global = image.resized(width: imageSize, height: imageSize, filter: .bicubic)
        } else {
            let resized = image.resizedLanczos(width: g.resizedWidth, height: g.resizedHeight)
            refined = resized.resizedLanczos(width: g.columns * imageSize, height: g.rows * imageSize)
            global = refined.resizedLanczos(width: imageSize, height: imageSize)
        }
        var tiles: [RGBImage] = []
        tiles.reserveCapacity(g.rows * g.columns + 1)
        let rowBytes = imageSize * 3
        for ty in 0..<g.rows {
            for tx in 0..<g.columns {
                var px = [UInt8](repeating: 0, count: imageSize * rowBytes)
                for y in 0..<imageSize {
                    let src = ((ty * imageSize + y) * refined.width + tx * imageSize) * 3
                    px.replaceSubrange(y * rowBytes..<(y + 1) * rowBytes, with: refined.pixels[src..<(src + rowBytes)])
                }
                tiles.append(RGBImage(unchecked: imageSize, imageSize, px))
            }
        }
        tiles.append(global)
        return TiledImage(columns: g.columns, rows: g.rows, tiles: tiles)
    }

    /// A tile as the encoder takes it: planar channels of (value / 255 − mean) / std.
    func normalised(_ tile: RGBImage) -> [Float] {
        let n = tile.width * tile.height
        var out = [Float](repeating: 0, count: 3 * n)
        tile.pixels.withUnsafeBufferPointer { px in
            for ch in 0..<3 {
                let m = mean[ch], s = std[ch]
                for i in 0..<n { out[ch * n + i] = (Float(px[i * 3 + ch]) / 255 - m) / s }
            }
        }
        return out
    }
}
