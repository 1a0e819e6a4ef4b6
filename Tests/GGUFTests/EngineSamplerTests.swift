import Testing
@testable import RunAnywhereGGUF

@Suite("Engine sampler")
struct EngineSamplerTests {
    @Test("greedy picks the largest logit, ties to the lowest id")
    func greedyTies() {
        var s = Sampler(parameters: .greedy)
        var logits: [Float] = [0.5, 2, -1, 2, 1.9]
        #expect(s.sample(&logits, history: []) == 1)
        var zero = SamplingParameters(temperature: 0)
        zero.topK = 40
        var t = Sampler(parameters: zero)
        #expect(t.sample(&logits, history: []) == 1)
    }

    @Test("the same seed draws the same tokens")
    func seeded() {
        let p = SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0, seed: 7)
        let logits = (0..<50).map { Float($0 % 7) * 0.3 }
        func draw() -> [Int32] {
            var s = Sampler(parameters: p)
            return (0..<100).map { _ in var l = logits; return s.sample(&l, history: []) }
        }
        let a = draw()
        #expect(a == draw())
        #expect(Set(a).count > 5)
    }

    @Test("temperature sampling follows the softmax distribution")
    func distribution() {
        var s = Sampler(parameters: SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1))
        let logits: [Float] = [0, Float(1.0986123), -100]     // probabilities 1/4, 3/4, ~0
        var counts = [0, 0, 0]
        for _ in 0..<8000 { var l = logits; counts[Int(s.sample(&l, history: []))] += 1 }
        #expect(counts[2] == 0)
        #expect(abs(Double(counts[1]) / 8000 - 0.75) < 0.03)
        // Low temperature sharpens toward the best token.
        var cold = Sampler(parameters: SamplingParameters(temperature: 0.1, topK: 0, topP: 1, minP: 0, seed: 1))
        var best = 0
        for _ in 0..<1000 { var l = logits; if cold.sample(&l, history: []) == 1 { best += 1 } }
        #expect(best > 990)
    }

    @Test("top-k, top-p and min-p keep only the likely tokens")
    func truncation() {
        let logits: [Float] = [3, 2.9, 2.8, 0, -1, -2]
        func support(_ p: SamplingParameters) -> Set<Int32> {
            var s = Sampler(parameters: p)
            return Set((0..<2000).map { _ in var l = logits; return s.sample(&l, history: []) })
        }
        #expect(support(SamplingParameters(temperature: 5, topK: 2, topP: 1, minP: 0, seed: 3)) == [0, 1])
        #expect(support(SamplingParameters(temperature: 5, topK: 0, topP: 0.5, minP: 0, seed: 3)) == [0, 1])
        #expect(support(SamplingParameters(temperature: 5, topK: 0, topP: 1, minP: 0.5, seed: 3)) == [0, 1, 2])
        #expect(support(SamplingParameters(temperature: 5, topK: 0, topP: 1, minP: 0, seed: 3)).count == 6)
    }

    @Test("top-k selection equals sorting everything (ties by id), for small and large k", arguments: [1, 5, 40, 300, 2000])
    func topKSelection(k: Int) {
        var rng = Xoshiro256(seed: UInt64(k))
        // Coarse values: many ties.
        let logits = (0..<5000).map { _ in Float(Int(rng.next() % 200)) * 0.25 }
        let expected = logits.enumerated().map { (logit: $0.element, id: Int32($0.offset)) }
            .sorted { $0.logit != $1.logit ? $0.logit > $1.logit : $0.id < $1.id }.prefix(k)
        let got = Sampler.topK(logits, k: k, floor: -.infinity)
        #expect(got.map(\.id) == expected.map(\.id))
        let floored = Sampler.topK(logits, k: k, floor: 40)
        #expect(floored.allSatisfy { $0.logit >= 40 })
        #expect(floored.map(\.id) == expected.filter { $0.logit >= 40 }.map(\.id))
    }

    @Test("top-k selection skips NaNs and takes the tail past the last group of eight, rising and falling logits alike",
          arguments: [0, 3, 8, 13, 5003])
    func topKEightLaneScan(count: Int) {
        var rng = Xoshiro256(seed: UInt64(count) &+ 5)
        func reference(_ l: [Float], k: Int, floor: Float) -> [Int32] {
            l.enumerated().filter { !$0.element.isNaN && $0.element >= floor }
                .map { (logit: $0.element, id: Int32($0.offset)) }
                .sorted { $0.logit != $1.logit ? $0.logit > $1.logit : $0.id < $1.id }.prefix(k).map(\.id)
        }
        for round in 0..<12 {
            var l = (0..<count).map { _ -> Float in rng.next() % 17 == 0 ? .nan : Float(Int(rng.next() % 50)) * 0.5 }
            if round % 3 == 1 { l = (0..<count).map(Float.init) }           // rising: every logit enters the set
            if round % 3 == 2 { l = (0..<count).map { Float(count - $0) } } // falling: the first k fill it
            if round % 4 == 3, count > 0 { l[count - 1] = 1000 }            // the best one in the tail
            for k in [1, 7, 40] {
                #expect(Sampler.topK(l, k: k, floor: -.infinity).map(\.id) == reference(l, k: k, floor: -.infinity),
                        "length \(count), round \(round), k \(k)")
                #expect(Sampler.topK(l, k: k, floor: 10).map(\.id) == reference(l, k: k, floor: 10),
                        "length \(count), round \(round), k \(k), floor 10")
            }
        }
    }

    @Test("argmax is the first index of the largest logit for any length, with ties, infinities and NaNs",
          arguments: [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 49152, 49155])
    func argmaxMatchesOneScan(count: Int) {
        var rng = Xoshiro256(seed: UInt64(count) &+ 11)
        func scan(_ l: [Float]) -> Int32 {
            var best = 0
            for i in 1..<max(1, l.count) where l[i] > l[best] { best = i }
            return Int32(best)
        }
        for round in 0..<40 {
            // Coarse values (many ties), some -inf and NaN; in some rounds the first logit is NaN or everything is -inf.
            var l = (0..<count).map { _ -> Float in
                switch rng.next() % 20 {
                case 0: return -.infinity
                case 1: return .nan
                default: return Float(Int(rng.next() % 9)) - 4
                }
            }
            if round % 10 == 3, count > 0 { l[0] = .nan }
            if round % 10 == 7 { l = l.map { $0.isNaN ? $0 : -.infinity } }
            if round % 10 == 9, count > 1 { l[count - 1] = 100 }
            #expect(Greedy.token(l) == scan(l), "length \(count), round \(round)")
        }
    }

    @Test("the repetition penalty lowers recently seen tokens within its window")
    func repetitionPenalty() {
        var p = SamplingParameters.greedy
        p.repetitionPenalty = 2
        p.repetitionWindow = 2
        var s = Sampler(parameters: p)
        var logits: [Float] = [1.0, 1.5, -1]
        #expect(s.sample(&logits, history: [1]) == 0)          // 1.5 / 2 < 1.0
        #expect(logits[1] == 0.75)
        var l2: [Float] = [1.0, 1.5, -1]
        #expect(s.sample(&l2, history: [1, 0, 2]) == 1)       // token 1 is outside the window of 2
        #expect(l2[2] == -2)                                  // negative logits are multiplied
    }

    @Test("the generator is xoshiro256** seeded by splitmix64 (fixed sequence)")
    func generatorSequence() {
        var a = Xoshiro256(seed: 0), b = Xoshiro256(seed: 0), c = Xoshiro256(seed: 1)
        let x = (0..<4).map { _ in a.next() }
        #expect(x == (0..<4).map { _ in b.next() })
        #expect(x != (0..<4).map { _ in c.next() })
        for _ in 0..<1000 { let f = a.nextUnitFloat(); #expect(f >= 0 && f < 1) }
    }
}
