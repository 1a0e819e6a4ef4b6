#!/usr/bin/env python3
"""Markdown tables of bench/engine/ttft.sh's runs: ttft_report.py WORKDIR ROUNDS THREADS MODELNAME.

WORKDIR holds ours-disk.R.json / ours-cached.R.json (ttft-bench reports) and llama-disk.R.json / llama-cached.R.json
(ttft_llama.py reports), R = 0..ROUNDS-1. Cold figures are medians over the rounds; warm ones are medians of every
request of every run of that engine pooled (each run makes one request per message).
"""
import glob
import json
import os
import statistics
import sys

work, rounds, threads, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def runs(case):
    out = []
    for r in range(rounds):
        p = os.path.join(work, f"{case}.{r}.json")
        if os.path.exists(p):
            out.append(json.load(open(p)))
    return out


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ms(v):
    return "–" if v is None else f"{v * 1000:.1f}"


def spread(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return ""
    return f"{values[0] * 1000:.0f}–{values[-1] * 1000:.0f}"


ours = {c: runs(f"ours-{c}") for c in ("disk", "cached")}
llama = {c: runs(f"llama-{c}") for c in ("disk", "cached")}
ours_all = ours["disk"] + ours["cached"]
llama_all = llama["disk"] + llama["cached"]
if not ours_all:
    sys.exit("no runs of ours")
first = ours_all[0]
fresh = [q for r in ours_all for q in r["fresh"]]
prefix = [q for r in ours_all for q in r["prefix"][1:]]
repeated = [q for r in ours_all for q in r["repeated"][1:]]
split = [s for r in ours_all for s in r["split"][1:]]
user_tokens = [p["userTokens"] for p in first["prompts"]]
prompt_tokens = [p["promptTokens"] for p in first["split"]]
lw = [w for r in llama_all for w in r["warm"]]
cache_mb = lambda rs: ", ".join(f"{(r.get('pageCacheBytesAtLoad') or 0) / 2**20:.1f}" for r in rs)

print(f"- model: {name} ({first['fileBytes'] / 2**20:.1f} MiB); {threads} threads; context {first['contextLength']}; "
      f"greedy (temperature 0); {rounds} rounds, each one fresh process per case in rotating order")
print(f"- messages: {len(user_tokens)} different user messages of {min(user_tokens)}–{max(user_tokens)} tokens "
      f"(median {med(user_tokens):.0f}); with SmolLM2's template (its default system prompt) the prompt is "
      f"{min(prompt_tokens)}–{max(prompt_tokens)} tokens")
print(f"- ours: `RunAnywhereSDK.llm.generateStream` with the model loaded by `models.load`; TTFT = the call to the "
      f"first `.text` event the consumer receives. llama.cpp: llama-cpp-python's low-level API on the same tokens "
      f"(llama_decode of the prompt + argmax of the last row) — an engine figure, no chat template, tokenizer or API "
      f"around it, so it compares with our *prefill + first sampling* row, not with the API row")
print(f"- \"disk\": the file's pages dropped from the page cache (posix_fadvise DONTNEED on a private copy) just before "
      f"the load; page cache at load, MiB — ours: {cache_mb(ours['disk'])}; \"cached\": the file read just before, "
      f"a fresh process (its first touch of the mapping is page faults on cached pages)")
print()
print("## Time to first token (ms, medians; range in brackets)")
print()
print("| case | ours (API) | ours: reused / prompt tokens | llama.cpp (engine only) |")
print("|---|---:|---:|---:|")
for c in ("disk", "cached"):
    print(f"| load, file {'not in page cache' if c == 'disk' else 'in page cache'} | "
          f"{ms(med(r['loadSeconds'] for r in ours[c]))} ({spread(r['loadSeconds'] for r in ours[c])}) | | "
          f"{ms(med(r['loadSeconds'] for r in llama[c]))} ({spread(r['loadSeconds'] for r in llama[c])}) |")
    lc = [r["cold"]["prefill"] + r["cold"]["sample"] for r in llama[c]]
    print(f"| cold: first request after the load, file {'not in page cache' if c == 'disk' else 'in page cache'} | "
          f"{ms(med(r['cold']['ttft'] for r in ours[c]))} ({spread(r['cold']['ttft'] for r in ours[c])}) | "
          f"0 / {first['cold']['promptTokens']} | {ms(med(lc))} ({spread(lc)}) |")
lwt = [w["prefill"] + w["sample"] for w in lw]
print(f"| **warm, new message, nothing reused** | **{ms(med(q['ttft'] for q in fresh))}** ({spread(q['ttft'] for q in fresh)}) | "
      f"{med(q['reused'] for q in fresh):.0f} / {med(q['promptTokens'] for q in fresh):.0f} | {ms(med(lwt))} ({spread(lwt)}) |")
print(f"| warm, new message, system prompt reused from the request before | {ms(med(q['ttft'] for q in prefix))} "
      f"({spread(q['ttft'] for q in prefix)}) | {med(q['reused'] for q in prefix):.0f} / {med(q['promptTokens'] for q in prefix):.0f} | |")
print(f"| warm, the same message again (all but its last token reused) | {ms(med(q['ttft'] for q in repeated))} "
      f"({spread(q['ttft'] for q in repeated)}) | {med(q['reused'] for q in repeated):.0f} / {med(q['promptTokens'] for q in repeated):.0f} | |")
print()
print("## Where a warm TTFT goes (nothing reused; ms, medians)")
print()
parts = ["render", "tokenize", "prefill", "sampleGreedy"]
total_parts = med(sum(s[p] for p in parts) for s in split)
api = med(q["ttft"] for q in fresh)
inside = med(q["resultTTFT"] for q in fresh)
in_prefill = med(q["promptSeconds"] for q in fresh)
print("| step | ours | llama.cpp |")
print("|---|---:|---:|")
print(f"| chat template render | {ms(med(s['render'] for s in split))} | |")
print(f"| tokenization | {ms(med(s['tokenize'] for s in split))} | {ms(med(w['tokenize'] for w in lw))} |")
print(f"| prefill: forward of the prompt, logits of its last token | {ms(med(s['prefill'] for s in split))} "
      f"(in the API calls: {ms(in_prefill)}) | {ms(med(w['prefill'] for w in lw))} |")
print(f"| first sampling + detokenization, greedy | {ms(med(s['sampleGreedy'] for s in split))} | {ms(med(w['sample'] for w in lw))} (numpy argmax) |")
print(f"| first sampling, API default sampling (temperature 0.7, top-k 40, top-p 0.95, min-p 0.05) | "
      f"{ms(med(s['sampleDefault'] for s in split))} | |")
print(f"| sum of the engine steps | {ms(total_parts)} | {ms(med(lwt))} |")
print(f"| TTFT measured inside the SDK (`timeToFirstTokenSeconds`) | {ms(inside)} | |")
print(f"| TTFT the stream's consumer sees | {ms(api)} | |")
print(f"| API, actor, thread and stream overhead (consumer TTFT − engine steps) | {ms(api - total_parts)} | |")
print()
print("## Decode after the prompt (tokens/s, medians)")
print()
d = [r["decode"] for r in ours_all]
print("| path | ours | llama.cpp |")
print("|---|---:|---:|")
print(f"| engine loop: evaluate + argmax (as engine-bench) | {med(x['engineLoop'] for x in d):.1f} | "
      f"{(med(r['decode'] for r in llama_all) or 0):.1f} |")
print(f"| engine `generate` (TokenLoop: sampler, detokenizer, stop filter) | {med(x['tokenLoop'] for x in d):.1f} | |")
print(f"| API stream, first to last `.text` event | {med(x['apiStream'] for x in d):.1f} | |")
print(f"| API `GenerationResult.tokensPerSecond` | {med(x['apiResult'] for x in d):.1f} | |")
print(f"\n({first['decode']['tokens']} tokens asked; the API call produced {med(x['apiTokens'] for x in d):.0f}; "
      f"llama.cpp's tokenizer gave our tokens for {sum(r['tokenizerAgrees'] for r in llama_all)} of "
      f"{sum(r['prompts'] for r in llama_all)} prompts)")
