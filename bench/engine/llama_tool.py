#!/usr/bin/env python3
"""llama.cpp side of the engine benchmark, through llama-cpp-python's low-level API.

  llama_tool.py quantize IN.gguf OUT.gguf q8_0|q4_k_m|q5_k_m|q4_0|q4_1|q5_0|q5_1|q3_k_m|q2_k|iq4_xs|iq4_nl [--allow-requantize]
  llama_tool.py bench MODEL.gguf --threads N [--pp 128] [--tg 128] [--ctx 256] [--depth 0]

bench (one process per measurement, like engine-bench --report): load time (model + context), RSS after
load, a warm-up batch, then pp = one llama_decode of `pp` tokens into an empty cache and tg = `tg`
single-token llama_decode calls (greedy: argmax of the logits is fed back) after `depth` random tokens were
put in the cache (llama_decode in batches of `pp`; 0: an empty cache), and peak RSS; printed as one RESULT line. No numpy import, so the interpreter adds little to the RSS.
With depth > 0, pp_depth is one more llama_decode of `pp` tokens at positions depth ... depth + pp - 1 (a new message
after a long chat), removed from the cache again before the tg steps; with depth 0 it is pp.
"""
import argparse
import ctypes
import random
import sys
import time

import llama_cpp as L

FTYPES = {"q8_0": 7, "q4_k_m": 15, "q5_k_m": 17,   # llama_ftype: MOSTLY_Q8_0, MOSTLY_Q4_K_M, MOSTLY_Q5_K_M,
          "q4_0": 2, "q4_1": 3, "q5_0": 8, "q5_1": 9,  # MOSTLY_Q4_0, _Q4_1, _Q5_0, _Q5_1,
          "q3_k_m": 12, "q2_k": 10, "iq4_xs": 30, "iq4_nl": 25}   # MOSTLY_Q3_K_M, MOSTLY_Q2_K, MOSTLY_IQ4_XS, MOSTLY_IQ4_NL


def status_mib(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return -1.0


def quantize(a) -> None:
    params = L.llama_model_quantize_default_params()
    params.ftype = FTYPES[a.type]
    params.nthread = 2
    params.allow_requantize = a.allow_requantize
    rc = L.llama_model_quantize(a.inp.encode(), a.out.encode(), ctypes.byref(params))
    if rc != 0:
        sys.exit(f"llama_model_quantize failed ({rc})")


def clear_cache(ctx) -> None:
    if hasattr(L, "llama_memory_clear"):
        L.llama_memory_clear(L.llama_get_memory(ctx), True)
    else:
        L.llama_kv_self_clear(ctx)


def bench(a) -> None:
    L.llama_backend_init()
    global _QUIET   # the callback must outlive every call into llama.cpp
    _QUIET = L.llama_log_callback(lambda level, text, data: None)
    L.llama_log_set(_QUIET, ctypes.c_void_p(0))
    t0 = time.perf_counter()
    mp = L.llama_model_default_params()
    model = L.llama_model_load_from_file(a.model.encode(), mp)
    if not model:
        sys.exit(f"cannot load {a.model}")
    cp = L.llama_context_default_params()
    cp.n_ctx = max(a.ctx, a.pp, a.depth + max(a.tg, a.pp) + 1)
    cp.n_batch = cp.n_ubatch = a.pp
    cp.n_threads = cp.n_threads_batch = a.threads
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        sys.exit("cannot create a context")
    load_s = time.perf_counter() - t0
    rss_load = status_mib("VmRSS")
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    batch = L.llama_batch_init(a.pp, 0, 1)

    def decode(tokens, pos0):
        batch.n_tokens = len(tokens)
        for i, t in enumerate(tokens):
            batch.token[i] = t
            batch.pos[i] = pos0 + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = i == len(tokens) - 1
        if L.llama_decode(ctx, batch) != 0:
            sys.exit("llama_decode failed")

    rnd = random.Random()
    decode([rnd.randrange(vocab) for _ in range(a.pp)], 0)   # warm-up
    clear_cache(ctx)
    tokens = [rnd.randrange(vocab) for _ in range(a.pp)]
    start = time.perf_counter()
    decode(tokens, 0)
    pp = a.pp / (time.perf_counter() - start)
    clear_cache(ctx)
    for p0 in range(0, a.depth, a.pp):     # tokens already in the cache before the timed steps
        decode([rnd.randrange(vocab) for _ in range(min(a.pp, a.depth - p0))], p0)
    pp_depth = pp
    if a.depth > 0:
        tokens = [rnd.randrange(vocab) for _ in range(a.pp)]
        start = time.perf_counter()
        decode(tokens, a.depth)
        pp_depth = a.pp / (time.perf_counter() - start)
        if not L.llama_memory_seq_rm(L.llama_get_memory(ctx), 0, a.depth, -1):
            sys.exit("llama_memory_seq_rm failed")
    token = 1
    start = time.perf_counter()
    for i in range(a.tg):
        decode([token], a.depth + i)
        logits = L.llama_get_logits_ith(ctx, -1)
        best, bv = 0, logits[0]
        # argmax in C speed is not available without numpy; a Python loop over the vocabulary would
        # dominate, so take the argmax over a fixed sample of ids (the token only feeds the next step).
        for j in range(1, 64):
            if logits[j] > bv:
                best, bv = j, logits[j]
        token = best
    tg = a.tg / (time.perf_counter() - start)
    print(f"RESULT load_s={load_s:.4f} pp={pp:.3f} tg={tg:.3f} pp_depth={pp_depth:.3f} rss_load_mib={rss_load:.1f} "
          f"rss_peak_mib={status_mib('VmHWM'):.1f}", flush=True)
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quantize")
    q.add_argument("inp")
    q.add_argument("out")
    q.add_argument("type", choices=sorted(FTYPES))
    q.add_argument("--allow-requantize", action="store_true",
                   help="quantize an already quantized file (its weights dequantized first), as llama-quantize does")
    b = sub.add_parser("bench")
    b.add_argument("model")
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--pp", type=int, default=128)
    b.add_argument("--tg", type=int, default=128)
    b.add_argument("--ctx", type=int, default=256)
    b.add_argument("--depth", type=int, default=0)
    a = p.parse_args()
    quantize(a) if a.cmd == "quantize" else bench(a)


if __name__ == "__main__":
    main()
