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
        .library(name: "RunAnywhereSherpa", targets: ["RunAnywhereSherpa"]),
        .library(name: "RunAnywhereLlamaCpp", targets: ["RunAnywhereLlamaCpp"]),
        .library(name: "RunAnywhereServer", targets: ["RunAnywhereServer"]),
        .library(name: "RunAnywhereRemote", targets: ["RunAnywhereRemote"]),
        .executable(name: "runanywhere", targets: ["runanywhere"]),
    ],
    targets: [
        // System C libraries (Debian packages installed by scripts/bootstrap.sh).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),

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

        // The SDK's core: catalog, registry, downloads, residency, services and the backend protocol. Knows no engine.
        .target(
            name: "RunAnywhereCore",
            dependencies: ["CCurl", "CCrypto", "CArchive"],
            resources: [.copy("Catalog/catalog.json")]
        ),

        // The native engine as a backend of the core.
        .target(name: "RunAnywhereNative", dependencies: ["RunAnywhereCore", "RunAnywhereGGUF", "RunAnywhereImaging"]),

        // Speech recognition through sherpa-onnx's C API, opened at run time (scripts/install-speech.sh installs it).
        // CSherpaOnnx holds our own declarations of the few structs and entry points used; nothing is linked.
        .target(name: "CSherpaOnnx"),
        .target(name: "RunAnywhereSherpa", dependencies: ["RunAnywhereCore", "CSherpaOnnx"]),

        // Our own declarations of the llama.cpp C interface we call (opened at run time, never linked).
        .target(name: "CLlamaCpp"),
        // llama.cpp itself as a backend (BackendID.llamaCpp), loaded at run time when it is installed.
        .target(name: "RunAnywhereLlamaCpp", dependencies: ["RunAnywhereCore", "RunAnywhereGGUF", "CLlamaCpp"]),

        // A server speaking the OpenAI HTTP API as a backend (BackendID.remote), on the core's libcurl transfer.
        .target(name: "RunAnywhereRemote", dependencies: ["RunAnywhereCore"]),

        // What apps import: the core with the default backends registered (a remote one only when configured).
        .target(name: "RunAnywhere", dependencies: ["RunAnywhereCore", "RunAnywhereNative", "RunAnywhereLlamaCpp", "RunAnywhereSherpa", "RunAnywhereRemote"]),

        // The OpenAI-compatible HTTP server (`runanywhere serve`) on libmicrohttpd, generating through the SDK.
        .target(name: "RunAnywhereServer", dependencies: ["RunAnywhere", "CMicroHTTPD"]),

        // Loopback HTTP server with fault injection, GGUF writer, temp dirs (tests and the demo).
        .target(
            name: "RunAnywhereTestSupport",
            dependencies: ["RunAnywhere", "RunAnywhereGGUF", "CKernels"],
            swiftSettings: optimisedSwift   // fixture writers generate megabytes of weights
        ),

        // The command-line tool.
        .executableTarget(name: "runanywhere", dependencies: ["RunAnywhere", "RunAnywhereLlamaCpp", "RunAnywhereRemote", "RunAnywhereServer", "RunAnywhereTestSupport"]),

        // Engine throughput benchmark (bench/engine-first/run.sh); not a product.
        .executableTarget(
            name: "engine-bench",
            dependencies: ["RunAnywhereGGUF", "CKernels"],
            path: "bench/engine-first/Sources",
            swiftSettings: optimisedSwift
        ),

        // Real-weights check and tiny Gemma 3 reference driver (bench/real/run.sh); not a product.
        .executableTarget(
            name: "real-check",
            dependencies: ["RunAnywhereGGUF", "CKernels", "RunAnywhereTestSupport"],
            path: "bench/real/Sources",
            swiftSettings: optimisedSwift
        ),

        // Time-to-first-token driver through the public API (bench/engine/ttft.sh); not a product.
        .executableTarget(
            name: "ttft-bench",
            dependencies: ["RunAnywhere", "RunAnywhereGGUF", "RunAnywhereTestSupport"],
            path: "bench/ttft/Sources",
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
        .executableTarget(name: "download-bench", dependencies: ["RunAnywhere", "RunAnywhereCore"], path: "bench/download/Sources"),
        // Speech benchmark driver (bench/stt/run.sh); not a product.
        .executableTarget(name: "stt-bench", dependencies: ["RunAnywhere", "RunAnywhereSherpa", "RunAnywhereTestSupport"],
                          path: "bench/stt/Sources"),

        .testTarget(name: "RunAnywhereTests", dependencies: ["RunAnywhere", "RunAnywhereCore", "RunAnywhereLlamaCpp", "RunAnywhereTestSupport"]),
        .testTarget(name: "DownloadTests", dependencies: ["RunAnywhere", "RunAnywhereCore", "RunAnywhereTestSupport"]),
        .testTarget(name: "GGUFTests", dependencies: ["RunAnywhereGGUF", "RunAnywhereImaging", "RunAnywhereTestSupport", "CKernels"], exclude: ["Fixtures"]),
        .testTarget(name: "KernelTests", dependencies: ["CKernels"]),
        .testTarget(name: "ImagingTests", dependencies: ["RunAnywhereImaging", "RunAnywhereGGUF"]),
        .testTarget(name: "SpeechTests", dependencies: ["RunAnywhere", "RunAnywhereCore", "RunAnywhereSherpa", "CSherpaOnnx", "RunAnywhereTestSupport"]),
        .testTarget(name: "LlamaCppTests", dependencies: ["RunAnywhere", "RunAnywhereCore", "RunAnywhereLlamaCpp", "RunAnywhereGGUF", "RunAnywhereTestSupport"]),
        .testTarget(name: "RemoteTests", dependencies: ["RunAnywhere", "RunAnywhereCore", "RunAnywhereRemote", "RunAnywhereServer", "RunAnywhereTestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["RunAnywhere", "RunAnywhereCore", "RunAnywhereTestSupport"]),
        .testTarget(name: "ServerTests", dependencies: ["RunAnywhereServer", "RunAnywhere", "RunAnywhereCore", "RunAnywhereNative", "RunAnywhereTestSupport"]),
    ]
)
