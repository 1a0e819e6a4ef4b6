#!/usr/bin/env python3
"""Writes a random-weight SmolVLM pair: a llama-architecture text GGUF and an idefics3 `clip` mmproj GGUF,
with the tensor names and metadata keys llama.cpp's loader and mtmd read (clip.cpp / clip-impl.h).

Deterministic: the same arguments give byte-identical files.

    make_smolvlm.py --shape tiny --type f16 --out DIR           # CI-sized pair (about 200 KB)
    make_smolvlm.py --shape smolvlm-256m --type q8_0 --out DIR  # SmolVLM-256M's shapes (bench only)
"""
import argparse
import os

import numpy as np
import gguf

SHAPES = {
    # text: llama; vision: SigLIP ViT + pixel shuffle + linear projector.
    "tiny": dict(
        n_embd=64, n_layer=2, n_head=4, n_head_kv=2, n_ff=128, ctx=2048, rope_base=10000.0, rms_eps=1e-5,
        v_embd=32, v_layer=2, v_head=2, v_ff=64, image_size=32, patch=4, scale=2, longest_edge=96, v_eps=1e-6,
        extra_vocab=0, std=0.3, v_std=0.2),
    # SmolVLM-256M-Instruct: SmolLM2-135M-like text model and a 93M SigLIP encoder (512 px tiles, patch 16).
    "smolvlm-256m": dict(
        n_embd=576, n_layer=30, n_head=9, n_head_kv=3, n_ff=1536, ctx=8192, rope_base=100000.0, rms_eps=1e-5,
        v_embd=768, v_layer=12, v_head=12, v_ff=3072, image_size=512, patch=16, scale=4, longest_edge=1536,
        v_eps=1e-6, extra_vocab=49000, std=0.05, v_std=0.03),
}


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (byte-level BPE)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


SPECIAL_FIRST = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
SPECIAL_IMAGE = ["<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>"] + \
    [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
MERGES = [("Ċ", "Ċ"), ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"), ("o", "n"),
          ("Ġ", "i"), ("Ġ", "w"), ("a", "t"), ("Ġ", "s"), ("e", "n"), ("o", "r"), ("Ġi", "s"), ("Ġw", "h"),
          ("Ġwh", "at"), ("Ġ", "p"), ("i", "c")]


def vocabulary(extra):
    table = bytes_to_unicode()
    tokens, types = [], []
    for t in SPECIAL_FIRST:
        tokens.append(t); types.append(gguf.TokenType.CONTROL)
    for b in range(256):
        tokens.append(table[b]); types.append(gguf.TokenType.NORMAL)
    merges = []
    for a, b in MERGES:
        if a + b not in tokens:
            tokens.append(a + b); types.append(gguf.TokenType.NORMAL)
        merges.append(f"{a} {b}")
    for i in range(extra):  # fills the vocabulary to a real model's size (never produced by the merges)
        tokens.append(f"<unused_{i}>"); types.append(gguf.TokenType.UNUSED)
    for t in SPECIAL_IMAGE:
        tokens.append(t); types.append(gguf.TokenType.CONTROL)
    return tokens, types, merges


class Weights:
    def __init__(self, writer, qtype, seed):
        self.w = writer
        self.qtype = qtype
        self.rng = np.random.default_rng(seed)

    def matrix(self, name, rows, cols, std, qtype=None):
        data = (self.rng.standard_normal((rows, cols)) * std).astype(np.float32)
        self.put(name, data, qtype or self.qtype)

    def put(self, name, data, qtype):
        if qtype == gguf.GGMLQuantizationType.F32:
            self.w.add_tensor(name, data.astype(np.float32))
        elif qtype == gguf.GGMLQuantizationType.F16:
            self.w.add_tensor(name, data.astype(np.float16))
        else:
            q = gguf.quants.quantize(data, qtype)
            self.w.add_tensor(name, q, raw_dtype=qtype)

    def vector(self, name, n, center, jitter):
        data = (center + (self.rng.random(n) * 2 - 1) * jitter).astype(np.float32)
        self.w.add_tensor(name, data)


def write_text(path, s, qtype, seed):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("random SmolVLM text model")
    w.add_block_count(s["n_layer"])
    w.add_context_length(s["ctx"])
    w.add_embedding_length(s["n_embd"])
    w.add_feed_forward_length(s["n_ff"])
    w.add_head_count(s["n_head"])
    w.add_head_count_kv(s["n_head_kv"])
    hd = s["n_embd"] // s["n_head"]
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(s["rms_eps"])
    tokens, types, merges = vocabulary(s["extra_vocab"])
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|im_start|>"))
    w.add_eos_token_id(tokens.index("<end_of_utterance>"))
    w.add_pad_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    W = Weights(w, qtype, seed)
    e, f, std = s["n_embd"], s["n_ff"], s["std"]
    kv = s["n_head_kv"] * hd
    W.matrix("token_embd.weight", len(tokens), e, 1.0)
    W.vector("output_norm.weight", e, 1.0, 0.5)
    W.matrix("output.weight", len(tokens), e, std * 4)
    for i in range(s["n_layer"]):
        p = f"blk.{i}."
        W.vector(p + "attn_norm.weight", e, 1.0, 0.5)
        W.matrix(p + "attn_q.weight", e, e, std)
        W.matrix(p + "attn_k.weight", kv, e, std)
        W.matrix(p + "attn_v.weight", kv, e, std)
        W.matrix(p + "attn_output.weight", e, e, std)
        W.vector(p + "ffn_norm.weight", e, 1.0, 0.5)
        W.matrix(p + "ffn_gate.weight", f, e, std)
        W.matrix(p + "ffn_up.weight", f, e, std)
        W.matrix(p + "ffn_down.weight", e, f, std)
    finish(w)


def write_mmproj(path, s, qtype, seed, legacy=False):
    w = gguf.GGUFWriter(path, "clip")
    w.add_name("random SmolVLM vision encoder")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.use_gelu", True)
    w.add_string("clip.projector_type", "idefics3")
    w.add_uint32("clip.vision.image_size", s["image_size"])
    w.add_uint32("clip.vision.patch_size", s["patch"])
    w.add_uint32("clip.vision.embedding_length", s["v_embd"])
    w.add_uint32("clip.vision.feed_forward_length", s["v_ff"])
    w.add_uint32("clip.vision.block_count", s["v_layer"])
    w.add_uint32("clip.vision.attention.head_count", s["v_head"])
    w.add_float32("clip.vision.attention.layer_norm_epsilon", s["v_eps"])
    w.add_uint32("clip.vision.projection_dim", s["n_embd"])
    w.add_uint32("clip.vision.projector.scale_factor", s["scale"])
    if not legacy:
        # Files converted before llama.cpp added this key (the SmolVLM files of early 2025) have no longest edge:
        # mtmd then rounds each side to whole tiles and resizes with bicubic instead (see --legacy).
        w.add_uint32("clip.vision.preproc_image_size", s["longest_edge"])
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    W = Weights(w, qtype, seed + 7)
    F32, F16 = gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16
    e, f, p, std = s["v_embd"], s["v_ff"], s["patch"], s["v_std"]
    n_pos = (s["image_size"] // p) ** 2
    # The patch convolution kernel stays F16 (as llama.cpp's converter keeps it), the rest as asked.
    kernel = (W.rng.standard_normal((e, 3, p, p)) * (1.0 / np.sqrt(3 * p * p))).astype(np.float32)
    W.put("v.patch_embd.weight", kernel, F32 if qtype == F32 else F16)
    W.vector("v.patch_embd.bias", e, 0.0, 0.1)
    # ggml adds the position embedding with a binary op that needs it in F32 (llama.cpp's converter keeps it F32).
    W.put("v.position_embd.weight", (W.rng.standard_normal((n_pos, e)) * 0.5).astype(np.float32), F32)
    for i in range(s["v_layer"]):
        b = f"v.blk.{i}."
        W.vector(b + "ln1.weight", e, 1.0, 0.5)
        W.vector(b + "ln1.bias", e, 0.0, 0.2)
        for t in ("attn_q", "attn_k", "attn_v", "attn_out"):
            W.matrix(b + t + ".weight", e, e, std * 2)
            W.vector(b + t + ".bias", e, 0.0, 0.1)
        W.vector(b + "ln2.weight", e, 1.0, 0.5)
        W.vector(b + "ln2.bias", e, 0.0, 0.2)
        W.matrix(b + "ffn_up.weight", f, e, std * 2)
        W.vector(b + "ffn_up.bias", f, 0.0, 0.1)
        W.matrix(b + "ffn_down.weight", e, f, std * 2)
        W.vector(b + "ffn_down.bias", e, 0.0, 0.1)
    W.vector("v.post_ln.weight", e, 1.0, 0.5)
    W.vector("v.post_ln.bias", e, 0.0, 0.2)
    W.matrix("mm.model.fc.weight", s["n_embd"], e * s["scale"] ** 2, 0.3)
    finish(w)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    ap.add_argument("--type", choices=["f32", "f16", "q8_0"], default="f16")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vision-layers", type=int, help="override the encoder depth (to see how differences grow)")
    ap.add_argument("--legacy", action="store_true",
                    help="write the projector without clip.vision.preproc_image_size, as older conversions are")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.vision_layers:
        SHAPES[a.shape] = dict(SHAPES[a.shape], v_layer=a.vision_layers)
    qtype = {"f32": gguf.GGMLQuantizationType.F32, "f16": gguf.GGMLQuantizationType.F16,
             "q8_0": gguf.GGMLQuantizationType.Q8_0}[a.type]
    os.makedirs(a.out, exist_ok=True)
    stem = f"smolvlm-{a.shape}-{a.type}" + (f"-v{a.vision_layers}" if a.vision_layers else "") + ("-legacy" if a.legacy else "")
    write_text(os.path.join(a.out, stem + ".gguf"), SHAPES[a.shape], qtype, a.seed)
    write_mmproj(os.path.join(a.out, "mmproj-" + stem + ".gguf"), SHAPES[a.shape], qtype, a.seed, a.legacy)
    print(os.path.join(a.out, stem + ".gguf"))


if __name__ == "__main__":
    main()
