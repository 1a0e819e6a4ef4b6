import CKernels

/// One kernel path of the C kernels (scalar, AVX2, AVX-512, AVX-512 VNNI, NEON, NEON with SDOT) and the feature
/// mask that selects it, for running a test on each path this CPU offers.
///
/// ```swift
/// @Test(arguments: KernelPath.available)
/// func logits(path: KernelPath) throws {
///     try path.run { … }                   // everything in here, pool workers included, runs that path
/// }
/// ```
public struct KernelPath: Sendable, CustomStringConvertible, Hashable {
    /// The path (RA_PATH_*).
    public let path: Int32
    /// The feature mask that selects it on a CPU that has it.
    public let mask: Int32
    /// The features the path needs, as a person names them.
    public let needs: String

    /// "scalar", "avx2", "avx2-vnni", "avx512", "avx512-vnni", "neon" or "neon-dotprod".
    public var description: String { String(cString: ra_kernel_path_name(path)) }

    /// Every path of this machine's architecture, available or not (the unavailable ones are reported as skipped).
    public static var all: [KernelPath] {
        func path(_ p: Int32, _ needs: String) -> KernelPath { KernelPath(path: p, mask: ra_kernel_path_mask(p), needs: needs) }
        #if arch(x86_64)
        return [
            path(Int32(RA_PATH_SCALAR), "nothing"),
            path(Int32(RA_PATH_AVX2), "AVX2, FMA and F16C"),
            path(Int32(RA_PATH_AVX2_VNNI), "AVX2, FMA, F16C and AVX-VNNI"),
            path(Int32(RA_PATH_AVX512), "AVX-512 F, BW and VL"),
            path(Int32(RA_PATH_AVX512_VNNI), "AVX-512 F, BW, VL and VNNI"),
        ]
        #elseif arch(arm64)
        return [
            path(Int32(RA_PATH_SCALAR), "nothing"),
            path(Int32(RA_PATH_NEON), "NEON"),
            path(Int32(RA_PATH_NEON_DOTPROD), "NEON with the dot product extension"),
        ]
        #else
        return [path(Int32(RA_PATH_SCALAR), "nothing")]
        #endif
    }

    /// The paths this CPU can run.
    public static var available: [KernelPath] { all.filter(\.isAvailable) }

    /// The path of this name ("scalar", "avx2", …), if this architecture has it.
    public static func named(_ name: String) -> KernelPath? { all.first { $0.description == name } }

    /// Whether this CPU runs the path when asked for it.
    public var isAvailable: Bool { run { ra_kernel_path() } == path }

    /// Why the path cannot run here, or nil.
    public var unavailableReason: String? {
        isAvailable ? nil : "the \(description) kernel path needs \(needs), which this CPU does not offer"
    }

    /// Runs `body` with the C kernels held to this path on the calling thread and the pool workers it uses.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        let previous = ra_thread_features_mask()
        ra_set_thread_features_mask(mask)
        defer { ra_set_thread_features_mask(previous) }
        return try body()
    }
}

extension KernelPath {
    /// The names `--cpu` takes in the benchmark drivers: every path of this architecture, and "native" (the best
    /// this CPU has).
    public static var processNames: [String] { all.map(\.description) + ["native"] }

    /// Holds the C kernels of the whole process (every thread, from now on) to the path named `name`, as the
    /// benchmark drivers' `--cpu` does to show what a CPU without the wider instructions runs; "native" lifts the
    /// limit. Returns false, changing nothing, for a name not in `processNames`.
    @discardableResult
    public static func restrictProcess(to name: String) -> Bool {
        if name == "native" {
            ra_set_cpu_features_mask(-1)
            return true
        }
        guard let path = named(name) else { return false }
        ra_set_cpu_features_mask(path.mask)
        return true
    }
}
