// swift-tools-version:6.0
import PackageDescription

// Kernels and the engine are compiled optimised even in debug builds: tests run real models.
let optimisedC: [CSetting] = [.unsafeFlags(["-O3", "-fno-math-errno"])]

let package = Package(
    name: "RunAnywhere",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "RunAnywhere", targets: ["RunAnywhere"]),
        .executable(name: "runanywhere", targets: ["runanywhere"]),
    ],
    targets: [
        // System C libraries (Debian packages installed by scripts/bootstrap.sh).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),

        // C kernels: quantized dot products and matmul with runtime CPU dispatch.
        .target(name: "CKernels", cSettings: optimisedC),

        // The native GGUF engine: reader, tokenizers, transformer. A leaf: knows nothing of the SDK.
        .target(
            name: "RunAnywhereGGUF",
            dependencies: ["CKernels"],
            swiftSettings: [.unsafeFlags(["-O"])]
        ),

        // The public SDK.
        .target(
            name: "RunAnywhere",
            dependencies: ["CCurl", "CCrypto", "CArchive", "RunAnywhereGGUF"],
            resources: [.copy("Catalog/catalog.json")]
        ),

        // Loopback HTTP server with fault injection, GGUF writer, temp dirs (tests and the demo).
        .target(
            name: "RunAnywhereTestSupport",
            dependencies: ["RunAnywhere", "RunAnywhereGGUF"],
            swiftSettings: [.unsafeFlags(["-O"])]   // fixture writers generate megabytes of weights
        ),

        // The command-line tool.
        .executableTarget(name: "runanywhere", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),

        // Engine throughput benchmark (bench/engine-first/run.sh); not a product.
        .executableTarget(
            name: "engine-bench",
            dependencies: ["RunAnywhereGGUF", "CKernels"],
            path: "bench/engine-first/Sources",
            swiftSettings: [.unsafeFlags(["-O"])]
        ),

        // The documentation's "complete picker" as a terminal program (built with everything else).
        .executableTarget(name: "model-picker", dependencies: ["RunAnywhere"], path: "Examples/ModelPicker"),
        // Download benchmark driver (bench/download/run.sh); not a product.
        .executableTarget(name: "download-bench", dependencies: ["RunAnywhere"], path: "bench/download/Sources"),

        .testTarget(name: "RunAnywhereTests", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),
        .testTarget(name: "DownloadTests", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),
        .testTarget(name: "GGUFTests", dependencies: ["RunAnywhereGGUF", "RunAnywhereTestSupport"]),
        .testTarget(name: "KernelTests", dependencies: ["CKernels"]),
        .testTarget(name: "CLITests", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),
    ]
)
