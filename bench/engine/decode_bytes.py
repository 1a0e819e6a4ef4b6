#!/usr/bin/env python3
"""Bytes of weights one decode step reads, per GGUF file (engine benchmark, bench/engine/run.sh).

  decode_bytes.py NAME=MODEL.gguf ...
  decode_bytes.py --segments MODEL.gguf      the byte ranges one decode step reads, for bench/engine/step_probe.c

Prints `NAME<TAB>BYTES<TAB>DETAIL` per file; with --segments, `OFFSET SIZE NAME` per 2-D tensor a decode step
multiplies (file order; the tied output matrix last), offsets from the start of the file. A decode step multiplies one activation row with every 2-D weight
matrix once, so BYTES is the sum of the 2-D tensors' stored bytes, except the token embedding: its lookup reads
one row. When the file has no `output.weight` the embedding is the output matrix too (tied) and is counted once
more, whole, as the output. 1-D tensors (norms, biases: a few KB) and the KV cache (grows with the position:
with F16 K/V the Qwen3-0.6B shape reads 115 KB per cached token, ~7 MB at depth 64, 2% of its weights) are not
counted, so the limit derived from BYTES is an upper bound. Only the tensor table is read (gguf-py's
GGUFReader parses every metadata value, minutes for a 150k-token vocabulary on a busy machine); the type
sizes come from the PyPI package gguf.
"""
import mmap
import struct
import sys

from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

# Sizes of the fixed-size GGUF metadata value types, by type id (8: string and 9: array are variable).
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def tensors(path: str) -> list[tuple[str, list[int], int]]:
    """(name, dims with the row length first, ggml type) of every tensor in a GGUF file."""
    return [(name, dims, kind) for name, dims, kind, _ in tensors_at(path)]


def tensors_at(path: str) -> list[tuple[str, list[int], int, int]]:
    """tensors(), each with the file offset of its data."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", m, 0)
        if magic != b"GGUF" or version < 2:
            sys.exit(f"{path}: not a GGUF v2/v3 file")
        pos = 24

        def u64() -> int:
            nonlocal pos
            pos += 8
            return struct.unpack_from("<Q", m, pos - 8)[0]

        def skip(kind: int) -> None:
            nonlocal pos
            if kind in SCALAR:
                pos += SCALAR[kind]
            elif kind == 8:
                n = u64()                     # (not `pos += u64()`: that adds to pos as it was before the call)
                pos += n
            elif kind == 9:
                inner, count = struct.unpack_from("<IQ", m, pos)
                pos += 12
                if inner in SCALAR:
                    pos += SCALAR[inner] * count
                else:
                    for _ in range(count):
                        skip(inner)
            else:
                sys.exit(f"{path}: unknown metadata type {kind}")

        alignment = 32
        for _ in range(n_kv):
            n = u64()                         # key
            key = m[pos:pos + n]
            pos += n + 4
            kind = struct.unpack_from("<I", m, pos - 4)[0]
            if key == b"general.alignment" and kind == 4:
                alignment = struct.unpack_from("<I", m, pos)[0]
            skip(kind)
        out = []
        for _ in range(n_tensors):
            n = u64()
            name = m[pos:pos + n].decode()
            pos += n
            n_dims = struct.unpack_from("<I", m, pos)[0]
            dims = list(struct.unpack_from(f"<{n_dims}Q", m, pos + 4))
            kind, offset = struct.unpack_from("<IQ", m, pos + 4 + 8 * n_dims)
            pos += 4 + 8 * n_dims + 4 + 8     # dims, type, offset
            out.append((name, dims, kind, offset))
        data = (pos + alignment - 1) // alignment * alignment
        return [(name, dims, kind, data + offset) for name, dims, kind, offset in out]


def decode_bytes(path: str) -> tuple[int, str]:
    total, layers, embd, output = 0, 0, None, None
    for name, dims, kind in tensors(path):
        if len(dims) != 2:
            continue
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        row = dims[0] // block * size
        typename = GGMLQuantizationType(kind).name
        if name == "token_embd.weight":
            embd = (row, row * dims[1], typename)
        elif name == "output.weight":
            output = row * dims[1]
            total += output
        else:
            layers += row * dims[1]
            total += row * dims[1]
    detail = f"layers {layers / 1e6:.1f} MB"
    if embd is not None:
        row, whole, typename = embd
        total += row
        detail += f", embedding row {row} B ({typename})"
        if output is None:
            total += whole
            detail += f", tied output {whole / 1e6:.1f} MB ({typename})"
        else:
            detail += f", output {output / 1e6:.1f} MB"
    return total, detail


def streamed(path: str) -> list[tuple[int, int, str, str]]:
    """(offset, bytes, name, ggml type name) of every 2-D tensor a decode step streams whole, in file order; the token
    embedding only when it is also the output (tied), then last. The embedding's one row is left out (a lookup, not a
    stream)."""
    out, embd, tied = [], None, True
    for name, dims, kind, offset in tensors_at(path):
        if len(dims) != 2:
            continue
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        whole = dims[0] // block * size * dims[1]
        typename = GGMLQuantizationType(kind).name
        if name == "token_embd.weight":
            embd = (offset, whole, name, typename)
            continue
        tied = tied and name != "output.weight"
        out.append((offset, whole, name, typename))
    if tied and embd is not None:
        out.append(embd)
    return out


def segments(path: str) -> list[tuple[int, int, str]]:
    """streamed() without the types: what bench/engine/step_probe.c reads."""
    return [(offset, size, name) for offset, size, name, _ in streamed(path)]


def bytes_by_type(path: str) -> dict[str, int]:
    """Bytes a decode step streams, per ggml type name (F32, Q4_1, Q8_0, ...)."""
    out: dict[str, int] = {}
    for _, size, _, typename in streamed(path):
        out[typename] = out.get(typename, 0) + size
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--segments":
        for offset, size, name in segments(sys.argv[2]):
            print(offset, size, name)
        return
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        name, path = arg.split("=", 1)
        total, detail = decode_bytes(path)
        print(f"{name}\t{total}\t{detail}")


if __name__ == "__main__":
    main()
