#!/usr/bin/env python3
"""Where a decode run's time goes, from `perf script -F pid,tid,ip,sym,srcline` of a call-graph profile
(bench/engine/profile.sh records it; Swift names demangled before they come here).

  profile_summary.py PERF_SCRIPT.txt TRANSFORMER_SWIFT
  profile_summary.py --budget LIGHT_SCRIPT.txt --model MODEL.gguf --tok-s RATE --tokens N --hz F

--budget: from `perf script -F pid,tid,ip,sym` of a profile without call graphs (sampling at F Hz; a DWARF call-graph
profile takes the machine's second core from the benchmark: perf copies 8 KB of stack a sample, and the decode rate
drops by a third or more), each decode kernel's time a token beside the bytes of its weight type that a token
streams (decode_bytes.py; needs the gguf package): the rate each kernel reads at while it runs, and a token's time
outside the kernels (serial steps, hand-offs, waits, attention, sampling). A kernel's time a token is the main
thread's samples in it / F / the N single-token steps of the run (its rows kernels run only there): the main thread
runs its part of every product side by side with the workers and is on a CPU all through a step.

Each sample is put in one class by its innermost frame that says what it is doing (kernel-mode frames are
skipped to the user frame they interrupted): a row·vector kernel (`dot_*` or the decode rows kernels `rows_*`, by name), attention (`ra_attn_*`),
activation quantization, the other element-wise ops, the thread pool's hand-off and waits, the benchmark's argmax
over the vocabulary (its sampling) or, with engine-bench --sample, the sampler and the detokenizer of the token
loop, the Swift side of a decode step (everything else under `GGUFContext.decode` or `TokenLoop`), or outside
decode (load, the prompt warm-up). The main thread's samples are the decode
step's wall time while on a CPU (the workers only run the products' other chunks), so its column is the
breakdown of a token; the output matrix is the main thread's kernel samples called from the
`matmul(weights.output, ...)` line of Transformer.swift (found in TRANSFORMER_SWIFT). Samples off the CPU
(descheduled by other jobs, sleeping in the pool) are not seen by cpu-clock.
"""
import os
import re
import sys
from collections import Counter


POOL = ("ra_worker_main", "ra_pool_for", "ra_claim_loop", "ra_wait_generation", "ra_close", "ra_pool_run")
DISPATCH = ("ra_matmul_rows", "ra_mm_task", "ra_matmul_jobs", "ra_matmul_par")


def classify(frames: list[tuple[str, str]], output_line: str) -> tuple[str, bool]:
    """(class, under the output matrix's call) of one sample; frames innermost first, inlined ones included."""
    syms = [s for s, _ in frames]
    output = any(output_line in src for _, src in frames)
    if any(s.startswith("ra_x8_repack") for s in syms):   # load: the weights repacked (and their pages faulted in)
        return "outside decode (load, prompt warm-up)", output
    # The outermost dot_* or rows_* frame is the kernel (inner ones are its inlined helpers, e.g. dot_u8, rows_b32).
    # (Kernels shared across the AVX2 files are named ra_avx2_dot_*: the prefix is dropped before the test.)
    bare = [re.sub(r"^ra_avx(2|512)_", "", s) for s in syms]
    kernel = next((s for s in reversed(bare) if s.startswith(("dot_", "rows_")) and s != "dot_index"), None)
    if kernel:
        return f"kernel {kernel}", output
    if any(s.startswith("ra_attn") for s in syms):
        return "attention (scores, softmax, values, K/V conversion)", output
    if any(s.startswith("ra_quantize_row") for s in syms):
        return "activation quantization", output
    for s in syms:
        if s.startswith(("Sampler.", "Xoshiro256", "static Sampler.", "specialized static Sampler.")) or "Sampler." in s:
            return "sampling (Sampler: penalty, top-k, top-p, draw)", output
        if "StopSequenceFilter" in s or "UTF8Accumulator" in s or "textBytes" in s:
            return "detokenizing and stop sequences", output
        if s in POOL or "futex" in s or "lll_lock" in s or "sched_yield" in s or s.startswith("pthread_cond"):
            return "pool hand-off and waits", output
        if s in DISPATCH:
            return "matmul dispatch (row loop)", output
        if s.startswith("ra_"):
            return "element-wise ops (norms, RoPE, SiLU, residual, K/V store)", output
        if s.startswith(("GGUFContext.", "GGUFModel", "Transformer.", "Tokenizer", "ByteStringTable")):
            break
        if s == "engine_bench_main":
            return "argmax over the vocabulary (the benchmark's sampling)", output
    if any(s.startswith("GGUFContext.decode") or "TokenLoop." in s for s in syms):
        return "Swift side of a decode step (glue, logits copy, allocation)", output
    return "outside decode (load, prompt warm-up)", output


# Rows repacked at load (x8.c): bytes for every byte of the file's rows. Q4_K 1184 for 8 × 144, Q5_K 1440 for 8 × 176,
# Q3_K 912 for 8 × 110, IQ4_XS 1104 for 8 × 136;
# Q6_K and the 32-element types keep the file's bytes.
REPACKED = {"q4_k_x8": 1184 / 1152, "q5_k_x8": 1440 / 1408, "q4_0_x8": 1.0, "q5_0_x8": 1.0, "q4_1_x8": 1.0, "q5_1_x8": 1.0, "q8_0_x8": 1.0,
            "q6_k_x8": 1.0, "q3_k_x8": 912 / 880, "q2_k_x8": 1.0, "iq4_xs_x8": 1104 / 1088}


def budget(script: str, model: str, tok_s: float, tokens: int, hz: float) -> None:
    """The kernels' table of --budget: MB a token per weight type, the kernel's time a token, its read rate."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from decode_bytes import bytes_by_type
    by_type = bytes_by_type(model)
    samples = Counter()
    for line in open(script, errors="replace"):
        parts = line.split()
        head = re.match(r"(\d+)/(\d+)$", parts[0]) if parts else None
        if not head or head.group(1) != head.group(2) or len(parts) < 3:
            continue                                    # the main thread only (pid == tid); then ip, symbol
        kernel = re.search(r"(?:^|_)(?:rows|dot)_((?:q|f|bf|iq)[a-z0-9_]+)$", parts[2])
        if kernel:
            samples[kernel.group(1)] += 1
    token_ms = 1000 / tok_s
    print(f"Kernels against the bytes they stream ({os.path.basename(model)}, {tok_s:.1f} tok/s in the profiled run: "
          f"{token_ms:.2f} ms a token; main thread, {hz:.0f} Hz, {tokens} steps):\n")
    print("| kernel | MB a token | ms a token | GB/s while it runs |")
    print("|---|---:|---:|---:|")
    kernel_ms, kernel_mb = 0.0, 0.0
    for name, count in samples.most_common():
        mb = (by_type.get(name[:4].upper(), 0) * REPACKED[name] if name in REPACKED else by_type.get(name.upper(), 0)) / 1e6
        ms = 1000 * count / hz / tokens
        kernel_ms += ms
        kernel_mb += mb
        rate = f"{mb / ms:.1f}" if mb and ms else ""
        print(f"| {name} | {mb:.1f} | {ms:.2f} | {rate} |")
    print(f"| all kernels | {kernel_mb:.1f} | {kernel_ms:.2f} | {kernel_mb / max(kernel_ms, 1e-9):.1f} |")
    print(f"| the rest of a token (serial steps, hand-offs, waits, attention, sampling) | | "
          f"{token_ms - kernel_ms:.2f} ({100 * (token_ms - kernel_ms) / token_ms:.0f}%) | |")
    missing = sorted(set(by_type) - {k.upper() for k in samples} - {k[:4].upper() for k in samples if k in REPACKED})
    if missing:
        print(f"\n(types streamed but not seen in a kernel: {', '.join(missing)})")


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--budget":
        opts = dict(zip(args[2::2], args[3::2]))
        budget(args[1], opts["--model"], float(opts["--tok-s"]), int(opts["--tokens"]), float(opts["--hz"]))
        return
    text, swift = args[0], args[1]
    output_line = ""
    for n, line in enumerate(open(swift), 1):
        if "matmul(weights.output" in line:
            output_line = f"Transformer.swift:{n}"
    samples = []   # (main thread, frames)
    frames, header = [], None
    lines = open(text, errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        head = re.match(r"\s*(\d+)/(\d+)\s*$", line)   # "PID/TID" (perf pads it with spaces)
        if head:
            if header is not None:
                samples.append((header, frames))
            header = head.group(1) == head.group(2)
            frames = []
        elif line.startswith("\t"):
            m = re.match(r"\t\s*[0-9a-f]+ (.*)", line)
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1).strip()) if m else "?"
            src = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("  ") else ""
            if not src.startswith("[kernel"):
                frames.append((sym, src))
        i += 1
    if header is not None:
        samples.append((header, frames))

    total, main_total = Counter(), Counter()
    out_all = out_main = 0
    for is_main, fr in samples:
        c, output = classify(fr, output_line) if output_line else (classify(fr, "\0")[0], False)
        total[c] += 1
        if is_main:
            main_total[c] += 1
            if output and c.startswith("kernel"):
                out_main += 1
    n, nm = sum(total.values()), sum(main_total.values())
    decode_n = n - total["outside decode (load, prompt warm-up)"]
    decode_m = nm - main_total["outside decode (load, prompt warm-up)"]
    print(f"{n} samples, {nm} on the main thread; shares of the samples inside decode ({decode_n} / {decode_m}):")
    print()
    print("| class | % of all threads' samples | % of the main thread's (a token's wall time on CPU) |")
    print("|---|---:|---:|")
    for c, k in total.most_common():
        if c.startswith("outside"):
            continue
        print(f"| {c} | {100 * k / decode_n:.1f} | {100 * main_total[c] / max(1, decode_m):.1f} |")
    if output_line:
        print(f"| of which the output matrix's kernel (main thread, called from {output_line}) | | "
              f"{100 * out_main / max(1, decode_m):.1f} |")
    print(f"\n(outside decode: {100 * total['outside decode (load, prompt warm-up)'] / max(1, n):.1f}% of all samples, left out)")


if __name__ == "__main__":
    main()
