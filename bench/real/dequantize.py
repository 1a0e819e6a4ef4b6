#!/usr/bin/env python3
"""Copy a GGUF with every tensor dequantized to F32 (gguf-py's dequantize), for the exactness cross-check.

  dequantize.py IN.gguf OUT.gguf

With F32 weights neither llama.cpp nor the engine quantizes activations (F32 x F32 products), so what remains
between them is summation order and the F16 K/V cache: differences far below those of the quantized file. A
difference in the quantized run that vanishes here is activation-quantization noise, not a modelling error.
"""
import sys

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType, GGUFWriter


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: dequantize.py IN.gguf OUT.gguf")
    src, dst = sys.argv[1], sys.argv[2]
    reader = GGUFReader(src)
    writer = GGUFWriter(dst + ".tmp", arch=reader.fields["general.architecture"].contents())
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        if name == "general.file_type":
            writer.add_file_type(gguf.LlamaFileType.ALL_F32)
            continue
        kind = field.types[0]
        if kind == GGUFValueType.ARRAY:
            writer.add_key_value(name, field.contents(), kind, sub_type=field.types[1])
        else:
            writer.add_key_value(name, field.contents(), kind)
    for t in reader.tensors:
        rows = tuple(int(x) for x in reversed(list(t.shape)))
        values = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape(rows)
        writer.add_tensor(t.name, values)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    import os
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
