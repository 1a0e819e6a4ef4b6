/// How the next token is chosen from the logits.
///
/// `temperature <= 0` is greedy decoding (highest logit, ties to the lowest id). Otherwise the candidates
/// are narrowed by top-k, top-p and min-p (on the untempered distribution, in that order), the logits are
/// divided by the temperature and a token is drawn with a seeded generator: the same seed, prompt and
/// parameters give the same tokens.
///
/// ```swift
/// var sampling = SamplingParameters(temperature: 0.7, topK: 40, topP: 0.9, seed: 42)
/// sampling.repetitionPenalty = 1.1
/// ```
public struct SamplingParameters: Sendable, Hashable, Codable {
    /// Softmax temperature; 0 or less means greedy.
    public var temperature: Float
    /// Keep only the k most likely tokens; 0 or less disables.
    public var topK: Int
    /// Keep the smallest set of most likely tokens whose probabilities sum to at least p; 1 disables.
    public var topP: Float
    /// Drop tokens less likely than minP times the most likely one; 0 disables.
    public var minP: Float
    /// Divides positive (multiplies negative) logits of tokens seen in the last `repetitionWindow` tokens; 1 disables.
    public var repetitionPenalty: Float
    /// How many of the most recent tokens (prompt included) the repetition penalty looks at.
    public var repetitionWindow: Int
    /// Seed of the random generator; nil picks a random seed.
    public var seed: UInt64?

    /// Creates sampling parameters (defaults: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, no penalty).
    public init(temperature: Float = 0.8, topK: Int = 40, topP: Float = 0.95, minP: Float = 0.05,
                repetitionPenalty: Float = 1.0, repetitionWindow: Int = 64, seed: UInt64? = nil) {
        self.temperature = temperature
        self.topK = topK
        self.topP = topP
        self.minP = minP
        self.repetitionPenalty = repetitionPenalty
        self.repetitionWindow = repetitionWindow
        self.seed = seed
    }

    /// Greedy decoding: always the most likely token.
    public static let greedy = SamplingParameters(temperature: 0, topK: 1, topP: 1, minP: 0)
}

/// xoshiro256** seeded through splitmix64: small, fast and identical on every platform.
struct Xoshiro256: RandomNumberGenerator, Sendable {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    init(seed: UInt64) {
        var x = seed
        func splitmix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s = (splitmix(), splitmix(), splitmix(), splitmix())
    }

    mutating func next() -> UInt64 {
        let result = rotl(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = rotl(s.3, 45)
        return result
    }

    /// A uniform Float in [0, 1).
    mutating func nextUnitFloat() -> Float { Float(next() >> 40) * 0x1p-24 }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}

/// Picks tokens from logits according to `SamplingParameters`.
struct Sampler: Sendable {
    let parameters: SamplingParameters
    private var rng: Xoshiro256

    init(parameters: SamplingParameters) {
        self.parameters = parameters
        var system = SystemRandomNumberGenerator()
        rng = Xoshiro256(seed: parameters.seed ?? system.next())
    }

    /// Chooses the next token.
    /// - Parameters:
    ///   - logits: one logit per vocabulary entry (modified in place by the repetition penalty).
    ///   - history: the tokens so far (prompt and generated); the last `repetitionWindow` are penalised.
    mutating func sample(_ logits: inout [Float], history: [Int32]) -> Int32 {
        let p = parameters
        if p.repetitionPenalty != 1, p.repetitionPenalty > 0, p.repetitionWindow > 0 {
            var seen = Set<Int32>()
            for id in history.suffix(p.repetitionWindow) where id >= 0 && Int(id) < logits.count && seen.insert(id).inserted {
                let l = logits[Int(id)]
                logits[Int(id)] = l > 0 ? l / p.repetitionPenalty : l * p.repetitionPenalty
            }
        }
        if p.temperature <= 0 || p.topK == 1 { return Self.argmax(logits) }

        // Candidates, most likely first (ties: lower id first).
        var candidates = Self.topCandidates(logits, k: p.topK)
        guard let best = candidates.first else { return 0 }
        // Probabilities of the untempered distribution over the candidates.
        var probs = candidates.map { expf($0.logit - best.logit) }
        var sum = probs.reduce(0, +)
        if p.topP < 1, p.topP > 0 {
            var cumulative: Float = 0
            var keep = candidates.count
            for i in 0..<probs.count {
                cumulative += probs[i] / sum
                if cumulative >= p.topP { keep = i + 1; break }
            }
            candidates.removeLast(candidates.count - keep)
            probs.removeLast(probs.count - keep)
        }
        if p.minP > 0 {
            // probs[0] is the largest (= 1 before normalisation).
            let keep = probs.firstIndex { $0 < p.minP * probs[0] } ?? probs.count
            candidates.removeLast(candidates.count - max(1, keep))
            probs.removeLast(probs.count - max(1, keep))
        }
        // Temperature, then draw.
        probs = candidates.map { expf(($0.logit - best.logit) / p.temperature) }
        sum = probs.reduce(0, +)
        let r = rng.nextUnitFloat() * sum
        var acc: Float = 0
        for (i, prob) in probs.enumerated() {
            acc += prob
            if r < acc { return candidates[i].id }
        }
        return candidates[candidates.count - 1].id
    }

    /// Index of the largest logit, ties to the lowest id.
    static func argmax(_ logits: [Float]) -> Int32 {
        var best = 0
        for i in 1..<max(1, logits.count) where logits[i] > logits[best] { best = i }
        return Int32(best)
    }

    /// The k best (logit, id) pairs, descending by logit then ascending id; k <= 0: all within 30 of the best
    /// (anything further is less than e^-30 as likely and can never be drawn in Float).
    static func topCandidates(_ logits: [Float], k: Int) -> [(logit: Float, id: Int32)] {
        guard !logits.isEmpty else { return [] }
        let maxLogit = logits.max() ?? 0
        let floor = maxLogit - 30
        var list: [(logit: Float, id: Int32)] = []
        for (i, l) in logits.enumerated() where l >= floor { list.append((l, Int32(i))) }
        list.sort { $0.logit != $1.logit ? $0.logit > $1.logit : $0.id < $1.id }
        if k > 0, list.count > k { list.removeLast(list.count - k) }
        return list
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
