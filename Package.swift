// swift-tools-version:6.0
import PackageDescription

// SwiftPM refuses `unsafeFlags` in a package an app adds as a versioned dependency, so the package itself
// sets none: apps build it with SwiftPM's defaults (release: clang -O2, swift -O; the benchmarks measure
// exactly that). This repository's scripts set RUNANYWHERE_DEV_OPTIMIZE=1 to also optimise the kernels and the
// engine in debug builds, where the tests run real models (at -O0 they would take many times longer).
let devOptimize = Context.environment["RUNANYWHERE_DEV_OPTIMIZE"] == "1"
let optimisedC: [CSetting] = devOptimize ? [.unsafeFlags(["-O3"])] : []
let optimisedSwift: [SwiftSetting] = devOptimize ? [.unsafeFlags(["-O"])] : []

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
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),

        // PNG/JPEG decoding in C (both libraries report errors by longjmp, which Swift cannot catch).
        .target(name: "CImageCodecs", dependencies: ["CPNG", "CJPEG"], cSettings: optimisedC),
        // Image decoding for the native backend (the core stays free of image libraries).
        .target(name: "RunAnywhereImaging", dependencies: ["CImageCodecs", "RunAnywhereGGUF"], swiftSettings: optimisedSwift),

        // C kernels: quantized dot products and matmul with runtime CPU dispatch.
        .target(name: "CKernels", cSettings: optimisedC),

        // The native GGUF engine: reader, tokenizers, transformer. A leaf: knows nothing of the SDK.
        .target(
            name: "RunAnywhereGGUF",
            dependencies: ["CKernels"],
            swiftSettings: optimisedSwift
        ),

        // The public SDK.
        .target(
            name: "RunAnywhere",
            dependencies: ["CCurl", "CCrypto", "CArchive", "RunAnywhereGGUF", "RunAnywhereImaging"],
            resources: [.copy("Catalog/catalog.json")]
        ),

        // Loopback HTTP server with fault injection, GGUF writer, temp dirs (tests and the demo).
        .target(
            name: "RunAnywhereTestSupport",
            dependencies: ["RunAnywhere", "RunAnywhereGGUF"],
            swiftSettings: optimisedSwift   // fixture writers generate megabytes of weights
        ),

        // The command-line tool.
        .executableTarget(name: "runanywhere", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),

        // Engine throughput benchmark (bench/engine-first/run.sh); not a product.
        .executableTarget(
            name: "engine-bench",
            dependencies: ["RunAnywhereGGUF", "CKernels"],
            path: "bench/engine-first/Sources",
            swiftSettings: optimisedSwift
        ),

        // Vision benchmark driver (bench/vlm/run.sh); not a product.
        .executableTarget(
            name: "vlm-bench",
            dependencies: ["RunAnywhereGGUF", "RunAnywhereImaging", "CKernels"],
            path: "bench/vlm/Sources",
            swiftSettings: optimisedSwift
        ),

        // The documentation's "complete picker" as a terminal program (built with everything else).
        .executableTarget(name: "model-picker", dependencies: ["RunAnywhere"], path: "Examples/ModelPicker"),
        // Download benchmark driver (bench/download/run.sh); not a product.
        .executableTarget(name: "download-bench", dependencies: ["RunAnywhere"], path: "bench/download/Sources"),

        .testTarget(name: "RunAnywhereTests", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),
        .testTarget(name: "DownloadTests", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),
        .testTarget(name: "GGUFTests", dependencies: ["RunAnywhereGGUF", "RunAnywhereImaging", "RunAnywhereTestSupport"]),
        .testTarget(name: "KernelTests", dependencies: ["CKernels"]),
        .testTarget(name: "ImagingTests", dependencies: ["RunAnywhereImaging", "RunAnywhereGGUF"]),
        .testTarget(name: "CLITests", dependencies: ["RunAnywhere", "RunAnywhereTestSupport"]),
    ]
)
