#!/usr/bin/env python3
"""Dev-time check against gguf-py (the reference Python implementation of the GGUF formats):
1. ra_dequantize_row against gguf-py's numpy dequantization on every tensor of real GGUF files;
2. ra_quantize_row (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, BF16, F16) against gguf-py's quantize on random data;
3. ra_matmul_rows on each 2-D tensor type of the files against numpy's float product of the decoded
   weights (the difference left is the activation quantization's).

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
    lib.ra_quantize_row.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    return lib

def check_matmul(lib, files):
    lib.ra_vec_dot_type.argtypes = [ctypes.c_int]
    lib.ra_matmul_rows.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                   ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    seen, failed = set(), 0
    rng = np.random.default_rng(2)
    for path in files:
        for t in gguf.GGUFReader(path).tensors:
            ty = int(t.tensor_type)
            if len(t.shape) != 2 or ty in seen or not lib.ra_type_supported(ty) or ty == 0:
                continue
            seen.add(ty)
            n, rows = int(t.shape[0]), int(t.shape[1])
            w = np.ascontiguousarray(t.data).view(np.uint8).reshape(-1)
            wf = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(rows, n)
            nb = 3
            x = rng.standard_normal((nb, n)).astype(np.float32)
            xt = lib.ra_vec_dot_type(ty)
            xr = lib.ra_row_bytes(xt, n)
            xq = np.zeros(nb * xr, dtype=np.uint8)
            for b in range(nb):
                lib.ra_quantize_row(xt, x[b].ctypes.data, xq[b * xr:].ctypes.data, n)
            out = np.zeros((nb, rows), dtype=np.float32)
            lib.ra_matmul_rows(ty, w.ctypes.data, n, xq.ctypes.data, nb, out.ctypes.data, rows, 0, rows)
            ref = x @ wf.T
            rel = float(np.max(np.abs(out - ref)) / np.max(np.abs(ref)))
            ok = rel < (2e-3 if xt in (1, 30) else 3e-2)
            failed += 0 if ok else 1
            print(f"matmul {t.tensor_type.name:5s} {t.name} ({rows}x{n}, nb={nb}): max|diff|/max|ref| = {rel:.2e} {'ok' if ok else 'TOO LARGE'}")
    return failed

def check_quantize(lib):
    """Blocks our quantizer writes differently from gguf-py's (ties may round apart: Q8_0 follows
    ggml's x86 code, multiplier 127/amax, where gguf-py divides by amax/127)."""
    from gguf import GGMLQuantizationType as T
    from gguf.quants import quantize
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(32 * 4096) * rng.choice([1e-3, 1, 30], 32 * 4096)).astype(np.float32)
    failed = 0
    for t in (T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.BF16, T.F16):
        ref = quantize(x.reshape(1, -1), t).reshape(-1).view(np.uint8)
        ours = np.zeros(lib.ra_row_bytes(int(t), x.size), dtype=np.uint8)
        lib.ra_quantize_row(int(t), x.ctypes.data, ours.ctypes.data, x.size)
        bs = gguf.GGML_QUANT_SIZES[t][1]
        diff = int((ours.reshape(-1, bs) != ref.reshape(-1, bs)).any(axis=1).sum())
        print(f"quantize {t.name:5s} blocks differing from gguf-py: {diff} of {x.size // gguf.GGML_QUANT_SIZES[t][0]}")
        failed += diff
    return failed

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
    failed += check_quantize(lib)
    failed += check_matmul(lib, files)
    print("FAILED" if failed else "OK")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
