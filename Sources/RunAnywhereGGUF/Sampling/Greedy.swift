/// Greedy decoding's choice: what `temperature: 0` picks (llama.cpp's greedy text), and what the engine's benchmarks,
/// references and tests take as "the next token".
public enum Greedy {
    /// Index of the largest logit, ties to the lowest id.
    ///
    /// Two passes: the largest value (four independent eight-lane maxima, so no long chain of dependent comparisons),
    /// then the first index holding it, which is what one scan from the start finds (-0 and +0 are equal to both).
    /// NaNs are never chosen, except at index 0, where a scan seeded with the first logit stays (so does this).
    /// With the SSE2 that portable x86-64 Swift compiles to, this is ~3x faster than one pass keeping each lane's
    /// index: the token loop's greedy work a token over Gemma 3's 262k logits went from 56-62 to 19-22 µs
    /// (`ttft-bench MODEL --loop-overhead`).
    public static func token(_ logits: [Float]) -> Int32 {
        logits.withUnsafeBufferPointer { l in
            guard let base = l.baseAddress, l.count > 0, !l[0].isNaN else { return 0 }
            let m = largest(base, l.count)
            var i = 0
            let target = SIMD8<Float>(repeating: m)
            while i + 8 <= l.count {
                if any(UnsafeRawPointer(base + i).loadUnaligned(as: SIMD8<Float>.self) .== target) { break }
                i += 8
            }
            while i < l.count && !(l[i] == m) { i += 1 }
            return Int32(i < l.count ? i : 0)
        }
    }

    /// The largest non-NaN value of `count` floats whose first one is not NaN.
    private static func largest(_ base: UnsafePointer<Float>, _ count: Int) -> Float {
        var m0 = SIMD8<Float>(repeating: base[0]), m1 = m0, m2 = m0, m3 = m0
        var i = 0
        while i + 32 <= count {
            let p = UnsafeRawPointer(base + i)
            // a lane takes a value only when it is greater, so a NaN never enters a running maximum
            // (pointwiseMax would too, but is not inlined: a call per vector)
            let v0 = p.loadUnaligned(as: SIMD8<Float>.self), v1 = p.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
            let v2 = p.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self), v3 = p.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
            m0.replace(with: v0, where: v0 .> m0)
            m1.replace(with: v1, where: v1 .> m1)
            m2.replace(with: v2, where: v2 .> m2)
            m3.replace(with: v3, where: v3 .> m3)
            i += 32
        }
        m0.replace(with: m1, where: m1 .> m0)
        m2.replace(with: m3, where: m3 .> m2)
        m0.replace(with: m2, where: m2 .> m0)
        var m = base[0]
        for lane in 0..<8 where m0[lane] > m { m = m0[lane] }
        while i < count {
            if base[i] > m { m = base[i] }
            i += 1
        }
        return m
    }
}
