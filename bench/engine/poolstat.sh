#!/usr/bin/env bash
# Where the calling thread's time goes between the parallel steps of a forward pass, at 1 and at 2 threads in the same
# rounds: engine-bench built with -DRA_POOL_STATS (pool.c counts, per step function, the caller's time in it, its wait
# for the worker at the step's end and the calls it ran alone, plus the worker's idle time between steps).
# Answers "does the product scale with the threads, and how much of a 2-thread pass is waiting" without perf; a step's
# caller time at 1 thread over its time at 2 is its speed-up. Wall-clock figures on a shared machine move with other
# jobs: read the ratios of the same round, not the absolute times across rounds.
#
#   bench/engine/poolstat.sh MODEL.gguf [--pp 70] [--tg 1] [--reps 20] [--rounds 3] [--threads "1 2"] [--cpu native]
#
# A rep is engine-bench's: one pp-token prompt into an empty cache, and one tg-token decode from an empty cache
# (its warm-up, a 4-token prompt, is counted too); the table gives milliseconds per rep, medians over the rounds.
# Needs addr2line (binutils) to name the steps. The diagnostic build goes to .build/poolstat, apart from the release
# build the other benchmarks use.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: $0 MODEL.gguf [--pp N] [--tg N] [--reps N] [--rounds N] [--threads \"1 2\"] [--cpu PATH]" >&2; exit 2; }
MODEL="$1"
shift
PP=70 TG=1 REPS=20 ROUNDS=3 THREADS="1 2" CPU=native
while [ $# -gt 0 ]; do
    case "$1" in
        --pp) PP="$2"; shift 2 ;;
        --tg) TG="$2"; shift 2 ;;
        --reps) REPS="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --cpu) CPU="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v addr2line >/dev/null || { echo "addr2line is not installed (Debian: apt-get install binutils)" >&2; exit 2; }
env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --product engine-bench --scratch-path .build/poolstat -Xcc -DRA_POOL_STATS >&2
BIN="$(env -u RUNANYWHERE_DEV_OPTIMIZE swift build -c release --scratch-path .build/poolstat --show-bin-path)/engine-bench"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
    for t in $THREADS; do
        "$BIN" "$MODEL" --threads "$t" --pp "$PP" --tg "$TG" --reps "$REPS" --cpu "$CPU" > "$WORK/out-$t-$round.txt" 2> "$WORK/stat-$t-$round.txt"
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK" "$REPS" "$PP" "$TG" "$ROUNDS" "$THREADS" <<'EOF'
import glob, os, re, statistics, subprocess, sys
work, reps, pp, tg, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
threads = [int(t) for t in sys.argv[6].split()]
names = {}
# the products' step at 1 thread (chunks in turn) and at 2 (a run of chunks per thread): one row
ALIAS = {"ra_mm_task": "matrix products (ra_mm_task, ra_mm_segment_task)",
         "ra_mm_segment_task": "matrix products (ra_mm_task, ra_mm_segment_task)"}
def name(fn, obj):
    if (fn, obj) not in names:
        out = subprocess.run(["addr2line", "-f", "-e", obj, fn], capture_output=True, text=True).stdout.split("\n")
        names[(fn, obj)] = out[0] if out and out[0] not in ("", "??") else fn
    return names[(fn, obj)]
runs = {}   # (threads, round) -> {step: (calls, solo, work, wait)}, idle, rates
for t in threads:
    for r in range(1, rounds + 1):
        steps, idle = {}, 0.0
        for line in open(os.path.join(work, f"stat-{t}-{r}.txt")):
            if not line.startswith("POOLSTAT "):
                continue
            kv = dict(f.split("=", 1) for f in line.split()[1:])
            if "workers_idle_ms" in kv:
                idle = float(kv["workers_idle_ms"])
                continue
            step = name(kv["fn"], kv["object"])
            step = ALIAS.get(step, step)
            c, s, w, q = steps.get(step, (0, 0, 0.0, 0.0))
            steps[step] = (c + int(kv["calls"]), s + int(kv["solo"]), w + float(kv["work_ms"]), q + float(kv["wait_ms"]))
        rates = {}
        for line in open(os.path.join(work, f"out-{t}-{r}.txt")):
            m = re.match(r"\| (pp|tg)\d+ \| \d+ \| ([0-9.]+) ±", line)
            if m:
                rates[m.group(1)] = float(m.group(2))
        runs[(t, r)] = (steps, idle, rates)
def med(values):
    return statistics.median(values) if values else 0.0
every = sorted({s for (steps, _, _) in runs.values() for s in steps},
               key=lambda s: -med([runs[(threads[-1], r)][0].get(s, (0, 0, 0, 0))[2] for r in range(1, rounds + 1)]))
print(f"\nms per rep (one {pp}-token prompt + one {tg}-token decode), medians of {rounds} rounds; caller = the thread that "
      "calls the step (at 1 thread, all of it); wait = the caller's wait for the worker at the step's end")
print()
head = "| step | calls a rep |" + "".join(f" caller ms, {t} thr |" for t in threads)
head += "".join(f" wait ms, {t} thr |" for t in threads if t > 1)
if len(threads) > 1:
    head += f" speed-up {threads[0]}→{threads[-1]} |"
print(head)
print("|---|---:|" + "---:|" * (len(threads) + sum(1 for t in threads if t > 1) + (1 if len(threads) > 1 else 0)))
for s in every:
    cells = [med([runs[(t, r)][0].get(s, (0, 0, 0, 0))[2] / reps for r in range(1, rounds + 1)]) for t in threads]
    waits = [med([runs[(t, r)][0].get(s, (0, 0, 0, 0))[3] / reps for r in range(1, rounds + 1)]) for t in threads if t > 1]
    calls = med([runs[(threads[-1], r)][0].get(s, (0, 0, 0, 0))[0] / reps for r in range(1, rounds + 1)])
    row = f"| {s} | {calls:.0f} |" + "".join(f" {c:.2f} |" for c in cells) + "".join(f" {w:.2f} |" for w in waits)
    if len(threads) > 1:
        row += f" {cells[0] / cells[-1]:.2f}× |" if cells[-1] > 0 else " |"
    print(row)
print()
for t in threads:
    pps = [runs[(t, r)][2].get("pp", 0) for r in range(1, rounds + 1)]
    tgs = [runs[(t, r)][2].get("tg", 0) for r in range(1, rounds + 1)]
    idle = med([runs[(t, r)][1] / reps for r in range(1, rounds + 1)])
    extra = f"; workers idle between steps {idle:.2f} ms a rep" if t > 1 else ""
    print(f"- {t} thread(s): pp{pp} {med(pps):.1f} tok/s, tg{tg} {med(tgs):.1f} tok/s (medians of the rounds' means){extra}")
EOF
