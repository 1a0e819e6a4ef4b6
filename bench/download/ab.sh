#!/usr/bin/env bash
# A/B of two download-bench binaries against `curl -o`: one 1 GiB file over one connection from nginx on loopback
# (the plain server of run.sh), the three tools interleaved in a rotating order, medians of the walls.
#
#   bench/download/ab.sh BEFORE AFTER [--reps N] [--size-mib N] [--rate R]
#
# --rate R: the server sends at most R per connection (nginx `limit_rate`, e.g. 250m: a wire's speed).
# BEFORE / AFTER are download-bench executables (`swift build -c release --product download-bench`, copied aside).
# Uses run.sh's directory and nginx setup ($BENCH_DIR, default /dev/shm/runanywhere-dlbench, a tmpfs) and warms the
# memory it writes to before every run, as run.sh does. Prints a markdown table: walls, CPU, and for the two builds
# the download inside the process (download-bench's JSON `seconds`, without the process's start and exit).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: $0 BEFORE AFTER [--reps N] [--size-mib N]" >&2; exit 2; }
BEFORE="$(realpath "$1")"; AFTER="$(realpath "$2")"; shift 2
REPS=7
SIZE_MIB=1024
RATE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift 2 ;;
        --size-mib) SIZE_MIB="$2"; shift 2 ;;
        --rate) RATE="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
BENCH_DIR="${BENCH_DIR:-/dev/shm/runanywhere-dlbench}"
PORT="${PORT:-18490}"
command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light curl time >/dev/null; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
mkdir -p "$BENCH_DIR/www" "$BENCH_DIR/tmp"
SIZE=$((SIZE_MIB * 1024 * 1024))
FILE="$BENCH_DIR/www/ab.bin"
[ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" = "$SIZE" ] || head -c "$SIZE" /dev/urandom > "$FILE"
SHA="$(openssl dgst -sha256 -r "$FILE" | cut -d' ' -f1)"
CONF="$BENCH_DIR/nginx-ab.conf"
cat > "$CONF" <<CONF
worker_processes 1;
pid $BENCH_DIR/nginx-ab.pid;
error_log $BENCH_DIR/error-ab.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $BENCH_DIR/tmp; proxy_temp_path $BENCH_DIR/tmp; fastcgi_temp_path $BENCH_DIR/tmp;
    uwsgi_temp_path $BENCH_DIR/tmp; scgi_temp_path $BENCH_DIR/tmp;
    sendfile on; tcp_nopush on;
    types { } default_type application/octet-stream;
    server { listen 127.0.0.1:$PORT; root $BENCH_DIR/www; limit_rate $RATE; }
}
CONF
stop_nginx() { [ -f "$BENCH_DIR/nginx-ab.pid" ] && kill "$(cat "$BENCH_DIR/nginx-ab.pid")" 2>/dev/null || true; }
stop_nginx; sleep 0.3
"$NGINX" -c "$CONF" -p "$BENCH_DIR" -e "$BENCH_DIR/error-ab.log"
trap 'stop_nginx; rm -rf "$BENCH_DIR/ab-run"' EXIT
sleep 0.3
URL="http://127.0.0.1:$PORT/ab.bin"
RUN="$BENCH_DIR/ab-run"
RAW="$(mktemp)"
one() {   # TOOL: appends "TOOL wall cpu in-process" to $RAW (in-process 0 for curl)
    rm -rf "$RUN"; mkdir -p "$RUN"
    dd if=/dev/zero of="$RUN/.warm" bs=1M count="$((SIZE_MIB * 3 / 2))" status=none; rm -f "$RUN/.warm"
    local t="$BENCH_DIR/ab-time.txt"
    local json="{}" bin
    case "$1" in
        before|after) [ "$1" = before ] && bin="$BEFORE" || bin="$AFTER"
            json="$(/usr/bin/time -f '%e %U %S' -o "$t" "$bin" file "$URL" "$RUN" --connections 1 --sha256 "$SHA")" ;;
        curl) /usr/bin/time -f '%e %U %S' -o "$t" curl -sS -o "$RUN/ab.bin" "$URL" ;;
    esac
    local inproc; inproc="$(printf '%s' "$json" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("seconds", 0))')"
    awk -v tool="$1" -v ip="$inproc" '{ printf "%s %s %.2f %s\n", tool, $1, $2 + $3, ip }' "$t" >> "$RAW"
}
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
    case $((rep % 3)) in
        1) order="before after curl" ;;
        2) order="after curl before" ;;
        0) order="curl before after" ;;
    esac
    for tool in $order; do one "$tool"; done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RAW" "$REPS" "$SIZE_MIB" "$LOAD_BEFORE" "$LOAD_AFTER" <<'PY'
import statistics, sys
raw, reps, size, lb, la = sys.argv[1:]
rows = {}
for line in open(raw):
    tool, wall, cpu, inproc = line.split()
    rows.setdefault(tool, []).append((float(wall), float(cpu), float(inproc)))
med = {t: [statistics.median(r[i] for r in v) for i in range(3)] for t, v in rows.items()}
print(f"{size} MiB over one connection on loopback, {reps} interleaved repetitions, medians; load {lb} / {la}\n")
print("| tool | wall s | in the process s | CPU s | curl's wall / this wall | each wall |")
print("|---|---:|---:|---:|---:|---|")
for t in ("before", "after", "curl"):
    w, c, ip = med[t]
    print(f"| {t} | {w:.2f} | {f'{ip:.3f}' if t != 'curl' else ''} | {c:.2f} | {med['curl'][0] / w:.2f}x | "
          f"{', '.join(f'{r[0]:.2f}' for r in rows[t])} |")
print(f"\nafter / before: {med['before'][0] / med['after'][0]:.3f}x faster (wall), "
      f"{med['before'][2] / med['after'][2]:.3f}x (in the process)")
PY
rm -f "$RAW"
