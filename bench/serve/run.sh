#!/usr/bin/env bash
# Load test of `runanywhere serve`: CLIENTS concurrent streaming chat clients (the official openai Python package, then curl)
# for SECONDS each on stories260K (a real 260K-parameter Llama from RUNANYWHERE_TESTDATA), all on one model, so requests
# queue FIFO behind each other. Checks that every request completes or gets a typed error, that nothing stalls
# (a request without progress for 60 s counts as a deadlock), that the server's RSS is back where it started after
# the load, and that SIGTERM ends it with exit code 0. Writes bench/results/serve.md.
#   bench/serve/run.sh [SECONDS] [CLIENTS]      (default 60 s, 8 clients)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
seconds="${1:-60}"
clients="${2:-8}"
export PATH=/opt/swift/usr/bin:$PATH
data="${RUNANYWHERE_TESTDATA:-$root/../shared/testdata}"
[ -f "$data/models/stories260K.gguf" ] || { echo "serve bench: needs RUNANYWHERE_TESTDATA with models/stories260K.gguf" >&2; exit 1; }
bash scripts/install-openai-client.sh
venv="${OPENAI_VENV:-$root/.runanywhere-deps/openai-venv}"

RUNANYWHERE_DEV_OPTIMIZE=1 swift build --product runanywhere >&2
bin="$root/.build/debug/runanywhere"
work="$root/bench/work/serve"
rm -rf "$work" && mkdir -p "$work/files"
cp "$data/models/stories260K.gguf" "$work/files/"
export RUNANYWHERE_HOME="$work/root"

# Register and pull the model from a loopback file server, as a user would from a mirror.
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/files" > "$work/http.log" 2>&1 &
http_pid=$!
trap 'kill $http_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/http.log" | head -1); [ -n "$port" ] && break; sleep 0.1; done
"$bin" models register "http://127.0.0.1:$port/stories260K.gguf" --id stories260k >/dev/null
"$bin" models pull stories260k >&2
kill $http_pid

"$venv/bin/python" bench/serve/load.py --binary "$bin" --model stories260k --seconds "$seconds" --clients "$clients" \
  --command "bench/serve/run.sh $seconds $clients" --out bench/results/serve.md
