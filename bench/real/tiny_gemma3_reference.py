#!/usr/bin/env python3
"""llama.cpp reference outputs for the tiny random-weight Gemma 3 models of the tests.

  bench/.venv/bin/python bench/real/tiny_gemma3_reference.py [--real-check PATH]

The models are written by our own writer (`real-check write-tiny-gemma3`, TinyGemma3 in
RunAnywhereTestSupport), so the test regenerates exactly these bytes: the file records each model's FNV-1a
fingerprint and the test refuses to compare against a reference made from other bytes. llama.cpp
(llama-cpp-python in bench/.venv) decodes a few token-id prompts longer than the 5-token sliding window; the
output, Tests/GGUFTests/Fixtures/tiny-gemma3-reference.json, holds the top entries of every prompt position,
the top-20 at the last one and 10 greedy tokens with llama.cpp's margins.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference as R  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "Tests", "GGUFTests", "Fixtures", "tiny-gemma3-reference.json")

PROMPTS = [
    {"name": "ids-12", "ids": [1, 300, 45, 271, 9, 488, 130, 77, 402, 260, 18, 333]},
    {"name": "ids-17", "ids": [1] + [(i * 37 + 11) % 509 + 3 for i in range(16)]},
    {"name": "ids-24", "ids": [1] + [(i * 101 + 7) % 509 + 3 for i in range(23)]},
]


def fnv1a(path: str) -> str:
    h = 0xCBF29CE484222325
    with open(path, "rb") as f:
        data = f.read()
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(h, "x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real-check", help="path of the built real-check executable (default: swift build it)")
    a = ap.parse_args()
    exe = a.real_check
    if not exe:
        subprocess.run(["swift", "build", "--product", "real-check"], cwd=ROOT, check=True)
        bin_dir = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, check=True,
                                 capture_output=True, text=True).stdout.strip()
        exe = os.path.join(bin_dir, "real-check")
    models = []
    with tempfile.TemporaryDirectory() as d:
        lines = subprocess.run([exe, "write-tiny-gemma3", d], check=True, capture_output=True, text=True).stdout.split("\n")
        for line in filter(None, lines):
            name, path, fingerprint = line.split()
            if fnv1a(path) != fingerprint:
                sys.exit(f"{name}: fingerprint mismatch between Swift and Python")
            m = R.Model(path, 256, 2)
            prompts = [R.run_prompt(m, p, 10, 20, True) for p in PROMPTS]
            models.append({"name": name, "fnv1a": fingerprint, "bytes": os.path.getsize(path), "prompts": prompts})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"generator": "bench/real/tiny_gemma3_reference.py", "llama_cpp_python": R.L.__version__,
                   "models": models}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
