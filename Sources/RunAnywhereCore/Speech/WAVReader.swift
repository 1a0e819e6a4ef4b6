import Foundation

/// Decoded audio: samples per channel interleaved away (mono), with their rate.
public struct DecodedAudio: Sendable, Hashable {
    /// Mono samples in -1...1 (channels averaged).
    public var samples: [Float]
    /// Samples per second.
    public var sampleRate: Int
    /// Channels the file had.
    public var channels: Int
    /// Length in seconds.
    public var durationSeconds: Double { sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0 }
}

/// A small, bounds-checked RIFF/WAVE reader: PCM 8/16/24/32-bit integer and 32/64-bit float,
/// plain or `WAVE_FORMAT_EXTENSIBLE`, any channel count (mixed down to mono), any sample rate.
///
/// Every read is checked against the bytes present; a malformed or unsupported file gives
/// `.invalidConfiguration` saying what is wrong, never a crash.
public enum WAVReader {
    /// Largest channel count accepted.
    static let maxChannels = 32
    /// Accepted sample rates, Hz.
    static let sampleRates = 1_000...768_000

    /// Reads a WAV file.
    /// - Throws: `.invalidConfiguration` when the file cannot be read, is not WAV, or is malformed or unsupported.
    public static func read(_ url: URL) throws -> DecodedAudio {
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw RunAnywhereError(.invalidConfiguration, "Cannot read the audio file \(url.path): \(error.localizedDescription)")
        }
        return try decode(data, name: url.lastPathComponent)
    }

    /// Decodes WAV bytes; `name` is used in error messages.
    public static func decode(_ data: Data, name: String = "audio") throws -> DecodedAudio {
        try data.withUnsafeBytes { raw in try decode(ByteReader(raw), name: name) }
    }

    private struct Format {
        var encoding: Encoding
        var channels: Int
        var sampleRate: Int
        var bytesPerSample: Int
        enum Encoding { case int, float }
    }

    private static func decode(_ r: ByteReader, name: String) throws -> DecodedAudio {
        func bad(_ why: String) -> RunAnywhereError {
            RunAnywhereError(.invalidConfiguration, "'\(name)' is not a usable WAV file: \(why).")
        }
        guard r.count >= 12, r.tag(at: 0) == "RIFF" || r.tag(at: 0) == "RF64", r.tag(at: 8) == "WAVE" else {
            throw bad("it does not start with a RIFF/WAVE header (only WAV audio is read)")
        }
        var offset = 12
        var format: Format?
        var payload: Range<Int>?
        while offset + 8 <= r.count {
            let id = r.tag(at: offset)
            let declared = Int(r.u32(at: offset + 4))
            let start = offset + 8
            // A data chunk whose size overruns the file (a recording cut short, or a streaming writer's
            // placeholder size) is read up to the end of the file.
            let size = min(declared, r.count - start)
            if id == "fmt " {
                format = try parseFormat(r, at: start, size: size, bad: bad)
            } else if id == "data" {
                payload = start..<(start + size)
                if format != nil { break }
            }
            guard declared <= r.count - start else { break }
            offset = start + declared + (declared & 1)
        }
        guard let format else { throw bad("it has no 'fmt ' chunk") }
        guard let payload else { throw bad("it has no 'data' chunk") }
        let frameBytes = format.bytesPerSample * format.channels
        let frames = payload.count / frameBytes
        var mono = [Float](repeating: 0, count: frames)
        let scale = 1 / Float(format.channels)
        for frame in 0..<frames {
            var sum: Float = 0
            let base = payload.lowerBound + frame * frameBytes
            for ch in 0..<format.channels {
                sum += r.sample(at: base + ch * format.bytesPerSample, bytes: format.bytesPerSample, float: format.encoding == .float)
            }
            let v = sum * scale
            mono[frame] = v.isFinite ? max(-1, min(1, v)) : 0
        }
        return DecodedAudio(samples: mono, sampleRate: format.sampleRate, channels: format.channels)
    }

    private static func parseFormat(_ r: ByteReader, at start: Int, size: Int, bad: (String) -> RunAnywhereError) throws -> Format {
        guard size >= 16 else { throw bad("its 'fmt ' chunk is \(size) bytes, fewer than 16") }
        var tag = Int(r.u16(at: start))
        let channels = Int(r.u16(at: start + 2))
        let rate = Int(r.u32(at: start + 4))
        let bits = Int(r.u16(at: start + 14))
        if tag == 0xFFFE {
            guard size >= 26 else { throw bad("its extensible 'fmt ' chunk is too short") }
            tag = Int(r.u16(at: start + 24))   // the sub-format GUID starts with the format tag
        }
        guard (1...maxChannels).contains(channels) else { throw bad("it declares \(channels) channels") }
        guard sampleRates.contains(rate) else { throw bad("its sample rate \(rate) Hz is outside \(sampleRates.lowerBound)...\(sampleRates.upperBound)") }
        switch (tag, bits) {
        case (1, 8), (1, 16), (1, 24), (1, 32):
            return Format(encoding: .int, channels: channels, sampleRate: rate, bytesPerSample: bits / 8)
        case (3, 32), (3, 64):
            return Format(encoding: .float, channels: channels, sampleRate: rate, bytesPerSample: bits / 8)
        case (1, _), (3, _):
            throw bad("\(bits)-bit samples are not supported (PCM 8/16/24/32-bit or float 32/64-bit)")
        default:
            throw bad("its encoding (format tag \(tag)) is compressed or unknown; only PCM and IEEE float WAV are read")
        }
    }
}

/// Little-endian reads that never go past the buffer (callers check ranges; reads outside give 0).
private struct ByteReader {
    let base: UnsafeRawBufferPointer
    init(_ base: UnsafeRawBufferPointer) { self.base = base }
    var count: Int { base.count }

    func byte(_ i: Int) -> UInt8 { i >= 0 && i < base.count ? base[i] : 0 }
    func u16(at i: Int) -> UInt16 { UInt16(byte(i)) | UInt16(byte(i + 1)) << 8 }
    func u32(at i: Int) -> UInt32 { UInt32(u16(at: i)) | UInt32(u16(at: i + 2)) << 16 }
    func u64(at i: Int) -> UInt64 { UInt64(u32(at: i)) | UInt64(u32(at: i + 4)) << 32 }
    func tag(at i: Int) -> String {
        String(decoding: (0..<4).map { byte(i + $0) }, as: UTF8.self)
    }

    /// One sample as -1...1.
    func sample(at i: Int, bytes: Int, float: Bool) -> Float {
        switch (bytes, float) {
        case (1, _): return (Float(byte(i)) - 128) / 128
        case (2, _): return Float(Int16(bitPattern: u16(at: i))) / 32768
        case (3, _):
            let v = Int32(bitPattern: (UInt32(byte(i)) << 8) | (UInt32(byte(i + 1)) << 16) | (UInt32(byte(i + 2)) << 24)) >> 8
            return Float(v) / 8_388_608
        case (4, false): return Float(Double(Int32(bitPattern: u32(at: i))) / 2_147_483_648)
        case (4, true): return Float(bitPattern: u32(at: i))
        case (8, true): return Float(Double(bitPattern: u64(at: i)))
        default: return 0
        }
    }
}
