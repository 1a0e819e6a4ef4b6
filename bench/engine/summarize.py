#!/usr/bin/env python3
"""Medians and ratios of the engine benchmark's raw RESULT lines (bench/engine/run.sh) as Markdown.

Input: a TSV of `model  threads  engine  rep  RESULT key=value ...` lines. Output: one table row per
model and thread count with the median of each measure for our engine and llama.cpp and their ratio
(tokens/s: ours / llama.cpp, higher is better; load time and RSS: ours / llama.cpp, lower is better).
"""
import statistics
import sys
from collections import defaultdict


def main() -> None:
    runs = defaultdict(lambda: defaultdict(list))   # (model, threads) -> engine -> [dict]
    order = []
    for line in open(sys.argv[1]):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 5 or not parts[4].startswith("RESULT"):
            continue
        model, threads, engine = parts[0], int(parts[1]), parts[2]
        values = dict(kv.split("=") for kv in parts[4].split()[1:])
        key = (model, threads)
        if key not in order:
            order.append(key)
        runs[key][engine].append({k: float(v) for k, v in values.items()})

    def med(rs, k):
        return statistics.median(r[k] for r in rs) if rs else float("nan")

    print("| model | threads | n | pp128 ours | pp128 llama.cpp | **pp ratio** | tg128 ours | tg128 llama.cpp "
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


if __name__ == "__main__":
    main()
