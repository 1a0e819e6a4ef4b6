import Foundation
import RunAnywhere
import RunAnywhereTestSupport
import Testing

/// Builds WAV bytes for the tests.
enum WAVFixture {
    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }

    /// A RIFF/WAVE file with a `fmt ` chunk of `tag`/`channels`/`rate`/`bits` and `payload` as its data.
    static func make(tag: UInt16 = 1, channels: UInt16 = 1, rate: UInt32 = 16_000, bits: UInt16 = 16, payload: [UInt8],
                     extraChunk: Bool = false) -> Data {
        let blockAlign = channels * bits / 8
        var fmt = le(tag) + le(channels) + le(rate) + le(rate * UInt32(blockAlign)) + le(blockAlign) + le(bits)
        if tag == 0xFFFE {   // extensible: cbSize, valid bits, channel mask, sub-format GUID (PCM)
            fmt = le(UInt16(0xFFFE)) + Array(fmt[2...]) + le(UInt16(22)) + le(bits) + le(UInt32(0)) + le(UInt16(1)) + [UInt8](repeating: 0, count: 14)
        }
        var body: [UInt8] = Array("WAVE".utf8)
        body += Array("fmt ".utf8) + le(UInt32(fmt.count)) + fmt
        if extraChunk { body += Array("LIST".utf8) + le(UInt32(3)) + [1, 2, 3, 0] }
        body += Array("data".utf8) + le(UInt32(payload.count)) + payload
        return Data(Array("RIFF".utf8) + le(UInt32(body.count)) + body)
    }

    static func pcm16(_ samples: [Int16]) -> [UInt8] { samples.flatMap { le($0) } }
    static func float32(_ samples: [Float]) -> [UInt8] { samples.flatMap { le($0.bitPattern) } }
}

@Suite("WAV reader")
struct WAVReaderTests {
    @Test("PCM16 mono reads exact values")
    func pcm16Mono() throws {
        let a = try WAVReader.decode(WAVFixture.make(payload: WAVFixture.pcm16([0, 16384, -32768, 32767])))
        #expect(a.sampleRate == 16_000 && a.channels == 1)
        #expect(a.samples.count == 4)
        #expect(a.samples[1] == 0.5 && a.samples[2] == -1)
        #expect(abs(a.samples[3] - 1) < 1e-4)
    }

    @Test("Stereo float32 is mixed to mono; odd-sized chunks before data are skipped")
    func floatStereo() throws {
        let a = try WAVReader.decode(WAVFixture.make(tag: 3, channels: 2, rate: 44_100, bits: 32,
                                                     payload: WAVFixture.float32([0.5, 0.25, -1, 1]), extraChunk: true))
        #expect(a.samples == [0.375, 0])
        #expect(a.sampleRate == 44_100 && a.channels == 2)
    }

    @Test("WAVE_FORMAT_EXTENSIBLE PCM24 reads")
    func extensible24() throws {
        let payload: [UInt8] = [0x00, 0x00, 0x40, 0x00, 0x00, 0xC0]   // +0.5, -0.5
        let a = try WAVReader.decode(WAVFixture.make(tag: 0xFFFE, bits: 24, payload: payload))
        #expect(a.samples == [0.5, -0.5])
    }

    @Test("A data chunk longer than the file is read to the end of the file")
    func truncatedData() throws {
        var d = WAVFixture.make(payload: WAVFixture.pcm16([1000, 2000, 3000]))
        d.removeLast(3)   // half of the last sample and one more byte gone
        let a = try WAVReader.decode(d)
        #expect(a.samples.count == 1)
    }

    @Test("Unsupported and malformed files give .invalidConfiguration naming the problem", arguments: [
        (Data("not a wav file at all".utf8), "RIFF/WAVE"),
        (WAVFixture.make(tag: 0x55, payload: [1, 2, 3, 4]), "format tag 85"),
        (WAVFixture.make(bits: 12, payload: [1, 2, 3, 4]), "12-bit"),
        (WAVFixture.make(channels: 0, payload: [1, 2]), "0 channels"),
        (WAVFixture.make(rate: 10, payload: [1, 2]), "sample rate 10"),
        (Data(Array("RIFF".utf8) + WAVFixture.le(UInt32(4)) + Array("WAVE".utf8)), "no 'fmt '"),
    ])
    func rejects(_ data: Data, _ phrase: String) {
        do {
            _ = try WAVReader.decode(data, name: "x.wav")
            Issue.record("accepted a bad file")
        } catch let e as RunAnywhereError {
            #expect(e.code == .invalidConfiguration)
            #expect(e.message.contains(phrase), "\(e.message)")
        } catch {
            Issue.record("untyped error \(error)")
        }
    }

    @Test("A missing file gives .invalidConfiguration with its path")
    func missingFile() {
        #expect(throws: RunAnywhereError.self) { try WAVReader.read(URL(fileURLWithPath: "/nonexistent/a.wav")) }
    }

    @Test("Fuzz: 10,000 mutated files never crash and fail only with typed errors")
    func fuzz() throws {
        let seeds = [
            WAVFixture.make(payload: WAVFixture.pcm16((0..<64).map { Int16($0 * 300) })),
            WAVFixture.make(tag: 3, channels: 2, rate: 48_000, bits: 32, payload: WAVFixture.float32((0..<64).map { Float($0) / 64 }), extraChunk: true),
            WAVFixture.make(tag: 0xFFFE, channels: 3, bits: 24, payload: [UInt8](repeating: 7, count: 90)),
        ]
        var rng = SeededGenerator(seed: 0x5EED)
        var accepted = 0, rejected = 0
        for i in 0..<10_000 {
            var bytes = [UInt8](seeds[i % seeds.count])
            for _ in 0..<(1 + Int(rng.next() % 8)) {
                let pos = Int(rng.next() % UInt64(max(1, bytes.count)))
                switch rng.next() % 5 {
                case 0: bytes[pos] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.removeSubrange(pos..<min(bytes.count, pos + Int(rng.next() % 16)))
                case 2: bytes.insert(contentsOf: (0..<Int(rng.next() % 8)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: pos)
                case 3: bytes = Array(bytes.prefix(pos))
                default: if pos + 4 <= bytes.count { bytes.replaceSubrange(pos..<(pos + 4), with: [0xFF, 0xFF, 0xFF, 0x7F]) }
                }
                if bytes.isEmpty { bytes = [0] }
            }
            do {
                let a = try WAVReader.decode(Data(bytes))
                #expect(a.samples.allSatisfy { $0.isFinite && abs($0) <= 1 })
                accepted += 1
            } catch let e as RunAnywhereError {
                #expect(e.code == .invalidConfiguration)
                rejected += 1
            }
        }
        #expect(accepted > 100 && rejected > 100, "accepted \(accepted), rejected \(rejected): the mutations should exercise both paths")
    }

    @Test("Resampling 48 kHz to 16 kHz keeps a 440 Hz tone and removes a 12 kHz one")
    func resample() {
        let n = 48_000
        let low = (0..<n).map { Float(sin(2 * Double.pi * 440 * Double($0) / 48_000)) * 0.5 }
        let high = (0..<n).map { Float(sin(2 * Double.pi * 12_000 * Double($0) / 48_000)) * 0.5 }
        let outLow = AudioResampler.resample(low, from: 48_000, to: 16_000)
        let outHigh = AudioResampler.resample(high, from: 48_000, to: 16_000)
        #expect(outLow.count == 16_000)
        func rms(_ x: ArraySlice<Float>) -> Float { (x.reduce(0) { $0 + $1 * $1 } / Float(x.count)).squareRoot() }
        #expect(abs(rms(outLow[1000..<15000]) - 0.3535) < 0.01)
        #expect(rms(outHigh[1000..<15000]) < 0.01)
    }
}
