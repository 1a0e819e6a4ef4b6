#!/usr/bin/env python3
"""llama.cpp side of the time-to-first-token benchmark (bench/engine/ttft.sh), through llama-cpp-python's low-level API.

  ttft_llama.py MODEL.gguf PROMPTS.json [--threads 2] [--ctx 2048] [--batch 256] [--tg 64]

PROMPTS.json is ttft-bench's report: its `prompts` (the chat-templated text and our tokens of each message) are
fed to llama.cpp as they are, so both engines read the same tokens. Measures, in one process: load (model +
context), cold (the first prompt: llama_decode of its tokens into an empty cache + argmax of the last row's logits),
then for each later prompt with the cache cleared first (nothing reused): llama_tokenize of the text (checked
against our tokens), llama_decode of the tokens, and the argmax (numpy) - the engine-level parts of a TTFT;
and decode speed: `tg` single-token llama_decode + argmax steps after the decode prompt. Prints one JSON object.
"""
import argparse
import ctypes
import json
import sys
import time

import numpy as np
import llama_cpp as L


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("prompts")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=2048)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--tg", type=int, default=64)
    a = p.parse_args()
    prompts = json.load(open(a.prompts))["prompts"]

    L.llama_backend_init()
    global _QUIET   # the callback must outlive every call into llama.cpp
    _QUIET = L.llama_log_callback(lambda level, text, data: None)
    L.llama_log_set(_QUIET, ctypes.c_void_p(0))
    t0 = time.perf_counter()
    model = L.llama_model_load_from_file(a.model.encode(), L.llama_model_default_params())
    if not model:
        sys.exit(f"cannot load {a.model}")
    cp = L.llama_context_default_params()
    cp.n_ctx = a.ctx
    cp.n_batch = cp.n_ubatch = a.batch
    cp.n_threads = cp.n_threads_batch = a.threads
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        sys.exit("cannot create a context")
    load_s = time.perf_counter() - t0
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)
    batch = L.llama_batch_init(a.batch, 0, 1)
    memory = L.llama_get_memory(ctx)

    def decode(tokens, pos0):
        for s in range(0, len(tokens), a.batch):
            part = tokens[s:s + a.batch]
            batch.n_tokens = len(part)
            for i, t in enumerate(part):
                batch.token[i] = t
                batch.pos[i] = pos0 + s + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = s + i == len(tokens) - 1
            if L.llama_decode(ctx, batch) != 0:
                sys.exit("llama_decode failed")

    def argmax() -> int:
        logits = np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, -1), shape=(n_vocab,))
        return int(np.argmax(logits))

    def tokenize(text: str):
        raw = text.encode()
        out = (L.llama_token * (len(raw) + 8))()
        n = L.llama_tokenize(vocab, raw, len(raw), out, len(out), False, True)
        return list(out[:n])

    def first_token(tokens):
        L.llama_memory_clear(memory, True)
        start = time.perf_counter()
        decode(tokens, 0)
        mid = time.perf_counter()
        token = argmax()
        return mid - start, time.perf_counter() - mid, token

    prefill, sample = first_token(prompts[0]["tokens"])[:2]
    cold = {"prefill": prefill, "sample": sample, "promptTokens": len(prompts[0]["tokens"])}
    warm, same_tokens = [], 0
    for pr in prompts[1:]:
        start = time.perf_counter()
        ids = tokenize(pr["text"])
        tok_s = time.perf_counter() - start
        same_tokens += ids == pr["tokens"]
        prefill, sample, _ = first_token(pr["tokens"])
        warm.append({"tokenize": tok_s, "prefill": prefill, "sample": sample, "promptTokens": len(pr["tokens"])})

    # Decode: the prompt of the last message, then tg greedy steps.
    tokens = prompts[-1]["tokens"]
    _, _, token = first_token(tokens)
    start = time.perf_counter()
    for i in range(a.tg - 1):
        decode([token], len(tokens) + i)
        token = argmax()
    tg = (a.tg - 1) / (time.perf_counter() - start)
    print(json.dumps({"loadSeconds": load_s, "cold": cold, "warm": warm, "tokenizerAgrees": same_tokens,
                      "prompts": len(prompts) - 1, "decode": tg}))
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)


if __name__ == "__main__":
    main()
