import CSherpaOnnx
import Foundation
import RunAnywhereCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// sherpa-onnx's C API, opened at run time: the SDK builds and runs language models without it.
///
/// Where it is looked for, in order: the path given to ``SherpaOnnxBackend/init(libraryPath:vadModelPath:environment:)``,
/// `$RUNANYWHERE_SHERPA_ONNX_LIB` (the library file or its folder), the project-local folder
/// `.runanywhere-deps/sherpa-onnx/sherpa_onnx/lib` (under the working directory or above the executable,
/// where `scripts/install-speech.sh` puts it), then the system's library search path. On Apple platforms an
/// app that links sherpa-onnx's xcframework has the symbols in its own image, which is tried first.
final class SherpaOnnxLibrary: @unchecked Sendable {   // immutable after init; the library is never closed
    let path: String
    let version: String
    let createRecognizer: ra_so_create_offline_recognizer_fn
    let destroyRecognizer: ra_so_destroy_offline_recognizer_fn
    let createStream: ra_so_create_offline_stream_fn
    let destroyStream: ra_so_destroy_offline_stream_fn
    let acceptWaveform: ra_so_accept_waveform_offline_fn
    let decode: ra_so_decode_offline_stream_fn
    let result: ra_so_get_offline_result_fn
    let destroyResult: ra_so_destroy_offline_result_fn
    let createVAD: ra_so_create_vad_fn
    let destroyVAD: ra_so_destroy_vad_fn
    let vadAccept: ra_so_vad_accept_fn
    let vadEmpty: ra_so_vad_empty_fn
    let vadFront: ra_so_vad_front_fn
    let vadPop: ra_so_vad_void_fn
    let vadFlush: ra_so_vad_void_fn
    let vadReset: ra_so_vad_void_fn
    let destroySegment: ra_so_destroy_segment_fn

    static let fileName: String = {
        #if canImport(Darwin)
        return "libsherpa-onnx-c-api.dylib"
        #else
        return "libsherpa-onnx-c-api.so"
        #endif
    }()
    static let localFolder = ".runanywhere-deps/sherpa-onnx/sherpa_onnx/lib"
    static let installHint = "Install it with `scripts/install-speech.sh` (pip installs sherpa-onnx-core==2.0.1 into .runanywhere-deps/), or point RUNANYWHERE_SHERPA_ONNX_LIB at libsherpa-onnx-c-api.so or its folder"

    private static let cache = Mutex<[String: SherpaOnnxLibrary]>([:])

    /// The library, opened once per process and path.
    static func open(explicitPath: String?, environment: [String: String]) throws -> SherpaOnnxLibrary {
        let candidates = candidatePaths(explicitPath: explicitPath, environment: environment)
        var tried: [String] = []
        for candidate in candidates {
            if let cached = cache.withLock({ $0[candidate] }) { return cached }
            switch openHandle(candidate) {
            case .success(let handle):
                do {
                    let library = try SherpaOnnxLibrary(handle: handle, path: candidate)
                    cache.withLock { $0[candidate] = library }
                    return library
                } catch {
                    tried.append("\(candidate): \(error)")
                }
            case .failure(let why):
                tried.append(why.description)
            }
            // An explicit setting that fails is reported, not silently replaced by another copy.
            if candidate == candidates.first, explicitPath != nil || environment["RUNANYWHERE_SHERPA_ONNX_LIB"] != nil { break }
        }
        throw RunAnywhereError(.backendUnavailable,
            "The speech backend needs sherpa-onnx's C API library (\(fileName)), which could not be opened. \(installHint). Tried: \(tried.joined(separator: "; ")).")
    }

    /// Where to look, in order; a folder setting becomes the library file inside it.
    static func candidatePaths(explicitPath: String?, environment: [String: String]) -> [String] {
        func file(_ p: String) -> String {
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: p, isDirectory: &isDir) && isDir.boolValue ? (p as NSString).appendingPathComponent(fileName) : p
        }
        if let explicitPath { return [file(explicitPath)] }
        if let env = environment["RUNANYWHERE_SHERPA_ONNX_LIB"], !env.isEmpty { return [file(env)] }
        var out: [String] = []
        #if canImport(Darwin)
        out.append("")   // the process image (an app linking the xcframework)
        #endif
        out += projectLocalFiles(localFolder + "/" + fileName)
        out.append(fileName)   // the system search path (LD_LIBRARY_PATH, ldconfig)
        return out
    }

    /// Existing copies of `relative` under the working directory or a folder above the executable
    /// (`.build/debug/runanywhere` finds the checkout's `.runanywhere-deps`).
    static func projectLocalFiles(_ relative: String) -> [String] {
        var roots = [FileManager.default.currentDirectoryPath]
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            roots.append(dir.path)
            dir = dir.deletingLastPathComponent()
        }
        var out: [String] = []
        for root in roots {
            let p = (root as NSString).appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: p), !out.contains(p) { out.append(p) }
        }
        return out
    }

    private static func openHandle(_ path: String) -> Swift.Result<UnsafeMutableRawPointer, OpenFailure> {
        let handle = path.isEmpty ? dlopen(nil, RTLD_NOW) : dlopen(path, RTLD_NOW | RTLD_LOCAL)
        guard let handle else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            return .failure(OpenFailure(description: path.isEmpty ? "process image: \(reason)" : reason))
        }
        return .success(handle)
    }

    struct OpenFailure: Error, CustomStringConvertible { let description: String }

    private init(handle: UnsafeMutableRawPointer, path: String) throws {
        func sym<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let p = dlsym(handle, name) else {
                throw OpenFailure(description: "symbol \(name) is missing (sherpa-onnx older than 2.0.1?)")
            }
            return unsafeBitCast(p, to: type)
        }
        self.path = path
        let versionFn = try sym("SherpaOnnxGetVersionStr", ra_so_version_fn.self)
        version = versionFn().map { String(cString: $0) } ?? "unknown"
        createRecognizer = try sym("SherpaOnnxCreateOfflineRecognizer", ra_so_create_offline_recognizer_fn.self)
        destroyRecognizer = try sym("SherpaOnnxDestroyOfflineRecognizer", ra_so_destroy_offline_recognizer_fn.self)
        createStream = try sym("SherpaOnnxCreateOfflineStream", ra_so_create_offline_stream_fn.self)
        destroyStream = try sym("SherpaOnnxDestroyOfflineStream", ra_so_destroy_offline_stream_fn.self)
        acceptWaveform = try sym("SherpaOnnxAcceptWaveformOffline", ra_so_accept_waveform_offline_fn.self)
        decode = try sym("SherpaOnnxDecodeOfflineStream", ra_so_decode_offline_stream_fn.self)
        result = try sym("SherpaOnnxGetOfflineStreamResult", ra_so_get_offline_result_fn.self)
        destroyResult = try sym("SherpaOnnxDestroyOfflineRecognizerResult", ra_so_destroy_offline_result_fn.self)
        createVAD = try sym("SherpaOnnxCreateVoiceActivityDetector", ra_so_create_vad_fn.self)
        destroyVAD = try sym("SherpaOnnxDestroyVoiceActivityDetector", ra_so_destroy_vad_fn.self)
        vadAccept = try sym("SherpaOnnxVoiceActivityDetectorAcceptWaveform", ra_so_vad_accept_fn.self)
        vadEmpty = try sym("SherpaOnnxVoiceActivityDetectorEmpty", ra_so_vad_empty_fn.self)
        vadFront = try sym("SherpaOnnxVoiceActivityDetectorFront", ra_so_vad_front_fn.self)
        vadPop = try sym("SherpaOnnxVoiceActivityDetectorPop", ra_so_vad_void_fn.self)
        vadFlush = try sym("SherpaOnnxVoiceActivityDetectorFlush", ra_so_vad_void_fn.self)
        vadReset = try sym("SherpaOnnxVoiceActivityDetectorReset", ra_so_vad_void_fn.self)
        destroySegment = try sym("SherpaOnnxDestroySpeechSegment", ra_so_destroy_segment_fn.self)
    }
}
