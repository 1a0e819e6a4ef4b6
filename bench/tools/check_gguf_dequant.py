#!/usr/bin/env python3
"""Dev-time check: our ra_dequantize_row against gguf-py's numpy dequantization on real GGUF tensors.

Usage: bench/tools/check_gguf_dequant.py [model.gguf ...]   (default: $RUNANYWHERE_TESTDATA/models/*.gguf)
Builds a shared object from Sources/CKernels/*.c with gcc and calls it through ctypes.
Needs `pip install gguf` (dev only; nothing in the package or its tests uses Python).
"""
import ctypes, glob, os, subprocess, sys, tempfile
import numpy as np
import gguf
from gguf.quants import dequantize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "Sources", "CKernels")

def build():
    out = os.path.join(tempfile.gettempdir(), "libckernels_check.so")
    srcs = sorted(glob.glob(os.path.join(SRC, "*.c")))
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-I", os.path.join(SRC, "include"), "-o", out] + srcs, check=True)
    lib = ctypes.CDLL(out)
    lib.ra_dequantize_row.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.ra_row_bytes.restype = ctypes.c_int64
    lib.ra_row_bytes.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.ra_type_supported.argtypes = [ctypes.c_int]
    return lib

def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(os.environ.get("RUNANYWHERE_TESTDATA", "/work/shared/testdata"), "models", "*.gguf")))
    lib = build()
    checked, failed = {}, 0
    for path in files:
        r = gguf.GGUFReader(path)
        for t in r.tensors:
            ty = int(t.tensor_type)
            if not lib.ra_type_supported(ty):
                continue
            raw = np.ascontiguousarray(t.data).view(np.uint8).reshape(-1)
            ref = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1)
            n = ref.size
            assert lib.ra_row_bytes(ty, n) == raw.size, (t.name, lib.ra_row_bytes(ty, n), raw.size)
            ours = np.empty(n, dtype=np.float32)
            lib.ra_dequantize_row(ty, raw.ctypes.data, ours.ctypes.data, n)
            same = np.array_equal(ours.view(np.uint32), ref.view(np.uint32))
            close = np.allclose(ours, ref, rtol=1e-6, atol=1e-7)
            name = t.tensor_type.name
            ok = checked.setdefault(name, [0, 0, 0.0])
            ok[0] += 1
            ok[1] += int(same)
            ok[2] = max(ok[2], float(np.max(np.abs(ours - ref))) if n else 0.0)
            if not close:
                failed += 1
                bad = np.argmax(np.abs(ours - ref))
                print(f"MISMATCH {os.path.basename(path)} {t.name} {name}: idx {bad} ours {ours[bad]} ref {ref[bad]}")
    for name, (n, same, err) in sorted(checked.items()):
        print(f"{name:6s} tensors {n:3d}  bit-identical {same:3d}  max|diff| {err:.3g}")
    print("FAILED" if failed else "OK")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
