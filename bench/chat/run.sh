#!/usr/bin/env bash
# Turn-10 prompt time of a scripted `runanywhere chat`: how long the model takes to read the prompt of the
# 10th message, whose chat history holds the 9 turns before it. With the conversation's KV cache reused
# between turns that is the time of the new message's tokens only; without, of the whole history.
#
#   bench/chat/run.sh [MODEL.gguf] [REPS]     (default /work/cache/real/SmolLM2-135M-Instruct.Q4_1.gguf, 5)
#
# Serves the model from 127.0.0.1 (python3 -m http.server), registers and pulls it into a temporary
# RUNANYWHERE_HOME, then pipes 10 messages into `runanywhere chat` (temperature 0, 24 tokens a reply) REPS
# times. Prints, per turn, the median over REPS of the prompt tokens, of those read from the KV cache, and
# of the prompt seconds (the "[… prompt N tokens (U already read) at R tok/s …]" line on stderr: N / R); then
# the time to read a prompt as long as turn 10's from scratch, as every turn would without the kept cache.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
model="${1:-/work/cache/real/SmolLM2-135M-Instruct.Q4_1.gguf}"
reps="${2:-5}"
cli="${RUNANYWHERE_CLI:-$here/.build/debug/runanywhere}"
[ -x "$cli" ] || { echo "build the CLI first: swift build --product runanywhere (or set RUNANYWHERE_CLI)" >&2; exit 1; }
[ -f "$model" ] || { echo "no model at $model" >&2; exit 1; }
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$(dirname "$model")" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
server=$!
for _ in $(seq 1 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.2; done
export RUNANYWHERE_HOME="$work/root" NO_COLOR=1
"$cli" models register "http://127.0.0.1:$port/$(basename "$model")" --id benchchat >/dev/null
"$cli" models pull benchchat --quiet
messages=(
  "Hello! Who are you?" "What is the capital of France?" "And of Italy?" "Name a river in Germany."
  "How many legs does a spider have?" "What colour is the sky on a clear day?" "Give me a word that rhymes with cat."
  "What is two plus three?" "Name a planet." "Thank you. Summarise our chat in one sentence."
)
for rep in $(seq 1 "$reps"); do
  printf '%s\n' "${messages[@]}" /exit | "$cli" chat benchchat --temperature 0 --max-tokens 24 --threads 2 \
      --context-length 2048 2>"$work/err.$rep" >/dev/null
done
# The same turn-10 prompt length read from scratch (what every turn would cost without the kept KV cache): the
# median prompt speed of `runanywhere bench` over REPS runs of a prompt that long.
turn10=$(grep -o 'prompt [0-9]* tokens' "$work/err.1" | sed -n 10p | grep -o '[0-9]*')
"$cli" bench benchchat --backend native --prompt-tokens "$turn10" --gen-tokens 1 --reps "$reps" --threads 2 \
    --context-length 2048 --json >"$work/scratch.json"
python3 - "$work" "$reps" <<'PY'
import json, re, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
runs = []
for rep in range(1, reps + 1):
    text = open(f"{work}/err.{rep}").read()
    found = re.findall(r"prompt (\d+) tokens(?: \((\d+) already read\))? at ([0-9.]+) tok/s", text)
    turns = [(int(n), int(u or 0), int(n) / float(r)) for n, u, r in found]
    runs.append(turns)
print(f"| turn | prompt tokens | already read | prompt s (median of {reps}) |")
print("|---:|---:|---:|---:|")
for t in range(min(len(r) for r in runs)):
    med = lambda i: statistics.median(r[t][i] for r in runs)
    print(f"| {t + 1} | {med(0):.0f} | {med(1):.0f} | {med(2):.4f} |")
row = json.load(open(f"{work}/scratch.json"))[0]
n, speed = row["promptTokens"], row["promptTokensPerSecond"]
turn10 = statistics.median(r[9][0] for r in runs)
print(f"\nfrom scratch: a {n}-token prompt at {speed:.1f} tok/s (`runanywhere bench`, median of {reps}),"
      f" so turn 10's {turn10:.0f} tokens would take {turn10 / speed:.4f} s")
PY
