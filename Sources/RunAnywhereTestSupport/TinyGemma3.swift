import RunAnywhereGGUF

/// The tiny random-weight Gemma 3 models whose llama.cpp outputs are stored in
/// `Tests/GGUFTests/Fixtures/tiny-gemma3-reference.json` (made by `bench/real/tiny_gemma3_reference.py`,
/// which writes the models with `real-check write-tiny-gemma3` so both sides read the same bytes).
///
/// Eight layers, so layer 5 is the one global layer of llama.cpp's default pattern (every sixth); a sliding window
/// of 5 tokens, shorter than the reference prompts, so the local layers really drop positions; 4 query heads on
/// one KV head of 32 dimensions (q: 128 ≠ hidden 64, as Gemma 3 270M has 4 × 256 on 640).
public enum TinyGemma3 {
    /// Names of the reference models, in the order the reference file lists them.
    public static let names = ["tiny-gemma3-f32", "tiny-gemma3-q8_0"]

    /// The shape of one reference model (`name` from ``names``); nil for another name.
    public static func spec(_ name: String) -> TinyModelSpec? {
        var s = TinyModelSpec()
        s.architecture = .gemma3
        s.vocabSize = 512
        s.embeddingLength = 64
        s.blockCount = 8
        s.headCount = 4
        s.headCountKV = 1
        s.headDim = 32
        s.feedForwardLength = 128
        s.contextLength = 256
        s.ropeFreqBase = 1_000_000
        s.rmsNormEpsilon = 1e-6
        s.slidingWindow = 5
        s.tiedOutput = true
        s.weightStd = 0.25
        switch name {
        case "tiny-gemma3-f32":
            s.weightType = .f32
            s.seed = 31
        case "tiny-gemma3-q8_0":
            s.weightType = .q8_0
            s.seed = 32
            s.finalLogitSoftcap = 30
        default:
            return nil
        }
        return s
    }

    /// FNV-1a (64-bit) of a file's bytes, as the reference file records it.
    public static func fingerprint(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}
