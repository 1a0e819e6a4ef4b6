#!/usr/bin/env python3
"""Write a random-weight F16 GGUF shaped like Qwen3-0.6B or Llama-3.2-1B (engine benchmark input).

The F16 file is then quantized by llama.cpp (bench/engine/llama_tool.py quantize), so both engines
read exactly the same Q8_0 / Q4_K_M bytes. Shapes:

  qwen3-0.6b: qwen3, 28 layers, hidden 1024, 16 q heads / 8 kv heads x 128, ffn 3072, tied, qwen2 vocab
  llama-1b:   llama, 16 layers, hidden 2048, 32 q heads / 8 kv heads x 64, ffn 8192, tied, llama-bpe vocab

Weights are N(0, 0.02) written straight as F16 (no F32 copy of the whole model), norms are ones.
The tokenizer keys are copied from a vocab-only GGUF; the vocabulary size is its token count.
Requires numpy and the PyPI package gguf (dev-time only).
"""
import argparse

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter

SHAPES = {
    "qwen3-0.6b": dict(arch="qwen3", layers=28, hidden=1024, heads=16, kv_heads=8, head_dim=128, ffn=3072,
                       rope_base=1_000_000.0, eps=1e-6, qk_norm=True),
    "llama-1b": dict(arch="llama", layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192,
                     rope_base=500_000.0, eps=1e-5, qk_norm=False),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--shape", required=True, choices=sorted(SHAPES))
    p.add_argument("--vocab-file", required=True, help="vocab-only GGUF whose tokenizer.* keys are copied")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    s = SHAPES[a.shape]

    r = GGUFReader(a.vocab_file)
    vocab = len(r.fields["tokenizer.ggml.tokens"].data)
    w = GGUFWriter(a.out, s["arch"])
    w.add_name(f"bench-{a.shape}-shape")
    w.add_block_count(s["layers"])
    w.add_context_length(32768)
    w.add_embedding_length(s["hidden"])
    w.add_feed_forward_length(s["ffn"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv_heads"])
    w.add_key_length(s["head_dim"])
    w.add_value_length(s["head_dim"])
    w.add_rope_dimension_count(s["head_dim"])
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(s["eps"])
    w.add_vocab_size(vocab)
    w.add_file_type(1)  # F16
    for name, f in r.fields.items():
        if not name.startswith("tokenizer."):
            continue
        if f.types[0] == GGUFValueType.ARRAY:
            w.add_key_value(name, f.contents(), GGUFValueType.ARRAY, sub_type=f.types[1])
        else:
            w.add_key_value(name, f.contents(), f.types[0])

    rng = np.random.default_rng(a.seed)

    def matrix(name: str, rows: int, cols: int) -> None:
        x = np.empty((rows, cols), dtype=np.float16)
        step = max(1, (1 << 22) // cols)   # ~16 MB of float32 at a time
        for r0 in range(0, rows, step):
            chunk = rng.standard_normal((min(step, rows - r0), cols), dtype=np.float32)
            chunk *= 0.02
            x[r0:r0 + chunk.shape[0]] = chunk
        w.add_tensor(name, x)

    def ones(name: str, n: int) -> None:
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    h, hd, f = s["hidden"], s["head_dim"], s["ffn"]
    matrix("token_embd.weight", vocab, h)
    ones("output_norm.weight", h)
    for i in range(s["layers"]):
        b = f"blk.{i}."
        ones(b + "attn_norm.weight", h)
        matrix(b + "attn_q.weight", s["heads"] * hd, h)
        matrix(b + "attn_k.weight", s["kv_heads"] * hd, h)
        matrix(b + "attn_v.weight", s["kv_heads"] * hd, h)
        if s["qk_norm"]:
            ones(b + "attn_q_norm.weight", hd)
            ones(b + "attn_k_norm.weight", hd)
        matrix(b + "attn_output.weight", h, s["heads"] * hd)
        ones(b + "ffn_norm.weight", h)
        matrix(b + "ffn_gate.weight", f, h)
        matrix(b + "ffn_up.weight", f, h)
        matrix(b + "ffn_down.weight", h, f)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
