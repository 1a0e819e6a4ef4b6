import Foundation

/// An 8-bit RGB image: `width × height` pixels, three bytes each, row by row.
public struct RGBImage: Sendable, Hashable {
    /// Pixels per row.
    public let width: Int
    /// Rows.
    public let height: Int
    /// `width × height × 3` bytes: R, G, B of each pixel, rows top to bottom.
    public let pixels: [UInt8]

    /// Wraps pixels.
    /// - Throws: `GGUFError(.invalidFormat)` when the sizes are not positive or do not match the byte count.
    public init(width: Int, height: Int, pixels: [UInt8]) throws {
        guard width > 0, height > 0, width <= 1 << 16, height <= 1 << 16, pixels.count == width * height * 3 else {
            throw GGUFError(.invalidFormat, "an RGB image of \(width)×\(height) needs \(max(0, width) * max(0, height) * 3) bytes, got \(pixels.count)")
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The resampling filters of Pillow that llama.cpp's mtmd reproduces.
    enum Filter: Sendable {
        /// Lanczos, a = 3 (support 3).
        case lanczos
        /// Pillow's bicubic, a = −0.5 (support 2); PyTorch and ggml use −0.75, mtmd follows Pillow.
        case bicubic

        var support: Double { self == .lanczos ? 3 : 2 }

        func weight(_ x: Double) -> Double {
            switch self {
            case .lanczos:
                guard x >= -3, x < 3 else { return 0 }
                func sinc(_ v: Double) -> Double {
                    if v == 0 { return 1 }
                    let a = v * Double.pi
                    return sin(a) / a
                }
                return sinc(x) * sinc(x / 3)
            case .bicubic:
                let a = -0.5, t = abs(x)
                if t < 1 { return ((a + 2) * t - (a + 3)) * t * t + 1 }
                if t < 2 { return (((t - 5) * t + 8) * t - 4) * a }
                return 0
            }
        }
    }

    /// Pillow-compatible Lanczos resampling (a = 3), as llama.cpp's mtmd and Hugging Face's image processors do it:
    /// a horizontal pass then a vertical one, each with normalised weights in 22-bit fixed point, rounded and
    /// clamped to bytes after each pass; the filter widens by the scale when shrinking.
    public func resizedLanczos(width outW: Int, height outH: Int) -> RGBImage {
        resized(width: outW, height: outH, filter: .lanczos)
    }

    /// Pillow-compatible resampling with `filter` to exactly `outW × outH` (the aspect ratio may change).
    func resized(width outW: Int, height outH: Int, filter: Filter) -> RGBImage {
        guard outW != width || outH != height else { return self }
        var buf = pixels
        var w = width
        if outW != width {
            buf = Self.resample(buf, inCount: width, outCount: outW, lines: height, horizontal: true, filter: filter)
            w = outW
        }
        if outH != height {
            buf = Self.resample(buf, inCount: height, outCount: outH, lines: w, horizontal: false, filter: filter)
        }
        // Sizes come from positive inputs, so the byte count matches.
        return RGBImage(unchecked: outW, outH, buf)
    }

    /// Fits the image inside `outW × outH` keeping its aspect ratio (sides rounded up, as mtmd's `PAD_CEIL`),
    /// centred on black.
    func resizedPadded(width outW: Int, height outH: Int, filter: Filter) -> RGBImage {
        guard outW != width || outH != height else { return self }
        // mtmd computes the scale in single precision.
        let scale = min(Float(outW) / Float(width), Float(outH) / Float(height))
        let newW = min(Int((Float(width) * scale).rounded(.up)), outW)
        let newH = min(Int((Float(height) * scale).rounded(.up)), outH)
        let inner = resized(width: newW, height: newH, filter: filter)
        var out = [UInt8](repeating: 0, count: outW * outH * 3)
        let dx = (outW - newW) / 2, dy = (outH - newH) / 2
        for y in 0..<newH {
            let dst = ((y + dy) * outW + dx) * 3
            out.replaceSubrange(dst..<(dst + newW * 3), with: inner.pixels[(y * newW * 3)..<((y + 1) * newW * 3)])
        }
        return RGBImage(unchecked: outW, outH, out)
    }

    init(unchecked width: Int, _ height: Int, _ pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    private static let precisionBits = 22

    /// Resamples along one axis: the horizontal pass runs along each of `lines` rows, the vertical pass along each
    /// of `lines` columns; the image is stored row by row in both.
    private static func resample(_ src: [UInt8], inCount: Int, outCount: Int, lines: Int, horizontal: Bool, filter: Filter) -> [UInt8] {
        let (bounds, weights, ksize) = coefficients(inCount: inCount, outCount: outCount, filter: filter)
        let lineStride = horizontal ? inCount * 3 : 3
        let step = horizontal ? 3 : lines * 3
        var out = [UInt8](repeating: 0, count: outCount * lines * 3)
        src.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { o in
                weights.withUnsafeBufferPointer { k in
                    for line in 0..<lines {
                        for xx in 0..<outCount {
                            let lo = bounds[2 * xx], count = bounds[2 * xx + 1]
                            var acc = (Int32(1) << (precisionBits - 1), Int32(1) << (precisionBits - 1), Int32(1) << (precisionBits - 1))
                            // Input element i of this line, and where the output goes.
                            let inBase = line * lineStride
                            let outIndex = horizontal ? (line * outCount + xx) * 3 : (xx * lines + line) * 3
                            for j in 0..<count {
                                let idx = inBase + (lo + j) * step
                                let wgt = k[xx * ksize + j]
                                acc.0 &+= Int32(s[idx]) &* wgt
                                acc.1 &+= Int32(s[idx + 1]) &* wgt
                                acc.2 &+= Int32(s[idx + 2]) &* wgt
                            }
                            o[outIndex] = clip(acc.0)
                            o[outIndex + 1] = clip(acc.1)
                            o[outIndex + 2] = clip(acc.2)
                        }
                    }
                }
            }
        }
        return out
    }

    private static func clip(_ v: Int32) -> UInt8 {
        let x = v >> Int32(precisionBits)
        return x < 0 ? 0 : (x > 255 ? 255 : UInt8(x))
    }

    /// Per output element: first input index and count (bounds), and fixed-point weights (ksize per element).
    private static func coefficients(inCount: Int, outCount: Int, filter: Filter) -> ([Int], [Int32], Int) {
        let scale = Double(inCount) / Double(outCount)
        let filterScale = max(1, scale)
        let support = filter.support * filterScale
        let ksize = Int(support.rounded(.up)) * 2 + 1
        var bounds = [Int](repeating: 0, count: outCount * 2)
        var weights = [Int32](repeating: 0, count: outCount * ksize)
        var pre = [Double](repeating: 0, count: ksize)
        let fixed = Double(1 << precisionBits)
        for xx in 0..<outCount {
            let center = (Double(xx) + 0.5) * scale
            let ss = 1 / filterScale
            let xmin = max(0, Int(center - support + 0.5))
            let xmax = min(inCount, Int(center + support + 0.5)) - xmin
            var total = 0.0
            for x in 0..<ksize { pre[x] = 0 }
            for x in 0..<xmax {
                let w = filter.weight((Double(x + xmin) - center + 0.5) * ss)
                pre[x] = w
                total += w
            }
            for x in 0..<xmax where total != 0 { pre[x] /= total }
            for x in 0..<ksize {
                let v = pre[x] * fixed + (pre[x] < 0 ? -0.5 : 0.5)
                weights[xx * ksize + x] = Int32(v.rounded(.towardZero))
            }
            bounds[2 * xx] = xmin
            bounds[2 * xx + 1] = xmax
        }
        return (bounds, weights, ksize)
    }
}
