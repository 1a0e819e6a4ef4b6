#!/usr/bin/env python3
"""Write a random-weight model shaped like Qwen3-0.6B for the engine benchmark.

qwen3 architecture: 28 layers, hidden 1024, 16 query heads and 8 KV heads of dimension 128,
feed-forward 3072, tied embeddings, vocabulary 151936. Matrices are N(0, 0.02) quantized to Q8_0
(blocks of 32: scale = max|x| / 127 stored as F16, values round(x / scale)) or stored as F16/F32;
norm weights are F32 ones. The tokenizer keys are copied from a vocab-only GGUF (llama.cpp's
ggml-vocab-qwen2.gguf, 151936 tokens) when one is given, so the file loads like a real Qwen3.

Requires numpy and the PyPI package gguf (dev-time only).
"""
import argparse

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType, GGUFWriter, GGMLQuantizationType


def quantize_q8_0(x: np.ndarray) -> np.ndarray:
    rows, cols = x.shape
    blocks = x.reshape(rows, cols // 32, 32).astype(np.float32)
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    d = amax / 127.0
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1), 0)
    q = np.rint(blocks * inv).astype(np.int8)
    out = np.empty((rows, cols // 32, 34), dtype=np.uint8)
    out[:, :, 0:2] = d.astype(np.float16).view(np.uint8).reshape(rows, cols // 32, 2)
    out[:, :, 2:] = q.view(np.uint8)
    return out.reshape(rows, cols // 32 * 34)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--type", default="q8_0", choices=["q8_0", "f16", "f32"])
    p.add_argument("--vocab-file", default=None, help="vocab-only GGUF whose tokenizer.* keys are copied")
    p.add_argument("--layers", type=int, default=28)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()

    hidden, heads, kv_heads, head_dim, ffn, vocab = 1024, 16, 8, 128, 3072, 151936
    w = GGUFWriter(a.out, "qwen3")
    w.add_name("bench-qwen3-0.6b-shape")
    w.add_block_count(a.layers)
    w.add_context_length(40960)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type({"q8_0": 7, "f16": 1, "f32": 0}[a.type])
    if a.vocab_file:
        r = GGUFReader(a.vocab_file)
        for name, f in r.fields.items():
            if not name.startswith("tokenizer."):
                continue
            if f.types[0] == GGUFValueType.ARRAY:
                w.add_key_value(name, f.contents(), GGUFValueType.ARRAY, sub_type=f.types[1])
            else:
                w.add_key_value(name, f.contents(), f.types[0])
    else:  # a plain SPM-style vocabulary of the same size
        tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
        tokens += [f"tok{i}" for i in range(vocab - len(tokens))]
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores([0.0] * vocab)
        w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (vocab - 259))
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)

    rng = np.random.default_rng(a.seed)

    def matrix(name: str, rows: int, cols: int) -> None:
        x = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
        if a.type == "q8_0":
            w.add_tensor(name, quantize_q8_0(x), raw_dtype=GGMLQuantizationType.Q8_0)
        elif a.type == "f16":
            w.add_tensor(name, x.astype(np.float16))
        else:
            w.add_tensor(name, x)

    def ones(name: str, n: int) -> None:
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    matrix("token_embd.weight", vocab, hidden)
    ones("output_norm.weight", hidden)
    for i in range(a.layers):
        b = f"blk.{i}."
        ones(b + "attn_norm.weight", hidden)
        matrix(b + "attn_q.weight", heads * head_dim, hidden)
        matrix(b + "attn_k.weight", kv_heads * head_dim, hidden)
        matrix(b + "attn_v.weight", kv_heads * head_dim, hidden)
        ones(b + "attn_q_norm.weight", head_dim)
        ones(b + "attn_k_norm.weight", head_dim)
        matrix(b + "attn_output.weight", hidden, heads * head_dim)
        ones(b + "ffn_norm.weight", hidden)
        matrix(b + "ffn_gate.weight", ffn, hidden)
        matrix(b + "ffn_up.weight", ffn, hidden)
        matrix(b + "ffn_down.weight", hidden, ffn)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
