import CKernels
import Testing
import RunAnywhereTestSupport

/// The engine-level correctness tests (reference logits, batch against token by token, thread counts, greedy
/// text, weight-type twins) take `KernelPath.available` as an argument, so they run once per path this CPU offers.
/// This suite names every path of the architecture: a path the CPU lacks shows as a skipped test with the reason,
/// one it has is checked to be the path the kernels really run, on the calling thread and on pool workers.
@Suite("Kernel paths the engine tests run on")
struct KernelPathCoverage {
    static func check(_ name: String) throws {
        let path = try #require(KernelPath.named(name))
        #expect(KernelPath.available.contains(path), "the engine tests take \(name) as an argument")
        let pool = try #require(ra_pool_create(2))
        defer { ra_pool_destroy(pool) }
        var seen: [Int32] = [-1, -1]
        path.run {
            seen.withUnsafeMutableBufferPointer { buf in
                ra_pool_run(pool, { ctx, ith, _ in ctx!.assumingMemoryBound(to: Int32.self)[Int(ith)] = ra_kernel_path() }, buf.baseAddress)
            }
        }
        #expect(seen == [path.path, path.path], "\(name): the caller and the pool worker run that path")
    }

    static func reason(_ name: String) -> Comment? { KernelPath.named(name)?.unavailableReason.map { Comment(rawValue: $0) } }
    static func runs(_ name: String) -> Bool { KernelPath.named(name)?.isAvailable == true }

    @Test("the scalar path") func scalar() throws { try Self.check("scalar") }
    #if arch(x86_64)
    @Test("the AVX2 path", .enabled(if: runs("avx2"), reason("avx2"))) func avx2() throws { try Self.check("avx2") }
    @Test("the AVX-VNNI path", .enabled(if: runs("avx2-vnni"), reason("avx2-vnni"))) func avxVNNI() throws { try Self.check("avx2-vnni") }
    @Test("the AVX-512 path", .enabled(if: runs("avx512"), reason("avx512"))) func avx512() throws { try Self.check("avx512") }
    @Test("the AVX-512 VNNI path", .enabled(if: runs("avx512-vnni"), reason("avx512-vnni"))) func vnni() throws { try Self.check("avx512-vnni") }
    #elseif arch(arm64)
    @Test("the NEON path", .enabled(if: runs("neon"), reason("neon"))) func neon() throws { try Self.check("neon") }
    @Test("the NEON dot-product path", .enabled(if: runs("neon-dotprod"), reason("neon-dotprod"))) func dotprod() throws { try Self.check("neon-dotprod") }
    #endif
}
