#!/usr/bin/env python3
"""Reference outputs of llama.cpp's multimodal library (mtmd) for a SmolVLM pair.

For every image (binary PPM) it records how mtmd lays out the prompt (text tokens and image chunks), the image
embeddings of every chunk (mtmd_encode_chunk / mtmd_get_output_embd) and, for every prompt, the greedy tokens
with the margin between the best and second-best logit at each step (to find near-ties).

    mtmd_reference.py --text T.gguf --mmproj M.gguf --images a.ppm b.ppm --prompts "What is this?" \
                      --out refs.json            # embeddings go to refs.bin (float32, little-endian)

Attention runs without flash attention by default (--flash to turn it on): the non-flash path computes in F32,
which is what the native engine does; flash attention accumulates V in F16 on the CPU.
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np
import llama_cpp
from llama_cpp import mtmd_cpp as M

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_images import read_ppm, write_ppm  # noqa: E402

PROMPT = "<|im_start|>User:{marker}{prompt}<end_of_utterance>\nAssistant:"


def quiet_logs():
    cb = llama_cpp.llama_log_callback(lambda level, text, data: None)
    llama_cpp.llama_log_set(cb, None)
    M.mtmd_helper_log_set(cb, None)
    return cb


class Reference:
    def __init__(self, text, mmproj, threads, flash, n_ctx=4096):
        llama_cpp.llama_backend_init()
        mp = llama_cpp.llama_model_default_params()
        self.model = llama_cpp.llama_model_load_from_file(text.encode(), mp)
        assert self.model, "cannot load " + text
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = 512
        cp.n_ubatch = 512
        cp.n_threads = threads
        cp.n_threads_batch = threads
        cp.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.ctx = llama_cpp.llama_init_from_model(self.model, cp)
        assert self.ctx
        p = M.mtmd_context_params_default()
        p.use_gpu = False
        p.n_threads = threads
        p.print_timings = False
        p.warmup = False
        p.flash_attn_type = 1 if flash else 0
        self.mtmd = M.mtmd_init_from_file(mmproj.encode(), self.model, p)
        assert self.mtmd, "cannot load " + mmproj
        self.n_embd = llama_cpp.llama_model_n_embd(self.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.marker = M.mtmd_default_marker().decode()

    def load_image(self, path):
        """(w, h, rgb bytes): PPM read here, PNG/JPEG decoded by mtmd itself (stb_image), as llama.cpp's tools do."""
        if path.endswith(".ppm"):
            return read_ppm(path)
        bmp = M.mtmd_helper_bitmap_init_from_file(self.mtmd, path.encode(), False)
        assert bmp, "mtmd cannot read " + path
        w, h = M.mtmd_bitmap_get_nx(bmp), M.mtmd_bitmap_get_ny(bmp)
        rgb = ctypes.string_at(M.mtmd_bitmap_get_data(bmp), M.mtmd_bitmap_get_n_bytes(bmp))
        M.mtmd_bitmap_free(bmp)
        return w, h, rgb

    def tokenize(self, prompt, images):
        """images: list of (w, h, rgb bytes). Returns the chunk list (mtmd owns it)."""
        bitmaps = []
        for w, h, rgb in images:
            buf = (ctypes.c_uint8 * len(rgb)).from_buffer_copy(rgb)
            bitmaps.append(M.mtmd_bitmap_init(w, h, buf))
        arr = (M.mtmd_bitmap_p_ctypes * max(1, len(bitmaps)))(*bitmaps)
        text = PROMPT.format(marker=self.marker * len(images), prompt=prompt).encode()
        t = M.mtmd_input_text(text, len(text), False, True)
        chunks = M.mtmd_input_chunks_init()
        rc = M.mtmd_tokenize(self.mtmd, chunks, ctypes.byref(t), arr, len(bitmaps))
        assert rc == 0, f"mtmd_tokenize failed: {rc}"
        for b in bitmaps:
            M.mtmd_bitmap_free(b)
        return chunks

    def layout(self, chunks, embeddings):
        """The chunk list as JSON; image chunks are encoded and their embeddings appended to `embeddings`."""
        out = []
        seconds = 0.0
        for i in range(M.mtmd_input_chunks_size(chunks)):
            c = M.mtmd_input_chunks_get(chunks, i)
            kind = M.mtmd_input_chunk_get_type(c)
            if kind == M.MTMD_INPUT_CHUNK_TYPE_TEXT:
                n = ctypes.c_size_t()
                p = M.mtmd_input_chunk_get_tokens_text(c, ctypes.byref(n))
                out.append({"type": "text", "tokens": [p[j] for j in range(n.value)]})
            else:
                n_tok = M.mtmd_input_chunk_get_n_tokens(c)
                t0 = time.perf_counter()
                assert M.mtmd_encode_chunk(self.mtmd, c) == 0
                seconds += time.perf_counter() - t0
                e = M.mtmd_get_output_embd(self.mtmd)
                arr = np.ctypeslib.as_array(e, shape=(n_tok * self.n_embd,)).copy()
                out.append({"type": "image", "tokens": n_tok, "offset": sum(len(x) for x in embeddings)})
                embeddings.append(arr)
        return out, seconds

    def greedy(self, chunks, max_tokens):
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.ctx), True)
        new_past = llama_cpp.llama_pos(0)
        t0 = time.perf_counter()
        rc = M.mtmd_helper_eval_chunks(self.mtmd, self.ctx, chunks, 0, 0, 512, True, ctypes.byref(new_past))
        assert rc == 0, f"eval_chunks failed: {rc}"
        tokens, margins = [], []
        ttft = None
        pos = new_past.value
        for _ in range(max_tokens):
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self.ctx, -1), shape=(self.n_vocab,))
            order = np.argsort(-logits, kind="stable")
            tok = int(order[0])
            if ttft is None:
                ttft = time.perf_counter() - t0
            margins.append(float(logits[order[0]] - logits[order[1]]))
            if llama_cpp.llama_vocab_is_eog(self.vocab, tok):  # EOS, <|endoftext|>, <|im_end|> ...
                break
            tokens.append(tok)
            arr = (llama_cpp.llama_token * 1)(tok)
            assert llama_cpp.llama_decode(self.ctx, llama_cpp.llama_batch_get_one(arr, 1)) == 0
            pos += 1
        text = b"".join(self.piece(t) for t in tokens).decode("utf-8", "replace")
        return {"tokens": tokens, "margins": margins, "text": text, "n_prompt": new_past.value, "ttft": ttft}

    def piece(self, tok):
        buf = ctypes.create_string_buffer(64)
        n = llama_cpp.llama_token_to_piece(self.vocab, tok, buf, 64, 0, False)
        return buf.raw[:max(0, n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--text", required=True)
    ap.add_argument("--mmproj", required=True)
    ap.add_argument("--images", nargs="+", required=True)
    ap.add_argument("--prompts", nargs="+", default=["What is in this picture?", "Describe the colors.", "Is there text?"])
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--flash", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    keep = quiet_logs()
    ref = Reference(a.text, a.mmproj, a.threads, a.flash)
    embeddings = []
    result = {"text": os.path.basename(a.text), "mmproj": os.path.basename(a.mmproj), "flash_attention": a.flash,
              "prompt_format": PROMPT.format(marker="<image>", prompt="{prompt}"), "images": [], "text_only": []}
    for path in a.images:
        w, h, rgb = ref.load_image(path)
        if not path.endswith(".ppm"):  # the pixels stb_image decoded, to tell decoder differences from engine ones
            write_ppm(path + ".stb.ppm", np.frombuffer(rgb, np.uint8).reshape(h, w, 3))
        chunks = ref.tokenize(a.prompts[0], [(w, h, rgb)])
        layout, seconds = ref.layout(chunks, embeddings)
        entry = {"file": os.path.basename(path), "width": w, "height": h, "layout": layout,
                 "encode_seconds": seconds, "generations": []}
        M.mtmd_input_chunks_free(chunks)
        for prompt in a.prompts:
            chunks = ref.tokenize(prompt, [(w, h, rgb)])
            g = ref.greedy(chunks, a.max_tokens)
            g["prompt"] = prompt
            entry["generations"].append(g)
            M.mtmd_input_chunks_free(chunks)
        result["images"].append(entry)
    for prompt in a.prompts:
        chunks = ref.tokenize(prompt, [])
        g = ref.greedy(chunks, a.max_tokens)
        g["prompt"] = prompt
        result["text_only"].append(g)
        M.mtmd_input_chunks_free(chunks)
    flat = np.concatenate(embeddings).astype("<f4") if embeddings else np.zeros(0, "<f4")
    flat.tofile(os.path.splitext(a.out)[0] + ".bin")
    result["n_embd"] = ref.n_embd
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    del keep


if __name__ == "__main__":
    main()
