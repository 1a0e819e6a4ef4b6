import Foundation
import RunAnywhereGGUF

/// Small GGUF models the project makes itself, for the demo and for tests that want readable output.
///
/// The weights are not trained: they are constructed so that a one-layer llama-architecture network
/// computes a word bigram model of a short built-in story (one-hot token embeddings; attention and
/// feed-forward outputs zeroed; the output matrix holds log P(next word | word)). The engine runs it as
/// any other GGUF — tokenizer, RMSNorm, attention, KV cache, sampling — and the text it writes follows
/// the story's word pairs, so it reads like English without meaning anything.
public enum DemoModel {
    /// Which built-in story a model is made from (two, so the demo can switch models).
    public enum Variant: String, Sendable, CaseIterable {
        /// A story of a forest.
        case forest
        /// A story of the sea.
        case sea

        var story: String {
            switch self {
            case .forest:
                return """
                    Once upon a time there was a little fox who lived in a big green forest. \
                    Every morning the little fox walked to the river to drink the cold water. \
                    One day the fox met a small bird who sang a happy song. \
                    The bird said that the forest was full of secrets. \
                    The fox wanted to find the secrets of the forest. \
                    So the fox and the bird walked under the tall trees all day. \
                    They found a old tree with a door in it. \
                    Behind the door there was a warm room full of books. \
                    The little fox read the books and learned about the stars. \
                    At night the fox and the bird looked at the stars and smiled. \
                    The forest was quiet and the river sang a soft song. \
                    Once upon a time the fox was afraid of the dark, but now the fox loved the night.
                    """
            case .sea:
                return """
                    Once upon a time there was a brave girl who lived by the blue sea. \
                    Every morning the girl walked to the beach to look at the boats. \
                    One day the girl found a shell that could talk. \
                    The shell said that the sea was full of wonders. \
                    The girl wanted to see the wonders of the sea. \
                    So the girl and the shell sailed a small boat over the waves all day. \
                    They found a island with a tower on it. \
                    Inside the tower there was a old sailor who told stories. \
                    The brave girl listened to the stories and learned about the wind. \
                    At night the girl and the shell looked at the moon and laughed. \
                    The sea was calm and the wind sang a soft song. \
                    Once upon a time the girl was afraid of the waves, but now the girl loved the sea.
                    """
            }
        }
    }

    /// A writer holding the model for `variant`.
    public static func gguf(_ variant: Variant) -> GGUFWriter {
        let units = tokenize(variant.story)
        // Vocabulary: specials, byte fallback, the story's units, then every prefix the SPM merges need.
        var tokens = ["<unk>", "<s>", "</s>"]
        var types: [Int32] = [2, 3, 3]
        for b in 0..<256 {
            let hex = String(b, radix: 16, uppercase: true)
            tokens.append("<0x\(hex.count == 1 ? "0" + hex : hex)>")
            types.append(6)
        }
        var words: [String] = []
        for u in units where !words.contains(u) { words.append(u) }
        let firstWord = tokens.count
        tokens += words
        types += Array(repeating: 1, count: words.count)
        var known = Set(tokens)
        for w in words {
            let chars = Array(w)
            for n in 1..<max(1, chars.count) {
                let p = String(chars[0..<n])
                if known.insert(p).inserted {
                    tokens.append(p)
                    types.append(1)
                }
            }
            for c in chars where known.insert(String(c)).inserted {
                tokens.append(String(c))
                types.append(1)
            }
        }
        let vocab = tokens.count
        // Dimensions: one per word, one for "start" (BOS and anything unknown), padded to a multiple of 32.
        let startDim = words.count
        let dims = ((words.count + 1 + 31) / 32) * 32
        func dim(ofToken t: Int) -> Int { (t >= firstWord && t < firstWord + words.count) ? t - firstWord : startDim }

        // Bigram counts over the story, with sentence ends leading back to starts.
        var counts = Array(repeating: [Int: Double](), count: dims)
        var previous = startDim
        for u in units {
            guard let w = words.firstIndex(of: u) else { continue }
            counts[previous][w, default: 0] += 1
            previous = [".", "!", "?"].contains(u) ? startDim : w
            if previous == startDim { counts[w][-1, default: 0] += 0.25 }   // may end after a sentence
        }
        let scale = Float(dims).squareRoot()
        var output = Array(repeating: Float(-30) / scale, count: dims * vocab)
        for i in 0..<dims {
            let total = counts[i].values.reduce(0, +)
            guard total > 0 else { continue }
            for (w, c) in counts[i] {
                let token = w < 0 ? 2 : firstWord + w
                output[token * dims + i] = Float(log(c / total)) / scale
            }
        }
        var embedding = Array(repeating: Float(0), count: dims * vocab)
        for t in 0..<vocab { embedding[t * dims + dim(ofToken: t)] = 1 }

        var w = GGUFWriter()
        let arch = "llama"
        let headDim = 32
        let heads = dims / headDim
        let ffn = 32
        w.set("general.architecture", .string(arch))
        w.set("general.name", .string("runanywhere-demo-\(variant.rawValue)"))
        w.set("general.file_type", .uint32(0))
        w.set("\(arch).context_length", .uint32(2048))
        w.set("\(arch).embedding_length", .uint32(UInt32(dims)))
        w.set("\(arch).block_count", .uint32(1))
        w.set("\(arch).feed_forward_length", .uint32(UInt32(ffn)))
        w.set("\(arch).attention.head_count", .uint32(UInt32(heads)))
        w.set("\(arch).attention.head_count_kv", .uint32(1))
        w.set("\(arch).rope.dimension_count", .uint32(UInt32(headDim)))
        w.set("\(arch).rope.freq_base", .float32(10_000))
        w.set("\(arch).attention.layer_norm_rms_epsilon", .float32(1e-6))
        w.set("tokenizer.ggml.model", .string("llama"))
        w.set("tokenizer.ggml.tokens", .array(tokens.map { .string($0) }))
        w.set("tokenizer.ggml.scores", .array(tokens.map { .float32(Float($0.count)) }))
        w.set("tokenizer.ggml.token_type", .array(types.map { .int32($0) }))
        w.set("tokenizer.ggml.unknown_token_id", .uint32(0))
        w.set("tokenizer.ggml.bos_token_id", .uint32(1))
        w.set("tokenizer.ggml.eos_token_id", .uint32(2))
        w.set("tokenizer.ggml.add_bos_token", .bool(true))

        w.addTensor(name: "token_embd.weight", shape: [dims, vocab], floats: embedding)
        w.addTensor(name: "output.weight", shape: [dims, vocab], floats: output)
        w.addTensor(name: "output_norm.weight", shape: [dims], floats: Array(repeating: 1, count: dims))
        let zeros = { (n: Int) in [Float](repeating: 0, count: n) }
        w.addTensor(name: "blk.0.attn_norm.weight", shape: [dims], floats: Array(repeating: 1, count: dims))
        w.addTensor(name: "blk.0.attn_q.weight", shape: [dims, heads * headDim], floats: zeros(dims * heads * headDim))
        w.addTensor(name: "blk.0.attn_k.weight", shape: [dims, headDim], floats: zeros(dims * headDim))
        w.addTensor(name: "blk.0.attn_v.weight", shape: [dims, headDim], floats: zeros(dims * headDim))
        w.addTensor(name: "blk.0.attn_output.weight", shape: [heads * headDim, dims], floats: zeros(heads * headDim * dims))
        w.addTensor(name: "blk.0.ffn_norm.weight", shape: [dims], floats: Array(repeating: 1, count: dims))
        w.addTensor(name: "blk.0.ffn_gate.weight", shape: [dims, ffn], floats: zeros(dims * ffn))
        w.addTensor(name: "blk.0.ffn_up.weight", shape: [dims, ffn], floats: zeros(dims * ffn))
        w.addTensor(name: "blk.0.ffn_down.weight", shape: [ffn, dims], floats: zeros(ffn * dims))
        return w
    }

    /// Writes the model for `variant` to `url` and returns its bytes.
    @discardableResult
    public static func write(_ variant: Variant, to url: URL) throws -> Data {
        let data = gguf(variant).data()
        try data.write(to: url, options: .atomic)
        return data
    }

    /// The story split the way the SentencePiece tokenizer will split it: `▁word` units and punctuation.
    static func tokenize(_ text: String) -> [String] {
        var units: [String] = []
        for raw in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            var word = String(raw)
            var trailing: [String] = []
            while let last = word.last, [".", ",", "!", "?"].contains(last) {
                trailing.insert(String(last), at: 0)
                word.removeLast()
            }
            if !word.isEmpty { units.append("\u{2581}" + word) }
            units += trailing
        }
        return units
    }
}

extension DemoModel {
    /// A ChatML chat template (as Qwen and SmolLM2 ship it).
    public static let chatML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

    /// The demo model's GGUF bytes with the ChatML template, so that system prompts and history are rendered.
    public static func chatData(_ variant: Variant) -> Data {
        var writer = gguf(variant)
        writer.set("tokenizer.chat_template", .string(chatML))
        return writer.data()
    }
}
