#!/usr/bin/env python3
"""Medians and ratios of the engine benchmark's raw lines (bench/engine/run.sh) as Markdown.

  summarize.py RAW.tsv [--pp 128 --tg 128]                      the speed table
  summarize.py RAW.tsv [--pp 128 --tg 128] --decode BYTES.tsv   decode against the memory-bandwidth limit
(--pp/--tg: the token counts, for the column names)

Input: a TSV of `model  threads  engine  rep  RESULT key=value ...` lines (engine `ours` or `llama.cpp`) and
`model  threads  bandwidth  rep  BANDWIDTH key=value ...` lines (bench/engine/bandwidth.c). The speed table has
one row per model and thread count with the median of each measure for our engine and llama.cpp and their ratio
(tokens/s: ours / llama.cpp, higher is better; load time and RSS: ours / llama.cpp, lower is better). The decode
table divides the median bandwidth of the row's rounds (each the probe's best pass) by the weight bytes per
token (BYTES.tsv: `model  bytes  detail`, bench/engine/decode_bytes.py) and gives each engine's median tg as a
fraction of that limit (in brackets: its best round's). The paired column divides each round's tg by the limit of
the probe run next to it in the same round (run.sh runs them back to back) and takes the median of those ratios:
when other jobs slow the machine's memory for a few minutes, both sides of a round move together.
"""
import argparse
import statistics
from collections import defaultdict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--pp", type=int, default=128)
    ap.add_argument("--tg", type=int, default=128)
    ap.add_argument("--decode", metavar="BYTES_TSV")
    a = ap.parse_args()
    runs = defaultdict(lambda: defaultdict(list))   # (model, threads) -> engine -> [dict]
    order = []
    for line in open(a.raw):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 5 or not parts[4].startswith(("RESULT", "BANDWIDTH")):
            continue
        model, threads, engine = parts[0], int(parts[1]), parts[2]
        values = dict(kv.split("=") for kv in parts[4].split()[1:])
        key = (model, threads)
        if key not in order:
            order.append(key)
        run = {k: float(v) for k, v in values.items()}
        run["_round"] = parts[3]
        runs[key][engine].append(run)

    def med(rs, k):
        return statistics.median(r[k] for r in rs) if rs else float("nan")

    if a.decode:
        decode_table(runs, order, a.decode, a.tg, med)
        return

    print(f"| model | threads | n | pp{a.pp} ours | pp{a.pp} llama.cpp | **pp ratio** | tg{a.tg} ours | tg{a.tg} llama.cpp "
          "| **tg ratio** | load s ours | load s llama.cpp | load ratio | RSS after load MiB ours / llama.cpp "
          "| peak RSS MiB ours / llama.cpp |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in order:
        ours, ref = runs[key]["ours"], runs[key]["llama.cpp"]
        n = min(len(ours), len(ref))
        row = [key[0], str(key[1]), str(n)]
        for k in ("pp", "tg"):
            a, b = med(ours, k), med(ref, k)
            row += [f"{a:.1f}", f"{b:.1f}", f"**{a / b:.2f}×**"]
        a, b = med(ours, "load_s"), med(ref, "load_s")
        row += [f"{a:.2f}", f"{b:.2f}", f"{a / b:.2f}×"]
        row.append(f"{med(ours, 'rss_load_mib'):.0f} / {med(ref, 'rss_load_mib'):.0f}")
        row.append(f"{med(ours, 'rss_peak_mib'):.0f} / {med(ref, 'rss_peak_mib'):.0f}")
        print("| " + " | ".join(row) + " |")


def decode_table(runs, order, bytes_path, tg, med) -> None:
    per_token = {}
    for line in open(bytes_path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 2:
            per_token[parts[0]] = float(parts[1])
    print(f"| model | threads | weights MB / token | bandwidth GB/s | **limit tok/s** | tg{tg} ours | **ours % of limit** "
          f"| ours, paired by round | tg{tg} llama.cpp | **llama.cpp % of limit** | llama.cpp, paired | tg ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in order:
        bw, ours, ref = runs[key]["bandwidth"], runs[key]["ours"], runs[key]["llama.cpp"]
        if key[0] not in per_token or not bw:
            continue
        gbs = med(bw, "best_gbs")
        limit = gbs * 1e9 / per_token[key[0]]
        a, b = med(ours, "tg"), med(ref, "tg")
        best_a, best_b = max(r["tg"] for r in ours), max(r["tg"] for r in ref)
        limits = {r["_round"]: r["best_gbs"] * 1e9 / per_token[key[0]] for r in bw}

        def paired(rs):
            ratios = [r["tg"] / limits[r["_round"]] for r in rs if r["_round"] in limits]
            return f"{100 * statistics.median(ratios):.0f}% (n={len(ratios)})" if ratios else "–"

        print(f"| {key[0]} | {key[1]} | {per_token[key[0]] / 1e6:.1f} | {gbs:.1f} (n={len(bw)}) | **{limit:.1f}** "
              f"| {a:.1f} | **{100 * a / limit:.0f}%** ({100 * best_a / limit:.0f}%) | {paired(ours)} | {b:.1f} "
              f"| **{100 * b / limit:.0f}%** ({100 * best_b / limit:.0f}%) | {paired(ref)} | {a / b:.2f}× |")


if __name__ == "__main__":
    main()
