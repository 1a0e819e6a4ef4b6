import CKernels
import Testing

@Suite("Engine thread pool")
struct EngineThreadPoolTests {
    @Test("ra_pool_run runs the task once on every thread, caller included", arguments: [1, 2, 4])
    func runReachesEveryThread(threads: Int32) throws {
        let pool = try #require(ra_pool_create(threads))
        defer { ra_pool_destroy(pool) }
        #expect(ra_pool_size(pool) == threads)
        let slots = UnsafeMutablePointer<Int32>.allocate(capacity: 8)
        defer { slots.deallocate() }
        for round in 1...200 {
            slots.initialize(repeating: 0, count: 8)
            ra_pool_run(pool, { ctx, ith, nth in
                let s = ctx!.assumingMemoryBound(to: Int32.self)
                s[Int(ith)] += 1
                s[7] = nth
            }, slots)
            let counts = (0..<Int(threads)).map { slots[$0] }
            #expect(counts == Array(repeating: 1, count: Int(threads)), "round \(round)")
            #expect(slots[7] == threads)
        }
    }

    @Test("ra_pool_for covers every item exactly once, whatever the chunk size", arguments: [1, 3, 64, 1000])
    func forCoversEveryItem(chunk: Int64) throws {
        let pool = try #require(ra_pool_create(3))
        defer { ra_pool_destroy(pool) }
        let n = 5000
        let hits = UnsafeMutablePointer<Int32>.allocate(capacity: n)
        defer { hits.deallocate() }
        for _ in 0..<50 {
            hits.initialize(repeating: 0, count: n)
            ra_pool_for(pool, Int64(n), chunk, { ctx, lo, hi, ith in
                let h = ctx!.assumingMemoryBound(to: Int32.self)
                precondition(ith >= 0 && ith < 3)
                for i in Int(lo)..<Int(hi) { h[i] += 1 }
            }, hits)
            #expect((0..<n).allSatisfy { hits[$0] == 1 })
        }
    }

    @Test("a pool of one thread and no pool at all run on the caller")
    func singleThread() throws {
        var seen: (Int32, Int32) = (-1, -1)
        withUnsafeMutablePointer(to: &seen) { p in
            ra_pool_run(nil, { ctx, ith, nth in
                ctx!.assumingMemoryBound(to: (Int32, Int32).self).pointee = (ith, nth)
            }, p)
        }
        #expect(seen == (0, 1))
        #expect(ra_pool_size(nil) == 1)
    }
}
