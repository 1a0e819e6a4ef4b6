/// Greedy decoding's choice: what `temperature: 0` picks (llama.cpp's greedy text), and what the engine's benchmarks,
/// references and tests take as "the next token".
public enum Greedy {
    /// Index of the largest logit, ties to the lowest id.
    ///
    /// Eight lanes each keep the first index of their own maximum (a single running maximum is one long chain of
    /// dependent comparisons: ~60 µs over a 49k vocabulary, a few percent of a small model's token); the answer is the
    /// lowest index holding the largest of them, which is what one scan from the start finds. NaNs are never chosen,
    /// except at index 0, where a scan seeded with the first logit stays (so does this).
    public static func token(_ logits: [Float]) -> Int32 {
        logits.withUnsafeBufferPointer { l in
            guard let base = l.baseAddress, l.count > 0, !l[0].isNaN else { return 0 }
            var bestValue = SIMD8<Float>(repeating: -.infinity)
            var bestIndex = SIMD8<Int32>(repeating: -1)
            var index = SIMD8<Int32>(0, 1, 2, 3, 4, 5, 6, 7)
            var i = 0
            while i + 8 <= l.count {
                let v = UnsafeRawPointer(base + i).loadUnaligned(as: SIMD8<Float>.self)
                let better = v .> bestValue
                bestValue.replace(with: v, where: better)
                bestIndex.replace(with: index, where: better)
                index &+= 8
                i += 8
            }
            var best = -1
            var value = -Float.infinity
            for lane in 0..<8 where bestIndex[lane] >= 0 {
                let (v, at) = (bestValue[lane], Int(bestIndex[lane]))
                if v > value || (v == value && at < best) { (value, best) = (v, at) }
            }
            while i < l.count {
                if l[i] > value { (value, best) = (l[i], i) }
                i += 1
            }
            return Int32(max(best, 0))
        }
    }
}
