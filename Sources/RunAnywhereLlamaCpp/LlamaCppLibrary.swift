import CLlamaCpp
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// llama.cpp's shared libraries, opened at run time and checked against the version our declarations are for.
///
/// Never linked: the SDK builds, tests and runs without llama.cpp. Opened once per directory per process and
/// never closed (llama.cpp keeps global state that must outlive every model).
final class LlamaCppLibrary: @unchecked Sendable {
    /// The llama.cpp commit our declarations (`CLlamaCpp`) are written for: the one llama-cpp-python 0.3.36 vendors.
    static let pinnedCommit = "0c1e570"
    /// Where that commit comes from, for messages.
    static let pinnedSource = "llama-cpp-python 0.3.36"

    /// The directory the libraries were opened from.
    let directory: URL
    /// `ggml_commit()`: the llama.cpp commit the libraries were built from.
    let commit: String
    /// `llama_version()`.
    let version: String
    /// `llama_print_system_info()`: the CPU features the build uses.
    let systemInfo: String

    let modelDefaultParams: ra_llama_model_default_params_fn
    let contextDefaultParams: ra_llama_context_default_params_fn
    let modelLoad: ra_llama_model_load_fn
    let modelFree: ra_llama_model_free_fn
    let initFromModel: ra_llama_init_from_model_fn
    let free: ra_llama_free_fn
    let nCtx: ra_llama_n_ctx_fn
    let nThreads: ra_llama_n_threads_fn
    let modelSize: ra_llama_model_size_fn
    let modelDesc: ra_llama_model_desc_fn
    let modelChatTemplate: ra_llama_model_chat_template_fn
    let modelGetVocab: ra_llama_model_get_vocab_fn
    let vocabNTokens: ra_llama_vocab_n_tokens_fn
    let vocabIsEOG: ra_llama_vocab_is_eog_fn
    let vocabBOS: ra_llama_vocab_token_fn
    let vocabEOS: ra_llama_vocab_token_fn
    let tokenize: ra_llama_tokenize_fn
    let tokenToPiece: ra_llama_token_to_piece_fn
    let chatApplyTemplate: ra_llama_chat_apply_template_fn
    let decode: ra_llama_decode_fn
    let logitsIth: ra_llama_get_logits_ith_fn
    let getMemory: ra_llama_get_memory_fn
    let memoryClear: ra_llama_memory_clear_fn
    let memorySeqRm: ra_llama_memory_seq_rm_fn

    /// The libraries in dependency order, without the platform's prefix and suffix.
    static let libraryNames = ["ggml-base", "ggml-cpu", "ggml", "llama"]

    /// The file name of a library on this platform.
    static func fileName(_ name: String) -> String {
        #if canImport(Darwin)
        return "lib\(name).dylib"
        #else
        return "lib\(name).so"
        #endif
    }

    private init(directory: URL) throws(LlamaCppUnavailable) {
        self.directory = directory
        var handles: [UnsafeMutableRawPointer] = []
        for name in Self.libraryNames {
            let path = directory.appendingPathComponent(Self.fileName(name)).path
            guard let handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL) else {
                let why = dlerror().map { String(cString: $0) } ?? "unknown error"
                throw LlamaCppUnavailable("could not open \(path): \(why)")
            }
            handles.append(handle)
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(LlamaCppUnavailable) -> T {
            for handle in handles.reversed() {
                if let p = dlsym(handle, name) { return unsafeBitCast(p, to: type) }
            }
            throw LlamaCppUnavailable("\(directory.path) has no function \(name); it is not the llama.cpp these declarations are for (\(Self.pinnedCommit), \(Self.pinnedSource))")
        }
        let text = { (f: ra_llama_string_fn) in f().map { String(cString: $0) } ?? "" }
        commit = text(try symbol("ggml_commit", as: ra_llama_string_fn.self))
        version = text(try symbol("llama_version", as: ra_llama_string_fn.self))
        guard commit.hasPrefix(Self.pinnedCommit) || Self.pinnedCommit.hasPrefix(commit) && commit.count >= 7 else {
            throw LlamaCppUnavailable("the libraries in \(directory.path) were built from llama.cpp \(commit.isEmpty ? "of an unknown commit" : commit) (version \(version)), but this SDK's declarations are for \(Self.pinnedCommit) (\(Self.pinnedSource)); struct layouts differ between versions, so it will not call them. Rebuild with scripts/install-llamacpp.sh")
        }
        systemInfo = text(try symbol("llama_print_system_info", as: ra_llama_string_fn.self))
        modelDefaultParams = try symbol("llama_model_default_params", as: ra_llama_model_default_params_fn.self)
        contextDefaultParams = try symbol("llama_context_default_params", as: ra_llama_context_default_params_fn.self)
        modelLoad = try symbol("llama_model_load_from_file", as: ra_llama_model_load_fn.self)
        modelFree = try symbol("llama_model_free", as: ra_llama_model_free_fn.self)
        initFromModel = try symbol("llama_init_from_model", as: ra_llama_init_from_model_fn.self)
        free = try symbol("llama_free", as: ra_llama_free_fn.self)
        nCtx = try symbol("llama_n_ctx", as: ra_llama_n_ctx_fn.self)
        nThreads = try symbol("llama_n_threads", as: ra_llama_n_threads_fn.self)
        modelSize = try symbol("llama_model_size", as: ra_llama_model_size_fn.self)
        modelDesc = try symbol("llama_model_desc", as: ra_llama_model_desc_fn.self)
        modelChatTemplate = try symbol("llama_model_chat_template", as: ra_llama_model_chat_template_fn.self)
        modelGetVocab = try symbol("llama_model_get_vocab", as: ra_llama_model_get_vocab_fn.self)
        vocabNTokens = try symbol("llama_vocab_n_tokens", as: ra_llama_vocab_n_tokens_fn.self)
        vocabIsEOG = try symbol("llama_vocab_is_eog", as: ra_llama_vocab_is_eog_fn.self)
        vocabBOS = try symbol("llama_vocab_bos", as: ra_llama_vocab_token_fn.self)
        vocabEOS = try symbol("llama_vocab_eos", as: ra_llama_vocab_token_fn.self)
        tokenize = try symbol("llama_tokenize", as: ra_llama_tokenize_fn.self)
        tokenToPiece = try symbol("llama_token_to_piece", as: ra_llama_token_to_piece_fn.self)
        chatApplyTemplate = try symbol("llama_chat_apply_template", as: ra_llama_chat_apply_template_fn.self)
        decode = try symbol("llama_decode", as: ra_llama_decode_fn.self)
        logitsIth = try symbol("llama_get_logits_ith", as: ra_llama_get_logits_ith_fn.self)
        getMemory = try symbol("llama_get_memory", as: ra_llama_get_memory_fn.self)
        memoryClear = try symbol("llama_memory_clear", as: ra_llama_memory_clear_fn.self)
        memorySeqRm = try symbol("llama_memory_seq_rm", as: ra_llama_memory_seq_rm_fn.self)
        try checkDefaults()
        // Quiet: llama.cpp logs every load to stderr; the sink keeps the last error line for our messages.
        try symbol("llama_log_set", as: ra_llama_log_set_fn.self)(ra_llama_log_sink, nil)
        try symbol("llama_backend_init", as: ra_llama_void_fn.self)()
    }

    /// Reads the default parameter structs through our layouts and compares fields whose defaults are known:
    /// a library whose structs are laid out differently fails here rather than in a call.
    private func checkDefaults() throws(LlamaCppUnavailable) {
        let c = contextDefaultParams()
        let m = modelDefaultParams()
        var wrong: [String] = []
        if c.n_seq_max != 1 { wrong.append("n_seq_max \(c.n_seq_max)") }
        if c.n_ubatch != 512 { wrong.append("n_ubatch \(c.n_ubatch)") }
        if c.yarn_ext_factor != -1 { wrong.append("yarn_ext_factor \(c.yarn_ext_factor)") }
        if c.type_k != 1 || c.type_v != 1 { wrong.append("type_k/type_v \(c.type_k)/\(c.type_v)") }
        if c.samplers != nil || c.n_samplers != 0 || c.ctx_other != nil { wrong.append("samplers/ctx_other not empty") }
        if m.devices != nil || m.vocab_only || m.no_alloc { wrong.append("model params devices/vocab_only/no_alloc") }
        if !wrong.isEmpty {
            throw LlamaCppUnavailable("the libraries in \(directory.path) return default parameters that do not fit this SDK's declarations (\(wrong.joined(separator: ", "))); they are not llama.cpp \(Self.pinnedCommit). Rebuild with scripts/install-llamacpp.sh")
        }
    }

    /// The error lines llama.cpp logged since the last `ra_llama_clear_last_error()`, or nil.
    static func lastError() -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        let n = ra_llama_last_error(&buffer, buffer.count)
        guard n > 0 else { return nil }
        let line = text(buffer).trimmingCharacters(in: .whitespacesAndNewlines)
        return line.isEmpty ? nil : line
    }

    /// The text in a NUL-terminated C buffer.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Finding and opening

    private static let opened = Mutex<[String: Result<LlamaCppLibrary, LlamaCppUnavailable>]>([:])

    /// Opens the libraries in `directory` (once per process; the outcome, failure included, is kept).
    /// One llama.cpp per process: its libraries are opened with global symbols, so a second build from another
    /// directory is refused rather than mixed with the first.
    static func open(_ directory: URL) -> Result<LlamaCppLibrary, LlamaCppUnavailable> {
        let key = directory.standardizedFileURL.path
        return opened.withLock { cache in
            if let done = cache[key] { return done }
            if let other = cache.first(where: { if case .success = $0.value { return true } else { return false } }) {
                return .failure(LlamaCppUnavailable("this process already uses llama.cpp from \(other.key); it cannot also load the one in \(key)"))
            }
            let result = Result { () throws(LlamaCppUnavailable) in try LlamaCppLibrary(directory: directory) }
            cache[key] = result
            return result
        }
    }
}

/// Why llama.cpp cannot be used, in words a person can act on.
struct LlamaCppUnavailable: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
