import CImageCodecs
import Foundation
import RunAnywhereGGUF

/// Why an image could not be decoded.
public struct ImageDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Hashable {
        /// Neither PNG nor JPEG (or a kind of PNG/JPEG this decoder does not read, such as CMYK JPEG).
        case unsupportedFormat
        /// Corrupt or truncated data.
        case malformed
        /// Larger than the pixel limit (checked before the pixels are allocated).
        case tooLarge
        /// The file could not be read or memory ran out.
        case io
    }

    /// The class of failure.
    public let kind: Kind
    /// What went wrong, for a person.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// Decodes PNG and JPEG images to 8-bit RGB with the system's libpng and libjpeg-turbo (on Apple platforms ImageIO
/// would take this place; it is not built here).
///
/// Untrusted input is safe: every failure of the libraries becomes an ``ImageDecodingError``, and the image size
/// is checked against `maxPixels` before any pixel buffer is allocated (a decompression bomb stops at its header).
public enum ImageDecoder {
    /// The default pixel limit: 40 megapixels (about 120 MB of RGB).
    public static let defaultMaxPixels = 40_000_000
    /// The largest file ``decode(contentsOf:maxPixels:)`` reads: 256 MiB.
    public static let maxFileBytes = 256 << 20

    /// Decodes PNG or JPEG bytes (the format is recognised from its signature).
    /// - Throws: ``ImageDecodingError``.
    public static func decode(_ data: Data, maxPixels: Int = defaultMaxPixels) throws -> RGBImage {
        try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                throw ImageDecodingError(.unsupportedFormat, "the image is empty")
            }
            let limit = UInt64(max(0, maxPixels))
            var errorText = [CChar](repeating: 0, count: 256)
            var image = ra_image()
            let isPNG = bytes.count >= 8 && bytes[0] == 0x89 && bytes[1] == 0x50 && bytes[2] == 0x4E && bytes[3] == 0x47
            let isJPEG = bytes.count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF
            guard isPNG || isJPEG else {
                throw ImageDecodingError(.unsupportedFormat, "the image is neither PNG nor JPEG (only these two formats are decoded; pass raw RGB pixels for others)")
            }
            let code = errorText.withUnsafeMutableBufferPointer { e in
                isPNG ? ra_png_decode(base, bytes.count, limit, &image, e.baseAddress, e.count)
                      : ra_jpeg_decode(base, bytes.count, limit, &image, e.baseAddress, e.count)
            }
            let message = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard code == Int32(RA_IMAGE_OK), let pixels = image.pixels else {
                switch code {
                case Int32(RA_IMAGE_TOO_LARGE): throw ImageDecodingError(.tooLarge, message)
                case Int32(RA_IMAGE_UNSUPPORTED), Int32(RA_IMAGE_NOT_THIS_FORMAT): throw ImageDecodingError(.unsupportedFormat, message)
                case Int32(RA_IMAGE_NO_MEMORY): throw ImageDecodingError(.io, message)
                default: throw ImageDecodingError(.malformed, message.isEmpty ? "the image data is corrupt" : message)
                }
            }
            defer { ra_image_free(pixels) }
            let w = Int(image.width), h = Int(image.height)
            let copy = Array(UnsafeBufferPointer(start: pixels, count: w * h * 3))
            do {
                return try RGBImage(width: w, height: h, pixels: copy)
            } catch {
                throw ImageDecodingError(.malformed, "decoded image has an invalid size \(w)×\(h)")
            }
        }
    }

    /// Reads and decodes an image file.
    /// - Throws: ``ImageDecodingError`` (`.io` when the file cannot be read or is larger than ``maxFileBytes``).
    public static func decode(contentsOf url: URL, maxPixels: Int = defaultMaxPixels) throws -> RGBImage {
        let size: Int
        do {
            size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw ImageDecodingError(.io, "cannot read image \(url.path): \(error.localizedDescription)")
        }
        guard size <= maxFileBytes else {
            throw ImageDecodingError(.tooLarge, "image \(url.path) is \(size) bytes, more than the \(maxFileBytes)-byte limit")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ImageDecodingError(.io, "cannot read image \(url.path): \(error.localizedDescription)")
        }
        return try decode(data, maxPixels: maxPixels)
    }
}
