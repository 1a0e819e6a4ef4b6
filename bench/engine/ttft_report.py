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


engines = [e for e in ("before", "ours") if runs(f"{e}-disk") + runs(f"{e}-cached")]
by = {e: {c: runs(f"{e}-{c}") for c in ("disk", "cached")} for e in engines + ["llama"]}
every = {e: by[e]["disk"] + by[e]["cached"] for e in by}
if "ours" not in engines:
    sys.exit("no runs of ours")
first = every["ours"][0]
label = {"before": "before (API)", "ours": "this build (API)" if "before" in engines else "ours (API)"}


def pooled(e, key, skip_first=False):
    return [q for r in every[e] for q in (r[key][1:] if skip_first else r[key])]


user_tokens = [p["userTokens"] for p in first["prompts"]]
prompt_tokens = [p["promptTokens"] for p in first["split"]]
lw = [w for r in every["llama"] for w in r["warm"]]
lwt = [w["prefill"] + w["sample"] for w in lw]
cache_mb = lambda rs: ", ".join(f"{(r.get('pageCacheBytesAtLoad') or 0) / 2**20:.1f}" for r in rs)
loads = {}
if os.path.exists(os.path.join(work, "loads")):
    for line in open(os.path.join(work, "loads")):
        c, _, l = line.split()
        loads.setdefault(c.split("-")[0], []).append(float(l))

print(f"- model: {name} ({first['fileBytes'] / 2**20:.1f} MiB); {threads} threads; context {first['contextLength']}; "
      f"greedy (temperature 0); {rounds} rounds, each one fresh process per case in rotating order")
print(f"- 1-min load average after each run: " + "; ".join(f"{e} {min(v):.1f}–{max(v):.1f}" for e, v in loads.items()))
print(f"- messages: {len(user_tokens)} different user messages of {min(user_tokens)}–{max(user_tokens)} tokens "
      f"(median {med(user_tokens):.0f}); with SmolLM2's template (its default system prompt) the prompt is "
      f"{min(prompt_tokens)}–{max(prompt_tokens)} tokens")
print(f"- ours: `RunAnywhereSDK.llm.generateStream` with the model loaded by `models.load`; TTFT = the call to the "
      f"first `.text` event the consumer receives. llama.cpp: llama-cpp-python's low-level API on the same tokens "
      f"(llama_decode of the prompt + argmax of the last row) — an engine figure, no chat template, tokenizer or API "
      f"around it, so it compares with our *prefill + first sampling* row, not with the API row")
print(f"- \"disk\": the file's pages dropped from the page cache (posix_fadvise DONTNEED on a private copy) just before "
      f"the load; page cache at load, MiB — ours: {cache_mb(by['ours']['disk'])}; \"cached\": the file read just before, "
      f"a fresh process (its first touch of the mapping is page faults on cached pages)")
print()
print("## Time to first token (ms, medians; range in brackets)")
print()
print("| case | " + " | ".join(label[e] for e in engines) + " | reused / prompt tokens | llama.cpp (engine only) |")
print("|---|" + "---:|" * (len(engines) + 2))
where = {"disk": "file not in page cache", "cached": "file in page cache"}
for c in ("disk", "cached"):
    cells = [f"{ms(med(r['loadSeconds'] for r in by[e][c]))} ({spread(r['loadSeconds'] for r in by[e][c])})" for e in engines]
    ll = [r["loadSeconds"] for r in by["llama"][c]]
    print(f"| load (`models.load`), {where[c]} | " + " | ".join(cells) + f" | | {ms(med(ll))} ({spread(ll)}) |")
    cells = [f"{ms(med(r['cold']['ttft'] for r in by[e][c]))} ({spread(r['cold']['ttft'] for r in by[e][c])})" for e in engines]
    lc = [r["cold"]["prefill"] + r["cold"]["sample"] for r in by["llama"][c]]
    print(f"| cold: first request after the load, {where[c]} | " + " | ".join(cells) +
          f" | 0 / {first['cold']['promptTokens']} | {ms(med(lc))} ({spread(lc)}) |")
rows = [("**warm, new message, nothing reused**", "fresh", lwt),
        ("warm, new message, system prompt reused from the request before", "prefix", None),
        ("warm, the same message again (all but its last token reused)", "repeated", None)]
for title, key, peer in rows:
    cells = []
    for e in engines:
        qs = pooled(e, key, skip_first=key != "fresh")
        cells.append(f"{'**' if key == 'fresh' else ''}{ms(med(q['ttft'] for q in qs))}{'**' if key == 'fresh' else ''} "
                     f"({spread(q['ttft'] for q in qs)})")
    qs = pooled("ours", key, skip_first=key != "fresh")
    print(f"| {title} | " + " | ".join(cells) + f" | {med(q['reused'] for q in qs):.0f} / {med(q['promptTokens'] for q in qs):.0f} | "
          + (f"{ms(med(peer))} ({spread(peer)})" if peer else "") + " |")
print()
print("## Where a warm TTFT goes (nothing reused; ms, medians)")
print()
print("The steps are timed on the engine below the API in the same process (`GGUFModel`/`GGUFContext`, same threads);")
print("the overhead row is per request: the consumer's TTFT minus the engine's prompt time inside that same call.")
print()
print("| step | " + " | ".join(label[e].replace(" (API)", "") for e in engines) + " | llama.cpp |")
print("|---|" + "---:|" * (len(engines) + 1))
split = {e: pooled(e, "split", skip_first=True) for e in engines}
fresh = {e: pooled(e, "fresh") for e in engines}
def row(title, values, peer=""):
    print(f"| {title} | " + " | ".join(values) + f" | {peer} |")
row("chat template render", [ms(med(s["render"] for s in split[e])) for e in engines])
row("tokenization", [ms(med(s["tokenize"] for s in split[e])) for e in engines], ms(med(w["tokenize"] for w in lw)))
row("prefill: forward of the prompt, logits of its last token", [ms(med(s["prefill"] for s in split[e])) for e in engines],
    ms(med(w["prefill"] for w in lw)))
row("first sampling + detokenization, greedy", [ms(med(s["sampleGreedy"] for s in split[e])) for e in engines],
    ms(med(w["sample"] for w in lw)) + " (numpy argmax)")
row("first sampling, the API's default sampling (temperature 0.7, top-k 40, top-p 0.95, min-p 0.05)",
    [ms(med(s["sampleDefault"] for s in split[e])) for e in engines])
row("prefill inside the API calls (`promptTokens / promptTokensPerSecond`)", [ms(med(q["promptSeconds"] for q in fresh[e])) for e in engines])
row("TTFT measured inside the SDK (`timeToFirstTokenSeconds`)", [ms(med(q["resultTTFT"] for q in fresh[e])) for e in engines])
row("TTFT the stream's consumer sees", [ms(med(q["ttft"] for q in fresh[e])) for e in engines], ms(med(lwt)))
row("everything but the prefill: template, tokenizer, sampling, actors, threads, stream (per request)",
    [ms(med(q["ttft"] - q["promptSeconds"] for q in fresh[e])) for e in engines])
row("the same for the repeated message (1 token evaluated)",
    [ms(med(q["ttft"] - q["promptSeconds"] for q in pooled(e, "repeated", skip_first=True))) for e in engines])
print()
print("## Decode after the prompt (tokens/s, medians)")
print()
print("| path | " + " | ".join(label[e].replace(" (API)", "") for e in engines) + " | llama.cpp |")
print("|---|" + "---:|" * (len(engines) + 1))
d = {e: [r["decode"] for r in every[e]] for e in engines}
def rate(e, k):
    return f"{med(x[k] for x in d[e]):.1f}"
row("engine loop: evaluate + argmax (as engine-bench)", [rate(e, "engineLoop") for e in engines],
    f"{(med(r['decode'] for r in every['llama']) or 0):.1f}")
row("engine `generate` (TokenLoop: sampler, detokenizer, stop filter)", [rate(e, "tokenLoop") for e in engines])
row("API stream, first to last `.text` event", [rate(e, "apiStream") for e in engines])
row("API `llm.generate`: `GenerationResult.tokensPerSecond`", [rate(e, "apiResult") for e in engines])
if all("loopGreedyMicroseconds" in x for e in engines for x in d[e]):
    row("TokenLoop's own work a token, forward pass excluded (µs; greedy / default sampling)",
        [f"{med(x['loopGreedyMicroseconds'] for x in d[e]):.0f} / {med(x['loopDefaultMicroseconds'] for x in d[e]):.0f}"
         for e in engines])
print(f"\n({first['decode']['tokens']} tokens asked; the API call produced {med(x['apiTokens'] for x in d['ours']):.0f}; "
      f"llama.cpp's tokenizer gave our tokens for {sum(r['tokenizerAgrees'] for r in every['llama'])} of "
      f"{sum(r['prompts'] for r in every['llama'])} prompts)")
