extension GGUFTokenizer {
    /// The `tokenizer.ggml.*` metadata a tokenizer is built from, as plain values.
    ///
    /// `GGUFTokenizer(file:)` reads it from a GGUF file; tests and tools can fill one in by hand.
    /// Absent optional values take llama.cpp's defaults for the tokenizer model.
    public struct Metadata: Sendable, Hashable {
        /// `tokenizer.ggml.model`: `"llama"` (SentencePiece) or `"gpt2"` (byte-level BPE).
        public var model: String
        /// `tokenizer.ggml.pre`: the BPE pre-tokenizer (`"llama-bpe"`, `"qwen2"`, `"gpt-2"`, ...).
        public var pre: String?
        /// `tokenizer.ggml.tokens`: the text of every token, by id.
        public var tokens: [String]
        /// `tokenizer.ggml.scores`: SentencePiece merge priorities (higher merges first).
        public var scores: [Float]?
        /// `tokenizer.ggml.token_type`: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
        public var tokenTypes: [Int32]?
        /// `tokenizer.ggml.merges`: BPE merges `"left right"`, highest priority first.
        public var merges: [String]?
        /// `tokenizer.ggml.bos_token_id`.
        public var bosTokenId: Int?
        /// `tokenizer.ggml.eos_token_id`.
        public var eosTokenId: Int?
        /// `tokenizer.ggml.eot_token_id`.
        public var eotTokenId: Int?
        /// `tokenizer.ggml.eom_token_id`.
        public var eomTokenId: Int?
        /// `tokenizer.ggml.unknown_token_id`.
        public var unknownTokenId: Int?
        /// `tokenizer.ggml.seperator_token_id` (sic).
        public var separatorTokenId: Int?
        /// `tokenizer.ggml.padding_token_id`.
        public var paddingTokenId: Int?
        /// `tokenizer.ggml.add_bos_token`.
        public var addBOS: Bool?
        /// `tokenizer.ggml.add_eos_token`.
        public var addEOS: Bool?
        /// `tokenizer.ggml.add_space_prefix`.
        public var addSpacePrefix: Bool?
        /// `general.name`: llama.cpp strips whitespace after special tokens for Phi-3 models by name.
        public var modelName: String?
        /// `general.architecture`.
        public var architecture: String?

        /// Creates metadata from plain values; every optional value may be left out.
        public init(model: String, pre: String? = nil, tokens: [String], scores: [Float]? = nil,
                    tokenTypes: [Int32]? = nil, merges: [String]? = nil,
                    bosTokenId: Int? = nil, eosTokenId: Int? = nil, eotTokenId: Int? = nil,
                    eomTokenId: Int? = nil, unknownTokenId: Int? = nil, separatorTokenId: Int? = nil,
                    paddingTokenId: Int? = nil, addBOS: Bool? = nil, addEOS: Bool? = nil,
                    addSpacePrefix: Bool? = nil, modelName: String? = nil, architecture: String? = nil) {
            self.model = model
            self.pre = pre
            self.tokens = tokens
            self.scores = scores
            self.tokenTypes = tokenTypes
            self.merges = merges
            self.bosTokenId = bosTokenId
            self.eosTokenId = eosTokenId
            self.eotTokenId = eotTokenId
            self.eomTokenId = eomTokenId
            self.unknownTokenId = unknownTokenId
            self.separatorTokenId = separatorTokenId
            self.paddingTokenId = paddingTokenId
            self.addBOS = addBOS
            self.addEOS = addEOS
            self.addSpacePrefix = addSpacePrefix
            self.modelName = modelName
            self.architecture = architecture
        }

        /// Reads the tokenizer metadata of a GGUF file.
        /// - Throws: `GGUFError` (`.invalidFormat`) when the vocabulary is missing or malformed.
        public init(file: GGUFFile) throws {
            guard let model = file.string("tokenizer.ggml.model") else {
                throw GGUFError(.invalidFormat, "\(file.path) has no tokenizer (metadata key tokenizer.ggml.model is missing)")
            }
            guard let tokens = file.stringArray("tokenizer.ggml.tokens") else {
                throw GGUFError(.invalidFormat, "\(file.path) has no token list (tokenizer.ggml.tokens is missing or not an array of strings)")
            }
            func optionalArray<T>(_ key: String, _ read: (String) -> T?) throws -> T? {
                guard file.metadata[key] != nil else { return nil }
                guard let value = read(key) else {
                    throw GGUFError(.invalidFormat, "\(file.path): metadata \(key) has the wrong type")
                }
                return value
            }
            let scores = try optionalArray("tokenizer.ggml.scores", file.floatArray)
            let types = try optionalArray("tokenizer.ggml.token_type", file.intArray)
            let merges = try optionalArray("tokenizer.ggml.merges", file.stringArray)
            var tokenTypes: [Int32]?
            if let types {
                tokenTypes = types.map { Int32(clamping: $0) }
            }
            self.init(model: model, pre: file.string("tokenizer.ggml.pre"), tokens: tokens, scores: scores,
                      tokenTypes: tokenTypes, merges: merges,
                      bosTokenId: file.int("tokenizer.ggml.bos_token_id"),
                      eosTokenId: file.int("tokenizer.ggml.eos_token_id"),
                      eotTokenId: file.int("tokenizer.ggml.eot_token_id"),
                      eomTokenId: file.int("tokenizer.ggml.eom_token_id"),
                      unknownTokenId: file.int("tokenizer.ggml.unknown_token_id"),
                      separatorTokenId: file.int("tokenizer.ggml.seperator_token_id"),
                      paddingTokenId: file.int("tokenizer.ggml.padding_token_id"),
                      addBOS: file.bool("tokenizer.ggml.add_bos_token"),
                      addEOS: file.bool("tokenizer.ggml.add_eos_token"),
                      addSpacePrefix: file.bool("tokenizer.ggml.add_space_prefix"),
                      modelName: file.string("general.name"), architecture: file.string("general.architecture"))
        }
    }
}
