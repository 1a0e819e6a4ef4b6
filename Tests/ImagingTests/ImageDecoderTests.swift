import Foundation
import Testing
import RunAnywhereGGUF
import RunAnywhereImaging

/// Small PNG and JPEG files made by bench/vlm/make_codec_seeds.sh (ImageMagick) from one generated picture,
/// with the picture itself as a binary PPM.
enum CodecSeeds {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../bench/vlm/tiny/codec").standardized.path

    static func data(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)) }

    static let pngs = ["rgb.png", "palette.png", "gray-alpha16-interlaced.png"]
    static let jpegs = ["baseline.jpg", "progressive.jpg", "gray.jpg"]

    /// The source picture (24 × 16), or another PPM of the set.
    static func source(_ name: String = "source.ppm") throws -> (width: Int, height: Int, pixels: [UInt8]) {
        let bytes = [UInt8](try data(name))
        // "P6\n24 16\n255\n" then pixels.
        let header = Array("P6\n24 16\n255\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        return (24, 16, Array(bytes[header.count...]))
    }
}

/// CRC-32 of PNG chunks, to write valid headers with hostile sizes.
func crc32(_ bytes: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        c ^= UInt32(b)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
    return ~c
}

func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

/// A PNG chunk with its length and CRC.
func pngChunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
    let typed = Array(type.utf8) + body
    return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
}

@Suite("Image decoding (libpng, libjpeg-turbo)")
struct ImageDecoderTests {
    @Test("every PNG variant decodes to the source pixels exactly", arguments: CodecSeeds.pngs)
    func pngExact(file: String) throws {
        let src = try CodecSeeds.source(file == "palette.png" ? "palette.ppm" : "source.ppm")
        let image = try ImageDecoder.decode(CodecSeeds.data(file))
        #expect(image.width == src.width && image.height == src.height)
        if file.hasPrefix("gray") {
            // Gray: R = G = B.
            for i in stride(from: 0, to: image.pixels.count, by: 3) {
                #expect(image.pixels[i] == image.pixels[i + 1] && image.pixels[i] == image.pixels[i + 2])
            }
        } else {
            #expect(image.pixels == src.pixels, "\(file) differs from the source")
        }
    }

    @Test("every JPEG variant decodes close to the source", arguments: CodecSeeds.jpegs)
    func jpegClose(file: String) throws {
        let src = try CodecSeeds.source()
        let image = try ImageDecoder.decode(CodecSeeds.data(file))
        #expect(image.width == src.width && image.height == src.height)
        if !file.hasPrefix("gray") {
            let mean = zip(image.pixels, src.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +) / src.pixels.count
            #expect(mean < 12, "\(file): mean abs difference \(mean) from the source (quality 95)")
        }
    }

    @Test("not an image, empty, truncated: typed errors")
    func malformed() throws {
        #expect(throws: ImageDecodingError.self) { try ImageDecoder.decode(Data()) }
        let gif = Data("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8)
        #expect { try ImageDecoder.decode(gif) } throws: { ($0 as? ImageDecodingError)?.kind == .unsupportedFormat }
        for file in CodecSeeds.pngs + CodecSeeds.jpegs {
            let full = try CodecSeeds.data(file)
            for cut in [full.count / 3, full.count / 2, full.count - 20] {
                #expect(throws: ImageDecodingError.self, "\(file) cut at \(cut)") { try ImageDecoder.decode(full.prefix(cut)) }
            }
        }
    }

    @Test("huge dimensions are refused from the header, before pixels are allocated")
    func hugeDimensions() throws {
        // PNG: a valid IHDR of 60000 × 60000 RGB and a tiny IDAT (a decompression bomb would inflate to 10 GB).
        var ihdr = bigEndian(60000) + bigEndian(60000)
        ihdr += [8, 2, 0, 0, 0]
        let idat: [UInt8] = [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + pngChunk("IHDR", ihdr) + pngChunk("IDAT", idat) + pngChunk("IEND", [])
        #expect { try ImageDecoder.decode(Data(png)) } throws: { ($0 as? ImageDecodingError)?.kind == .tooLarge }
        // Under a small limit, the real seed is refused too.
        #expect { try ImageDecoder.decode(CodecSeeds.data("rgb.png"), maxPixels: 100) } throws: {
            ($0 as? ImageDecodingError)?.kind == .tooLarge
        }
        // JPEG: the SOF marker's height and width set to 65000.
        var jpeg = [UInt8](try CodecSeeds.data("baseline.jpg"))
        let sof = try #require((0..<(jpeg.count - 9)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0xFD, 0xE8, 0xFD, 0xE8])
        #expect { try ImageDecoder.decode(Data(jpeg)) } throws: { ($0 as? ImageDecodingError)?.kind == .tooLarge }
    }

    @Test("12,000 mutated PNG and JPEG files never crash and give an image or a typed error")
    func fuzz() throws {
        var rng: UInt64 = 0x5EED_1234
        func next() -> Int {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
            return Int(truncatingIfNeeded: rng >> 1)
        }
        let seeds = try (CodecSeeds.pngs + CodecSeeds.jpegs).map { [UInt8](try CodecSeeds.data($0)) }
        var decoded = 0, refused = 0
        for round in 0..<12_000 {
            var bytes = seeds[round % seeds.count]
            switch next() % 5 {
            case 0:  // flip bits
                for _ in 0..<(1 + next() % 8) { let i = next() % bytes.count; bytes[i] ^= UInt8(1 << (next() % 8)) }
            case 1:  // overwrite bytes with random values
                for _ in 0..<(1 + next() % 4) { bytes[next() % bytes.count] = UInt8(truncatingIfNeeded: next()) }
            case 2:  // truncate
                bytes = Array(bytes.prefix(next() % bytes.count))
            case 3:  // repeat a random slice somewhere else
                let a = next() % bytes.count, n = min(1 + next() % 64, bytes.count - a)
                bytes.insert(contentsOf: bytes[a..<(a + n)], at: next() % bytes.count)
            default:  // extreme values in the header region (sizes, depth, component counts)
                for _ in 0..<(1 + next() % 3) { bytes[next() % min(bytes.count, 64)] = [0x00, 0xFF, 0x7F, 0x80][next() % 4] }
            }
            do {
                let image = try ImageDecoder.decode(Data(bytes), maxPixels: 1 << 20)
                #expect(image.pixels.count == image.width * image.height * 3)
                decoded += 1
            } catch is ImageDecodingError {
                refused += 1
            }
        }
        print("image-fuzz: 12000 mutated files, \(decoded) decoded, \(refused) refused with a typed error")
        #expect(decoded + refused == 12_000)
    }
}
