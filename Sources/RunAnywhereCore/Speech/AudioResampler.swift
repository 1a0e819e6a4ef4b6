import Foundation

/// Converts mono audio between sample rates with a windowed-sinc low-pass filter (Hann window), so
/// downsampling (44.1 kHz → 16 kHz) does not fold high frequencies back into the speech band.
public enum AudioResampler {
    /// Zero crossings of the sinc on each side of a tap (filter length ~ 2 × this × the rate ratio).
    static let zeroCrossings = 16

    /// `samples` at `from` Hz resampled to `to` Hz. Returns the input when the rates are equal.
    public static func resample(_ samples: [Float], from: Int, to: Int) -> [Float] {
        guard from != to, from > 0, to > 0, !samples.isEmpty else { return samples }
        let ratio = Double(to) / Double(from)
        let outCount = Int((Double(samples.count) * ratio).rounded(.down))
        guard outCount > 0 else { return [] }
        // Cut-off at the lower Nyquist frequency, relative to the input rate (slightly below, for the window's slope).
        let cutoff = min(1, ratio) * 0.95
        let halfWidth = Double(zeroCrossings) / cutoff   // in input samples
        var out = [Float](repeating: 0, count: outCount)
        samples.withUnsafeBufferPointer { x in
            for i in 0..<outCount {
                let t = Double(i) / ratio           // position in input samples
                let first = max(0, Int((t - halfWidth).rounded(.up)))
                let last = min(x.count - 1, Int((t + halfWidth).rounded(.down)))
                guard first <= last else { continue }
                var acc = 0.0
                var norm = 0.0
                for j in first...last {
                    let d = Double(j) - t
                    let arg = Double.pi * cutoff * d
                    let sinc = abs(arg) < 1e-9 ? 1.0 : sin(arg) / arg
                    let window = 0.5 + 0.5 * cos(Double.pi * d / halfWidth)
                    let w = sinc * window
                    acc += w * Double(x[j])
                    norm += w
                }
                out[i] = norm != 0 ? Float(acc / norm) : 0
            }
        }
        return out
    }
}

enum AudioDecoding {
    /// The audio as mono samples at `sampleRate`, from a WAV file or from samples.
    static func monoSamples(_ audio: AudioInput, sampleRate: Int) throws -> [Float] {
        switch audio {
        case .file(let url):
            let decoded = try WAVReader.read(url)
            return AudioResampler.resample(decoded.samples, from: decoded.sampleRate, to: sampleRate)
        case .samples(let samples, let rate):
            guard WAVReader.sampleRates.contains(rate) else {
                throw RunAnywhereError(.invalidConfiguration, "AudioInput sample rate \(rate) Hz is outside \(WAVReader.sampleRates.lowerBound)...\(WAVReader.sampleRates.upperBound).")
            }
            guard samples.allSatisfy(\.isFinite) else {
                throw RunAnywhereError(.invalidConfiguration, "AudioInput samples contain NaN or infinity.")
            }
            return AudioResampler.resample(samples, from: rate, to: sampleRate)
        }
    }
}
