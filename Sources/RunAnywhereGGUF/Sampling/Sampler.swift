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
        if p.temperature <= 0 || p.topK == 1 || logits.count < 2 { return Greedy.token(logits) }
        // The largest logit, as `logits.max()` gives it (a NaN is never chosen, except a NaN first one, which fails the
        // test below like a max() seeded with it): with top-k, the first of its set (the k best, descending, ties to
        // the lowest id: one pass over the vocabulary gives both); otherwise the argmax's vector scan (max() was one
        // chain of dependent comparisons, with the argmax ~60% of the token loop's own work over Gemma 3's 262k logits).
        let best = p.topK > 0 && !logits[0].isNaN ? Self.topK(logits, k: p.topK, floor: -.infinity) : []
        let top = best.first?.id ?? Greedy.token(logits)
        let maxLogit = logits[Int(top)]
        guard maxLogit.isFinite else { return top }

        let truncates = p.topK > 0 || (p.topP > 0 && p.topP < 1) || p.minP > 0
        if !truncates {
            // The whole distribution: draw in index order, no sorting needed.
            var weights = logits.map { expf(($0 - maxLogit) / p.temperature) }
            return draw(&weights, ids: nil)
        }

        // min-p keeps tokens with probability >= minP * max, i.e. logit >= max + log(minP) (it only ever cuts the
        // tail of the sorted list, so applying it first changes nothing but the work).
        let floor = p.minP > 0 ? maxLogit + logf(min(p.minP, 1)) : -Float.infinity
        var candidates: [(logit: Float, id: Int32)]
        // The top-k set itself (`best`, above: top-p normalises over it); the candidates are its prefix at or above the
        // min-p floor, which is exactly the k best of the tokens at or above the floor.
        if p.topK > 0 {
            candidates = Array(best.prefix { $0.logit >= floor })
        } else {
            candidates = []
            for (i, l) in logits.enumerated() where l >= floor { candidates.append((l, Int32(i))) }
            candidates.sort { $0.logit != $1.logit ? $0.logit > $1.logit : $0.id < $1.id }
        }
        if candidates.isEmpty { return Greedy.token(logits) }

        if p.topP > 0 && p.topP < 1 {
            // Probabilities normalised over the top-k set, or over every token without top-k (as llama.cpp).
            let total: Float
            if p.topK > 0 {
                total = best.reduce(0) { $0 + expf($1.logit - maxLogit) }
            } else {
                total = logits.reduce(0) { $0 + expf($1 - maxLogit) }
            }
            var cumulative: Float = 0
            for (i, c) in candidates.enumerated() {
                cumulative += expf(c.logit - maxLogit) / total
                if cumulative >= p.topP {
                    candidates.removeLast(candidates.count - (i + 1))
                    break
                }
            }
        }
        var weights = candidates.map { expf(($0.logit - maxLogit) / p.temperature) }
        return draw(&weights, ids: candidates.map(\.id))
    }

    /// Draws index i with probability weights[i] / sum; returns ids[i] (or i without ids).
    private mutating func draw(_ weights: inout [Float], ids: [Int32]?) -> Int32 {
        let sum = weights.reduce(0, +)
        let r = rng.nextUnitFloat() * sum
        var acc: Float = 0
        var chosen = weights.count - 1
        for (i, w) in weights.enumerated() {
            acc += w
            if r < acc { chosen = i; break }
        }
        return ids.map { $0[chosen] } ?? Int32(chosen)
    }

    /// The k best (logit, id) pairs with logit >= floor, descending by logit then ascending id.
    static func topK(_ logits: [Float], k: Int, floor: Float) -> [(logit: Float, id: Int32)] {
        func before(_ a: (logit: Float, id: Int32), _ b: (logit: Float, id: Int32)) -> Bool {
            a.logit != b.logit ? a.logit > b.logit : a.id < b.id
        }
        if k > 256 {
            var all: [(logit: Float, id: Int32)] = []
            for (i, l) in logits.enumerated() where l >= floor { all.append((l, Int32(i))) }
            all.sort(by: before)
            if all.count > k { all.removeLast(all.count - k) }
            return all
        }
        // Keep a sorted list of the best k seen so far; most tokens are rejected by one comparison with the k-th
        // best logit (ids rise along the scan, so a later token with an equal logit never goes before it). Eight
        // logits at a time are first tested together against the floor and that k-th best: the bar only rises within
        // a group, so a group none of whose logits passes at its start holds no candidate (over Gemma 3's 262k
        // logits, a few hundred groups of ~33k reach the scalar test).
        var best: [(logit: Float, id: Int32)] = []
        best.reserveCapacity(k + 1)
        var worst = -Float.infinity
        logits.withUnsafeBufferPointer { l in
            func consider(_ i: Int) {
                let v = l[i]
                guard v >= floor else { return }
                if best.count == k && !(v > worst) { return }
                let item = (logit: v, id: Int32(i))
                var lo = 0, hi = best.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if before(best[mid], item) { lo = mid + 1 } else { hi = mid }
                }
                best.insert(item, at: lo)
                if best.count > k { best.removeLast() }
                if best.count == k, let last = best.last { worst = last.logit }
            }
            var i = 0
            if let base = l.baseAddress {
                let floors = SIMD8<Float>(repeating: floor)
                while i + 8 <= l.count {
                    if best.count == k && i + 32 <= l.count {
                        // Full: the k-th best is at or above the floor, so passing it is the whole test; 32 at a time.
                        let bar = SIMD8<Float>(repeating: worst), p = UnsafeRawPointer(base + i)
                        func above(_ offset: Int) -> SIMDMask<SIMD8<Int32>> {
                            p.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self) .> bar
                        }
                        if any(above(0) .| above(32) .| above(64) .| above(96)) {
                            for j in i..<(i + 32) { consider(j) }
                        }
                        i += 32
                        continue
                    }
                    let v = UnsafeRawPointer(base + i).loadUnaligned(as: SIMD8<Float>.self)
                    var pass = v .>= floors
                    if best.count == k { pass = pass .& (v .> SIMD8<Float>(repeating: worst)) }
                    if any(pass) {
                        for lane in 0..<8 { consider(i + lane) }
                    }
                    i += 8
                }
            }
            while i < l.count {
                consider(i)
                i += 1
            }
        }
        return best
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
