#!/usr/bin/env python3
"""llama.cpp mtmd's side of bench/vlm/run.sh: image encoding time (every chunk of one image, mtmd_encode_chunk) and
time to first token (tokenize + encode + decode the prompt + first logits) for an image file decoded by mtmd itself.

    bench_mtmd.py --text T.gguf --mmproj M.gguf --image photo.png --threads 2 --reps 3
"""
import argparse
import ctypes
import json
import os
import sys
import time

from llama_cpp import mtmd_cpp as M

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtmd_reference import Reference, quiet_logs, PROMPT  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", required=True)
    ap.add_argument("--mmproj", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--flash", action="store_true")
    a = ap.parse_args()
    keep = quiet_logs()
    ref = Reference(a.text, a.mmproj, a.threads, a.flash)
    encodes, ttfts = [], []
    n_prompt = 0
    for _ in range(a.reps):
        bmp = M.mtmd_helper_bitmap_init_from_file(ref.mtmd, a.image.encode(), False)
        text = PROMPT.format(marker=ref.marker, prompt="What is in this picture?").encode()
        t = M.mtmd_input_text(text, len(text), False, True)
        chunks = M.mtmd_input_chunks_init()
        arr = (M.mtmd_bitmap_p_ctypes * 1)(bmp)
        assert M.mtmd_tokenize(ref.mtmd, chunks, ctypes.byref(t), arr, 1) == 0
        seconds = 0.0
        for i in range(M.mtmd_input_chunks_size(chunks)):
            c = M.mtmd_input_chunks_get(chunks, i)
            if M.mtmd_input_chunk_get_type(c) != M.MTMD_INPUT_CHUNK_TYPE_TEXT:
                s = time.perf_counter()
                assert M.mtmd_encode_chunk(ref.mtmd, c) == 0
                seconds += time.perf_counter() - s
        encodes.append(seconds)
        g = ref.greedy(chunks, 1)  # time to first token: encode every chunk again, decode the prompt, first logits
        ttfts.append(g["ttft"])
        n_prompt = g["n_prompt"]
        M.mtmd_input_chunks_free(chunks)
        M.mtmd_bitmap_free(bmp)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print(json.dumps({"threads": a.threads, "prompt_tokens": n_prompt, "encode_s": round(med(encodes), 4),
                      "ttft_s": round(med(ttfts), 4), "flash_attention": a.flash}))
    del keep


if __name__ == "__main__":
    main()
