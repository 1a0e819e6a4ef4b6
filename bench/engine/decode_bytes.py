#!/usr/bin/env python3
"""Bytes of weights one decode step reads, per GGUF file (engine benchmark, bench/engine/run.sh).

  decode_bytes.py NAME=MODEL.gguf ...

Prints `NAME<TAB>BYTES<TAB>DETAIL` per file. A decode step multiplies one activation row with every 2-D weight
matrix once, so BYTES is the sum of the 2-D tensors' stored bytes, except the token embedding: its lookup reads
one row. When the file has no `output.weight` the embedding is the output matrix too (tied) and is counted once
more, whole, as the output. 1-D tensors (norms, biases: a few KB) and the KV cache (grows with the position:
with F16 K/V the Qwen3-0.6B shape reads 115 KB per cached token, ~7 MB at depth 64, 2% of its weights) are not
counted, so the limit derived from BYTES is an upper bound. Requires the PyPI package gguf.
"""
import sys

from gguf import GGUFReader


def decode_bytes(path: str) -> tuple[int, str]:
    r = GGUFReader(path)
    total, embd, output, layers = 0, None, None, 0
    for t in r.tensors:
        if len(t.shape) != 2:
            continue
        n = int(t.n_bytes)
        if t.name == "token_embd.weight":
            embd = t
        elif t.name == "output.weight":
            output = n
            total += n
        else:
            layers += n
            total += n
    detail = f"layers {layers / 1e6:.1f} MB"
    if embd is not None:
        rows = int(embd.shape[1])      # gguf-py lists the shape columns first
        total += int(embd.n_bytes) // rows
        detail += f", embedding row {int(embd.n_bytes) // rows} B ({embd.tensor_type.name})"
        if output is None:
            output = int(embd.n_bytes)
            total += output
            detail += f", tied output {output / 1e6:.1f} MB ({embd.tensor_type.name})"
        else:
            detail += f", output {output / 1e6:.1f} MB"
    return total, detail


def main() -> None:
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        name, path = arg.split("=", 1)
        total, detail = decode_bytes(path)
        print(f"{name}\t{total}\t{detail}")


if __name__ == "__main__":
    main()
