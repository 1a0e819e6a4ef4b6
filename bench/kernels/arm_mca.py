#!/usr/bin/env python3
"""llvm-mca estimate of each NEON dot kernel's inner loop, ours next to llama.cpp's, in cycles per weight block.

Run by bench/kernels/arm-mca.sh (which finds the compilers and llama.cpp's source); see bench/results/arm.md.
Method: both sources are compiled the same way (clang -O3 --target=aarch64-linux-gnu -mcpu=CPU -S); in each
kernel function, of the innermost loops that clang marks "Inner Loop Header", the one doing the most blocks per
iteration (the main loop, not a remainder loop; then the longest) is cut out from its header label to the branch back to it and given to
llvm-mca -mcpu=CPU -iterations=ITER; cycles per iteration = Total Cycles / ITER; blocks per iteration = k such
that the loop steps a pointer by k weight blocks and one by k activation blocks (`add xN, xN, #bytes` or a
post-incremented load `[xN], #bytes`). Loads are
modelled as L1 hits.
"""
import os
import re
import subprocess
import sys

ITER = 200

# (type, weight block bytes, activation block bytes, our function (plain, SDOT), llama.cpp function)
KERNELS = [
    ("Q4_0", 18, 34, "q4_0_neon_dot", "q4_0_sdot_dot", "ggml_vec_dot_q4_0_q8_0"),
    ("Q4_1", 20, 36, "q4_1_neon_dot", "q4_1_sdot_dot", "ggml_vec_dot_q4_1_q8_1"),
    ("Q5_0", 22, 34, "q5_0_neon_dot", "q5_0_sdot_dot", "ggml_vec_dot_q5_0_q8_0"),
    ("Q5_1", 24, 36, "q5_1_neon_dot", "q5_1_sdot_dot", "ggml_vec_dot_q5_1_q8_1"),
    ("Q8_0", 34, 34, "q8_0_neon_dot", "q8_0_sdot_dot", "ggml_vec_dot_q8_0_q8_0"),
    ("Q4_K", 144, 292, "ra_neon_q4_k_dot", "ra_sdot_q4_k_dot", "ggml_vec_dot_q4_K_q8_K"),
    ("Q5_K", 176, 292, "ra_neon_q5_k_dot", "ra_sdot_q5_k_dot", "ggml_vec_dot_q5_K_q8_K"),
    ("Q6_K", 210, 292, "ra_neon_q6_k_dot", "ra_sdot_q6_k_dot", "ggml_vec_dot_q6_K_q8_K"),
]


def function_body(asm, name):
    m = re.search(r"^%s:.*?$(.*?)^\.Lfunc_end" % re.escape(name), asm, re.S | re.M)
    if not m:
        raise SystemExit("arm_mca: function %s not found in the compiled assembly" % name)
    return m.group(1).splitlines()


def inner_loops(lines):
    """Every innermost loop clang marks: (instructions from its header to the branch back, pointer steps)."""
    loops = []
    for i, line in enumerate(lines):
        if "Inner Loop Header" not in line:
            continue
        label = line.split(":")[0].strip()
        body = []
        for line2 in lines[i + 1:]:
            s = line2.split("//")[0].strip()
            if not s or s.endswith(":") or s.startswith("."):
                continue
            body.append(s)
            if re.search(r"(?<![\w.])%s(?!\w)" % re.escape(label), s):
                break
        steps = []
        for s in body:
            m = re.match(r"add\s+(x\d+),\s*(x\d+),\s*#(\d+)$", s)
            if m and m.group(1) == m.group(2):
                steps.append(int(m.group(3)))
            m = re.search(r"\[(x\d+)\],\s*#(\d+)$", s)   # a load with post-increment of its base
            if m:
                steps.append(int(m.group(2)))
        loops.append((body, steps))
    return loops


def blocks_per_iteration(steps, bb, xb):
    """k such that a pointer steps by k weight blocks and one by k activation blocks (else by k weight blocks)."""
    pair = [s // bb for s in steps if s % bb == 0 and (s // bb) * xb in steps]
    alone = [s // bb for s in steps if s % bb == 0]
    return max(pair) if pair else max(alone) if alone else 0


def main_loop(lines, bb, xb):
    """The kernel's main loop: of the innermost loops, the one that does the most blocks per iteration (a
    remainder loop does fewer), then the longest."""
    best = None
    for body, steps in inner_loops(lines):
        k = blocks_per_iteration(steps, bb, xb)
        if k and (best is None or (k, len(body)) > (best[1], len(best[0]))):
            best = (body, k)
    if best is None:
        raise SystemExit("arm_mca: no inner loop that steps through whole blocks of %d bytes" % bb)
    return best


def mca_cycles(body, cpu):
    out = subprocess.run([os.environ.get("LLVM_MCA", "llvm-mca"), "-mtriple=aarch64-linux-gnu", "-mcpu=" + cpu, "-iterations=%d" % ITER],
                         input="\n".join(body) + "\n", capture_output=True, text=True, check=True).stdout
    return int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / ITER


def main():
    ours_s, theirs_s, nopf_s, cpu, flavour = sys.argv[1:6]   # flavour: sdot or plain
    ours, theirs, nopf = open(ours_s).read(), open(theirs_s).read(), open(nopf_s).read()
    for t, bb, xb, plain, sdot, ll in KERNELS:
        mine = sdot if flavour == "sdot" else plain
        res = []
        for asm, fn in ((ours, mine), (theirs, ll), (nopf, mine)):
            body, nblk = main_loop(function_body(asm, fn), bb, xb)
            res.append((mca_cycles(body, cpu) / nblk, "%d×%d" % (len(body), nblk)))
        label = cpu + (" +SDOT" if flavour == "sdot" else " plain")
        print("| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %s |"
              % (label, t, res[0][0], res[1][0], res[0][0] / res[1][0], res[2][0], res[0][1], res[1][1]))


if __name__ == "__main__":
    main()
