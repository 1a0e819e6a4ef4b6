import Foundation
import Testing
import CKernels
import RunAnywhereGGUF
import RunAnywhereTestSupport

/// Method of the resident-memory check
/// -----------------------------------
/// Swift Testing runs suites in parallel inside one process, so the process RSS during a test also
/// moves with whatever other tests allocate. The check therefore runs in a child process: the test
/// binary re-launches itself through ``ChildProcessProbe`` (`--filter GGUFMemoryProbe`) with
/// `RUNANYWHERE_GGUF_MEMORY_PROBE_MODEL` naming the model. In that child, with nothing else running,
/// ``GGUFMemoryProbe`` opens the model and parses its description (header pages and metadata become
/// part of the baseline), reads resident pages from `/proc/self/statm`, then
///   1. reads one byte of every page of the tensor data section of the mapping,
///   2. allocates and writes a KV cache whose size the probe computes itself from the shape of the
///      model (layers × KV heads × head dim (K + V) × context × 2 bytes for F16),
///   3. allocates and writes the estimate's scratch buffer,
/// reading `/proc/self/statm` after step 2 and after step 3. The parent asserts that the growth after
/// step 2 is within 10% of the estimate's weights + KV cache, and after step 3 within 10% of
/// `GGUFMemoryEstimate.totalBytes` (weights = the tensor bytes, context 2048, batch 32).
/// (Measured on the shared models: weights + KV within +0.06% to +0.9%, total within +0.07% to +0.6%.)
/// (The time limit catches a hung probe; it counts the wait for a thread too, so it is far above the
/// run's length: see GGUFReaderFuzzTests.)
@Suite("GGUF memory estimate", .timeLimit(.minutes(15)))
struct GGUFMemoryEstimateTests {
    static let contextLength = 2048
    static let batchSize = 32

    @Test("the KV cache and scratch follow the model's shape")
    func arithmetic() throws {
        var spec = TinyModelSpec()
        spec.architecture = .qwen3
        spec.embeddingLength = 64
        spec.headCount = 4
        spec.headCountKV = 2
        spec.headDim = 32          // 4 × 32 = 128 ≠ 64, as in Qwen3
        spec.feedForwardLength = 96
        spec.blockCount = 3
        spec.vocabSize = 300
        let (file, dir) = try roundTrip(GGUFWriter.tinyModel(spec))
        defer { dir.remove() }
        let d = try GGUFModelDescription(file: file)
        let e = GGUFMemoryEstimate(description: d, weightsBytes: d.tensorBytes, contextLength: 1000, batchSize: 8)
        #expect(e.weightsBytes == d.tensorBytes)
        #expect(e.kvCacheBytes == 3 * 2 * (32 + 32) * 1000 * 2)
        // Per token: hidden/residual/normed 3×64, q and attention output 2×128, k and v 2×(2×32),
        // gate and up 2×96, quantized activations ≤ the widest row (128), RoPE angles 2×32; per thread (8 assumed) the
        // attention rows max(12, 4) × (1000 + 2×32) + 64; decode's split: per head and chunk of 256 positions
        // (4 of 1000) 32 + 4, + 64; one row of logits (300).
        let perToken = 3 * 64 + 2 * 128 + 2 * 64 + 2 * 96 + 128 + 2 * 32
        let attention = 8 * (12 * (1000 + 64) + 64) + 4 * 4 * (32 + 4) + 64
        #expect(e.scratchBytes == (perToken * 8 + attention + 300) * 4)
        #expect(e.totalBytes == e.weightsBytes + e.kvCacheBytes + e.scratchBytes)
        let f32 = GGUFMemoryEstimate(description: d, weightsBytes: 0, contextLength: 1000, batchSize: 8, kvBytesPerElement: 4)
        #expect(f32.kvCacheBytes == 2 * e.kvCacheBytes)
        let longer = GGUFMemoryEstimate(description: d, weightsBytes: 0, contextLength: 2000, batchSize: 8)
        #expect(longer.kvCacheBytes == 2 * e.kvCacheBytes)
        // Absurd inputs saturate instead of trapping.
        let huge = GGUFMemoryEstimate(description: d, weightsBytes: Int.max, contextLength: Int.max, batchSize: Int.max)
        #expect(huge.totalBytes == Int.max)
    }

    @Test("resident memory after touching the weights and allocating the KV cache is within 10% of the estimate",
          .enabled(if: TestData.isAvailable, TestData.skipReason),
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/statm"), "needs Linux /proc"),
          arguments: SharedModel.all)
    func residentMemory(model: SharedModel) throws {
        let path = TestData.model(model.file)
        let file = try GGUFFile(path: path)
        let d = try GGUFModelDescription(file: file)
        let estimate = GGUFMemoryEstimate(description: d, weightsBytes: d.tensorBytes,
                                          contextLength: Self.contextLength, batchSize: Self.batchSize)
        let report = try GGUFMemoryProbe.runChild(modelPath: path)
        let weightsAndKV = estimate.weightsBytes + estimate.kvCacheBytes
        let deltaWeightsAndKV = report.afterKVBytes - report.baselineBytes
        let errorWeightsAndKV = Double(deltaWeightsAndKV - weightsAndKV) / Double(weightsAndKV)
        #expect(abs(errorWeightsAndKV) <= 0.10,
                "\(model.file): RSS grew \(deltaWeightsAndKV) bytes after touching weights and KV, estimate \(weightsAndKV): \(Int(errorWeightsAndKV * 100))%")
        let delta = report.afterBytes - report.baselineBytes
        let error = Double(delta - estimate.totalBytes) / Double(estimate.totalBytes)
        #expect(report.kvBytes == estimate.kvCacheBytes, "the probe's own KV size agrees with the estimate's formula")
        #expect(abs(error) <= 0.10,
                "\(model.file): RSS grew \(delta) bytes, estimate \(estimate.totalBytes) (weights \(estimate.weightsBytes), KV \(estimate.kvCacheBytes), scratch \(estimate.scratchBytes)): \(Int(error * 100))%")
    }
}

/// The measuring half of the resident-memory check; runs only in the child process.
@Suite("GGUFMemoryProbe")
struct GGUFMemoryProbe {
    static let probeName = "gguf-memory"
    static let modelVariable = "RUNANYWHERE_GGUF_MEMORY_PROBE_MODEL"

    /// What the child measured.
    struct Report: Codable {
        var baselineBytes: Int
        var afterKVBytes: Int
        var afterBytes: Int
        var kvBytes: Int
        var scratchBytes: Int
    }

    static var isChild: Bool { ChildProcessProbe.isChild(probeName) }

    /// Runs the probe for `modelPath` in a child copy of this test binary and returns its report.
    static func runChild(modelPath: String) throws -> Report {
        let data = try #require(try ChildProcessProbe.run(suite: "GGUFMemoryProbe", name: probeName, environment: [modelVariable: modelPath]),
                                "the probe process failed")
        return try JSONDecoder().decode(Report.self, from: data)
    }

    static func residentBytes() throws -> Int {
        Int(try #require(ChildProcessProbe.residentBytes()))
    }

    @Test("measure resident memory for one model (child process only)",
          .enabled(if: GGUFMemoryProbe.isChild, "runs only as the child process of the memory estimate test"))
    func probe() throws {
        let env = ProcessInfo.processInfo.environment
        let path = try #require(env[Self.modelVariable])
        let file = try GGUFFile(path: path)
        let d = try GGUFModelDescription(file: file)
        let ctx = GGUFMemoryEstimateTests.contextLength
        // The KV cache size from the model's shape, independently of GGUFMemoryEstimate.
        let headDim = file.int("\(d.architecture).attention.key_length") ?? (d.embeddingLength / d.headCount)
        let kvHeads = try #require(file.int("\(d.architecture).attention.head_count_kv"))
        let layers = try #require(file.int("\(d.architecture).block_count"))
        let kvBytes = layers * kvHeads * headDim * 2 * ctx * 2
        let scratchBytes = GGUFMemoryEstimate.scratchBytes(description: d, contextLength: ctx, batchSize: GGUFMemoryEstimateTests.batchSize)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))

        _ = try Self.residentBytes()  // warm up: the first read allocates
        let baseline = try Self.residentBytes()
        var checksum: UInt8 = 0
        let bytes = file.fileBytes
        var offset = file.dataOffset
        while offset < file.fileSize {
            checksum &+= bytes[offset]
            offset += page
        }
        // Pages straight from the system, as the engine allocates its KV cache and scratch (ra_alloc_pages):
        // heap blocks could reuse pages the metadata parse already made resident and hide the growth.
        let kv = try #require(ra_alloc_pages(kvBytes))
        defer { ra_free_pages(kv, kvBytes) }
        for p in stride(from: 0, to: kvBytes, by: page) { kv.storeBytes(of: checksum | 1, toByteOffset: p, as: UInt8.self) }
        let afterKV = try Self.residentBytes()
        let scratch = try #require(ra_alloc_pages(scratchBytes))
        defer { ra_free_pages(scratch, scratchBytes) }
        for p in stride(from: 0, to: scratchBytes, by: page) { scratch.storeBytes(of: checksum | 1, toByteOffset: p, as: UInt8.self) }
        let after = try Self.residentBytes()

        let report = Report(baselineBytes: baseline, afterKVBytes: afterKV, afterBytes: after, kvBytes: kvBytes, scratchBytes: scratchBytes)
        try ChildProcessProbe.report(try JSONEncoder().encode(report))
    }
}

@Suite("GGUF memory estimate vs the engine")
struct GGUFEngineMemoryTests {
    @Test("the KV cache and scratch the engine allocates are within 10% of the estimate", arguments: [1, 2, 8])
    func engineAllocation(threads: Int) throws {
        for arch in [TinyModelSpec.Architecture.llama, .qwen3, .gemma3] {
            var spec = TinyModelSpec()
            spec.architecture = arch
            spec.embeddingLength = 128
            spec.headCount = 8
            spec.headCountKV = 2
            spec.headDim = 32
            spec.feedForwardLength = 256
            spec.vocabSize = 1000
            spec.contextLength = 1024
            let dir = try TemporaryDirectory(prefix: "gguf-engine-memory")
            defer { dir.remove() }
            let path = dir.path + "/m.gguf"
            try GGUFWriter.tinyModel(spec).write(to: path)
            let model = try GGUFModel(path: path)
            for (context, batch) in [(1024, 256), (512, 32), (64, 8)] {
                let ctx = try GGUFContext(model: model, contextLength: context, threads: threads, batchSize: batch)
                let e = GGUFMemoryEstimate(description: model.description, weightsBytes: 0, contextLength: context, batchSize: batch)
                let estimated = e.kvCacheBytes + GGUFMemoryEstimate.scratchBytes(description: model.description, contextLength: context,
                                                                                 batchSize: batch, threads: threads)
                let allocated = ctx.memoryBytes + model.description.vocabSize * 4   // + the logits row the caller receives
                let ratio = Double(allocated) / Double(estimated)
                #expect(ratio > 0.9 && ratio < 1.1, "\(arch) ctx \(context) batch \(batch) threads \(threads): engine \(allocated), estimate \(estimated)")
            }
        }
    }
}
