import CLlamaCpp
import Foundation

/// One model loaded in llama.cpp with one context (KV cache), driven token by token.
///
/// Not thread-safe: callers serialise (the SDK never runs two calls on one model at once).
final class LlamaCppSession: @unchecked Sendable {
    let library: LlamaCppLibrary
    private let model: OpaquePointer
    private let context: OpaquePointer
    private let vocab: OpaquePointer
    /// Entries in the vocabulary (the length of a logits row).
    let vocabularySize: Int
    /// The context window, tokens: what was asked for (llama.cpp may allocate a little more, see `allocatedContextLength`).
    let contextLength: Int
    /// What llama.cpp allocated (`llama_n_ctx`; it rounds the request up to its padding).
    let allocatedContextLength: Int
    /// Most tokens given to one `llama_decode`.
    let batchSize: Int
    /// The tokens whose keys and values are in the cache, in order.
    private(set) var cachedTokens: [Int32] = []

    /// Loads the model file and creates a context.
    /// - Throws: ``LlamaCppFailure`` with llama.cpp's own reason when it refuses the file or the context.
    init(library: LlamaCppLibrary, path: String, contextLength: Int, threads: Int, batchSize: Int = 256) throws(LlamaCppFailure) {
        self.library = library
        var mp = library.modelDefaultParams()
        mp.n_gpu_layers = 0          // CPU: this build has no GPU backend, and useGpu is resolved before loading
        ra_llama_clear_last_error()
        guard let m = library.modelLoad(path, mp) else {
            throw LlamaCppFailure("llama.cpp could not load \(URL(fileURLWithPath: path).lastPathComponent)", detail: LlamaCppLibrary.lastError())
        }
        var cp = library.contextDefaultParams()
        cp.n_ctx = UInt32(contextLength)
        cp.n_batch = UInt32(max(1, min(batchSize, contextLength)))
        cp.n_ubatch = cp.n_batch
        cp.n_threads = Int32(threads)
        cp.n_threads_batch = Int32(threads)
        cp.no_perf = true
        ra_llama_clear_last_error()
        guard let c = library.initFromModel(m, cp) else {
            library.modelFree(m)
            throw LlamaCppFailure("llama.cpp could not create a context of \(contextLength) tokens", detail: LlamaCppLibrary.lastError())
        }
        guard let v = library.modelGetVocab(m) else {
            library.free(c)
            library.modelFree(m)
            throw LlamaCppFailure("the model has no vocabulary", detail: nil)
        }
        model = m
        context = c
        vocab = v
        vocabularySize = Int(library.vocabNTokens(v))
        allocatedContextLength = Int(library.nCtx(c))
        self.contextLength = min(contextLength, allocatedContextLength)
        self.batchSize = Int(cp.n_batch)
    }

    deinit {
        library.free(context)
        library.modelFree(model)
    }

    /// Bytes of the model's tensors.
    var modelBytes: Int64 { Int64(library.modelSize(model)) }

    /// llama.cpp's description of the model, e.g. "qwen3 0.6B Q8_0".
    var modelDescription: String {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = library.modelDesc(model, &buffer, buffer.count)
        return LlamaCppLibrary.text(buffer)
    }

    /// The chat template stored in the model, if any.
    var chatTemplate: String? { library.modelChatTemplate(model, nil).map { String(cString: $0) } }

    /// The threads llama.cpp decodes with (`llama_n_threads`).
    var threads: Int { Int(library.nThreads(context)) }

    /// The position the next token goes to.
    var position: Int { cachedTokens.count }

    // MARK: Tokens

    /// Text to token ids with llama.cpp's tokenizer.
    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws(LlamaCppFailure) -> [Int32] {
        let utf8 = Array(text.utf8CString.dropLast())
        var ids = [Int32](repeating: 0, count: utf8.count + 8)
        var n = library.tokenize(vocab, utf8, Int32(utf8.count), &ids, Int32(ids.count), addSpecial, parseSpecial)
        if n < 0, n != Int32.min {
            ids = [Int32](repeating: 0, count: Int(-n))
            n = library.tokenize(vocab, utf8, Int32(utf8.count), &ids, Int32(ids.count), addSpecial, parseSpecial)
        }
        guard n >= 0 else { throw LlamaCppFailure("llama.cpp could not tokenize the prompt", detail: nil) }
        return Array(ids.prefix(Int(n)))
    }

    /// The bytes of one token's text (`special`: control tokens as their text, else as nothing).
    func piece(_ token: Int32, special: Bool) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: 64)
        var n = library.tokenToPiece(vocab, token, &buffer, Int32(buffer.count), 0, special)
        if n < 0 {
            buffer = [CChar](repeating: 0, count: Int(-n))
            n = library.tokenToPiece(vocab, token, &buffer, Int32(buffer.count), 0, special)
        }
        return buffer.prefix(Int(max(0, n))).map { UInt8(bitPattern: $0) }
    }

    /// The text of the BOS and EOS tokens ("" when the model has none), for chat templates.
    var specialTokenTexts: (bos: String, eos: String) {
        func text(_ id: Int32) -> String { id < 0 ? "" : String(decoding: piece(id, special: true), as: UTF8.self) }
        return (text(library.vocabBOS(vocab)), text(library.vocabEOS(vocab)))
    }

    /// Whether the token ends generation.
    func isEndOfGeneration(_ token: Int32) -> Bool { library.vocabIsEOG(vocab, token) }

    // MARK: Evaluation

    /// Drops cached tokens after the first `count`.
    func truncate(to count: Int) {
        guard count < cachedTokens.count else { return }
        if count == 0 || !library.memorySeqRm(library.getMemory(context), 0, Int32(count), -1) {
            // Recurrent models cannot drop a tail; start over.
            library.memoryClear(library.getMemory(context), true)
            cachedTokens.removeAll()
            return
        }
        cachedTokens.removeLast(cachedTokens.count - count)
    }

    /// Empties the cache.
    func reset() { truncate(to: 0) }

    /// Evaluates tokens after the cached ones, in batches of `batchSize`.
    /// - Parameter allLogits: return the logits of every position (else only of the last).
    /// - Returns: `vocabularySize` floats per returned position.
    func evaluate(_ tokens: [Int32], allLogits: Bool = false) throws(LlamaCppFailure) -> [Float] {
        guard cachedTokens.count + tokens.count <= contextLength else {
            throw LlamaCppFailure("\(cachedTokens.count + tokens.count) tokens do not fit in the context of \(contextLength)", detail: nil)
        }
        var out: [Float] = []
        var start = 0
        while start < tokens.count {
            let end = min(tokens.count, start + batchSize)
            let wantAll = allLogits
            let last = end == tokens.count
            try decodeBatch(Array(tokens[start..<end]), outputs: { i, n in wantAll || (last && i == n - 1) }, into: &out)
            start = end
        }
        return out
    }

    /// Decodes one token; returns the logits that follow it.
    func decode(_ token: Int32) throws(LlamaCppFailure) -> [Float] {
        try evaluate([token])
    }

    private func decodeBatch(_ tokens: [Int32], outputs: (Int, Int) -> Bool, into out: inout [Float]) throws(LlamaCppFailure) {
        let n = tokens.count
        var ids = tokens
        var positions = (0..<n).map { Int32(position + $0) }
        var seqCounts = [Int32](repeating: 1, count: n)
        var seqZero: Int32 = 0
        var flags = (0..<n).map { Int8(outputs($0, n) ? 1 : 0) }
        ra_llama_clear_last_error()
        let status: Int32 = withUnsafeMutablePointer(to: &seqZero) { zero in
            var seqIDs = [UnsafeMutablePointer<Int32>?](repeating: zero, count: n)
            return ids.withUnsafeMutableBufferPointer { idp in
                positions.withUnsafeMutableBufferPointer { pp in
                    seqCounts.withUnsafeMutableBufferPointer { sc in
                        seqIDs.withUnsafeMutableBufferPointer { sp in
                            flags.withUnsafeMutableBufferPointer { fp in
                                let batch = ra_llama_batch(n_tokens: Int32(n), token: idp.baseAddress, embd: nil, pos: pp.baseAddress,
                                                           n_seq_id: sc.baseAddress, seq_id: sp.baseAddress, logits: fp.baseAddress)
                                return library.decode(context, batch)
                            }
                        }
                    }
                }
            }
        }
        guard status == 0 else {
            throw LlamaCppFailure("llama_decode failed with status \(status)", detail: LlamaCppLibrary.lastError())
        }
        cachedTokens += tokens
        for i in 0..<n where flags[i] != 0 {
            guard let row = library.logitsIth(context, Int32(i)) else {
                throw LlamaCppFailure("llama.cpp returned no logits for position \(i)", detail: LlamaCppLibrary.lastError())
            }
            out.append(contentsOf: UnsafeBufferPointer(start: row, count: vocabularySize))
        }
    }
}

/// llama.cpp refused something; `detail` is its own last error line when it logged one.
struct LlamaCppFailure: Error, Sendable, CustomStringConvertible {
    let message: String
    let detail: String?
    init(_ message: String, detail: String?) {
        self.message = message
        self.detail = detail
    }
    var description: String { detail.map { "\(message): \($0)" } ?? message }
}
