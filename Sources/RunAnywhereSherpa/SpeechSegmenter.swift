import CSherpaOnnx
import Foundation
import RunAnywhereCore

/// Cuts long audio into stretches the model can take at once, at silences.
///
/// With a Silero VAD model, sherpa-onnx's detector finds the speech; neighbouring speech is grouped up to
/// ``maxGroupSeconds`` and each group is cut from the original audio with the silence around it shared
/// between neighbours (half each, at most ``padSeconds``), so no sample of speech is dropped or repeated.
/// Without one, the audio is cut at the quietest 30 ms within the last third of each window.
struct SpeechSegmenter {
    /// A stretch to transcribe, in samples of the input.
    typealias Span = Range<Int>

    let sampleRate: Int
    /// Longest stretch handed to the model, seconds.
    let maxGroupSeconds: Double
    /// Silence kept on each side of a stretch of speech, seconds.
    var padSeconds = 0.5

    /// Stretches of speech the VAD found, grouped and padded; empty when it found none.
    func spans(vad: SherpaVAD, samples: UnsafeBufferPointer<Float>) -> [Span] {
        group(vad.speech(samples), samples: samples)
    }

    /// Groups speech ranges into stretches of at most `maxGroupSeconds`, extended into the silences around them.
    func group(_ speech: [Span], samples: UnsafeBufferPointer<Float>) -> [Span] {
        let total = samples.count
        let maxLen = Int(maxGroupSeconds * Double(sampleRate))
        var groups: [Span] = []
        for s in speech where !s.isEmpty {
            // A speech run longer than the window is cut further by energy.
            for piece in s.count > maxLen ? energySpans(in: s, maxLen: maxLen, samples: samples) : [s] {
                if let last = groups.last, piece.upperBound - last.lowerBound <= maxLen {
                    groups[groups.count - 1] = last.lowerBound..<piece.upperBound
                } else {
                    groups.append(piece)
                }
            }
        }
        // Share each gap between its neighbours.
        let pad = Int(padSeconds * Double(sampleRate))
        var out: [Span] = []
        for (i, g) in groups.enumerated() {
            let previousEnd = i > 0 ? groups[i - 1].upperBound : 0
            let nextStart = i + 1 < groups.count ? groups[i + 1].lowerBound : total
            let lo = i > 0 ? max(g.lowerBound - pad, (previousEnd + g.lowerBound) / 2) : max(0, g.lowerBound - pad)
            let hi = i + 1 < groups.count ? min(g.upperBound + pad, (g.upperBound + nextStart) / 2) : min(total, g.upperBound + pad)
            out.append(lo..<max(lo, hi))
        }
        return out
    }

    /// `range` cut into pieces of at most `maxLen` samples, each cut at the quietest 30 ms of its last third.
    func energySpans(in range: Span, maxLen: Int, samples: UnsafeBufferPointer<Float>) -> [Span] {
        guard range.count > maxLen, range.upperBound <= samples.count else { return [range] }
        let frame = max(1, sampleRate * 30 / 1000)
        var out: [Span] = []
        var start = range.lowerBound
        while range.upperBound - start > maxLen {
            var best = start + maxLen
            var bestEnergy = Float.infinity
            var f = start + maxLen * 2 / 3
            while f + frame <= start + maxLen {
                var e: Float = 0
                for j in f..<(f + frame) { e += samples[j] * samples[j] }
                if e < bestEnergy { bestEnergy = e; best = f + frame / 2 }
                f += frame
            }
            out.append(start..<best)
            start = best
        }
        out.append(start..<range.upperBound)
        return out
    }
}

/// sherpa-onnx's voice activity detector running Silero VAD.
final class SherpaVAD: @unchecked Sendable {   // used serially, under the model's lock
    let library: SherpaOnnxLibrary
    let handle: UnsafeRawPointer
    let sampleRate: Int
    static let window = 512

    /// - Parameter maxSpeechSeconds: Speech longer than this is split by the detector itself.
    init(library: SherpaOnnxLibrary, model: URL, sampleRate: Int, maxSpeechSeconds: Double) throws {
        self.library = library
        self.sampleRate = sampleRate
        let c = CStrings()
        var config = ra_so_vad_config()
        config.silero = ra_so_vad_model(model: c(model.path), threshold: 0.5, min_silence_duration: 0.3,
                                        min_speech_duration: 0.25, window_size: Int32(Self.window),
                                        max_speech_duration: Float(maxSpeechSeconds))
        config.sample_rate = Int32(sampleRate)
        config.num_threads = 1
        config.provider = c("cpu")
        guard let created = withUnsafePointer(to: &config, { library.createVAD($0, 120) }) else {
            throw RunAnywhereError(.invalidModelFormat, "sherpa-onnx could not load the Silero VAD model \(model.path); its reason is on stderr.")
        }
        handle = created
        withExtendedLifetime(c) {}
    }

    deinit {
        library.destroyVAD(handle)
        returnFreedHeap()
    }

    /// The ranges of `samples` the detector marks as speech, in order.
    func speech(_ samples: UnsafeBufferPointer<Float>) -> [Range<Int>] {
        library.vadReset(handle)
        var out: [Range<Int>] = []
        func drain() {
            while library.vadEmpty(handle) == 0 {
                if let seg = library.vadFront(handle) {
                    let start = Int(seg.pointee.start)
                    let n = Int(seg.pointee.n)
                    if start >= 0, n > 0 { out.append(min(start, samples.count)..<min(start + n, samples.count)) }
                    library.destroySegment(seg)
                }
                library.vadPop(handle)
            }
        }
        guard let base = samples.baseAddress else { return [] }
        var i = 0
        while i < samples.count {
            let n = min(Self.window, samples.count - i)
            library.vadAccept(handle, base + i, Int32(n))
            drain()
            i += n
        }
        library.vadFlush(handle)
        drain()
        return out
    }
}
