#!/usr/bin/env python3
"""llama.cpp's outputs for a list of prompts, through llama-cpp-python's low-level API (bench/.venv).

  llama_reference.py MODEL.gguf PROMPTS.json OUT.json [--n-predict 32] [--top 20] [--threads 2]

PROMPTS.json is what `real-check render` writes: a list of {name, text, add_special, parse_special, [expect]}
(or {name, ids} to give token ids directly). For each prompt:
  * ids: llama_tokenize(text, add_special, parse_special), unless given;
  * the prompt is decoded in one llama_decode call; top: the `top` largest logits at its last position as
    [id, logit] (ties: lower id first); with --all-positions also the top entries of every position;
  * greedy: n_predict tokens, each the argmax (ties: lowest id) fed back in its own llama_decode call, never
    stopping at end-of-generation; margins: llama.cpp's top1 - top2 logit at each of those steps.
Context settings: F16 K/V cache, flash attention off (ggml's plain attention, which the engine follows), one
sequence, batch = the whole prompt.
"""
import argparse
import ctypes
import json
import sys

import numpy as np
import llama_cpp as L

_log = L.llama_log_callback(lambda level, text, data: None)


def tokenize(vocab, text: str, add_special: bool, parse_special: bool) -> list:
    raw = text.encode("utf-8")
    cap = len(raw) + 16
    buf = (L.llama_token * cap)()
    n = L.llama_tokenize(vocab, raw, len(raw), buf, cap, add_special, parse_special)
    if n < 0:
        cap = -n
        buf = (L.llama_token * cap)()
        n = L.llama_tokenize(vocab, raw, len(raw), buf, cap, add_special, parse_special)
    return [int(buf[i]) for i in range(n)]


class Model:
    def __init__(self, path: str, n_ctx: int, threads: int):
        L.llama_backend_init()
        L.llama_log_set(_log, ctypes.c_void_p(0))
        self.model = L.llama_model_load_from_file(path.encode(), L.llama_model_default_params())
        if not self.model:
            sys.exit(f"llama.cpp cannot load {path}")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        cp = L.llama_context_default_params()
        cp.n_ctx = cp.n_batch = cp.n_ubatch = n_ctx
        cp.n_seq_max = 1
        cp.n_threads = cp.n_threads_batch = threads
        cp.type_k = cp.type_v = 1          # GGML_TYPE_F16
        cp.flash_attn_type = 0             # LLAMA_FLASH_ATTN_TYPE_DISABLED
        cp.no_perf = True
        self.ctx = L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            sys.exit("llama.cpp cannot create a context")
        self.n_ctx = n_ctx
        self.batch = L.llama_batch_init(n_ctx, 0, 1)

    def clear(self) -> None:
        L.llama_memory_clear(L.llama_get_memory(self.ctx), True)

    def decode(self, tokens: list, pos0: int, all_logits: bool) -> np.ndarray:
        b = self.batch
        b.n_tokens = len(tokens)
        for i, t in enumerate(tokens):
            b.token[i] = t
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = all_logits or i == len(tokens) - 1
        if L.llama_decode(self.ctx, b) != 0:
            sys.exit("llama_decode failed")
        rows = len(tokens) if all_logits else 1
        ptr = L.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(rows * self.n_vocab,)).reshape(rows, self.n_vocab).copy()


def top_entries(row: np.ndarray, k: int) -> list:
    order = np.lexsort((np.arange(len(row)), -row))[:k]
    return [[int(i), float(row[i])] for i in order]


def margin(row: np.ndarray) -> float:
    two = np.partition(row, -2)[-2:]
    return float(two[1] - two[0])


def run_prompt(m: Model, p: dict, n_predict: int, top: int, all_positions: bool) -> dict:
    ids = p["ids"] if "ids" in p else tokenize(m.vocab, p["text"], p.get("add_special", True), p.get("parse_special", False))
    if len(ids) + n_predict > m.n_ctx:
        sys.exit(f"prompt {p.get('name')} is too long for n_ctx {m.n_ctx}")
    m.clear()
    logits = m.decode(ids, 0, all_positions)
    out = dict(p)
    out["ids"] = ids
    out["top"] = top_entries(logits[-1], top)
    if all_positions:
        out["positions"] = [{"argmax": int(np.argmax(r)), "margin": margin(r), "top": top_entries(r, 8)} for r in logits]
    row = logits[-1]
    greedy, margins = [], []
    for step in range(n_predict):
        t = int(np.argmax(row))
        greedy.append(t)
        margins.append(margin(row))
        if step + 1 < n_predict:
            row = m.decode([t], len(ids) + step, False)[0]
    out["greedy"] = greedy
    out["margins"] = margins
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("prompts")
    ap.add_argument("out")
    ap.add_argument("--n-predict", type=int, default=32)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--all-positions", action="store_true")
    a = ap.parse_args()
    with open(a.prompts, encoding="utf-8") as f:
        prompts = json.load(f)
    m = Model(a.model, 1024, a.threads)
    results = [run_prompt(m, p, a.n_predict, a.top, a.all_positions) for p in prompts]
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"model": a.model.rsplit("/", 1)[-1], "n_vocab": m.n_vocab, "llama_cpp_python": L.__version__,
                   "prompts": results}, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
