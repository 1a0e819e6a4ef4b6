#!/usr/bin/env bash
# Download benchmark: the SDK's downloader against curl, served by nginx on 127.0.0.1.
# Writes bench/results/download.md (--out FILE: elsewhere, e.g. a second machine's table beside the first).
#
#   bench/download/run.sh [--reps N] [--size-mib N] [--out FILE]
#
# Installs nginx (and GNU time) with apt when missing, writes its own nginx config in $BENCH_DIR (default
# /dev/shm/runanywhere-dlbench, a tmpfs, so the numbers are the downloader's and not this VM's disk) with three
# servers: plain on $PORT, `limit_rate 50m` per connection on $PORT+1 and a one-link "wire" speed
# (`limit_rate $WIRE_RATE`, default 250m) on $PORT+2. One scenario writes into $DISK_DIR (default
# /var/tmp/runanywhere-dlbench-disk, a real disk; DISK_DIR= skips it) instead. The downloader is driven by the
# download-bench executable (bench/download/Sources; `swift build -c release --product download-bench`).
# Every scenario runs once per repetition, interleaved with the others; the report gives medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$(pwd)"
REPS=5
SIZE_MIB=1024
OUT=bench/results/download.md
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift 2 ;;
        --size-mib) SIZE_MIB="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        *) echo "usage: $0 [--reps N] [--size-mib N] [--out FILE]" >&2; exit 2 ;;
    esac
done
BENCH_DIR="${BENCH_DIR:-/dev/shm/runanywhere-dlbench}"
# A folder on a real disk (not a tmpfs) for the one scenario that writes there: where a checkpoint's flush is a
# device flush. DISK_DIR= (empty) skips it.
DISK_DIR="${DISK_DIR-/var/tmp/runanywhere-dlbench-disk}"
PORT="${PORT:-18480}"
CAPPED=$((PORT + 1))
WIRE=$((PORT + 2))
WIRE_RATE="${WIRE_RATE:-250m}"   # one connection at 250 MB/s = 2 Gbit/s, twice a gigabit link

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
command -v nginx >/dev/null || need+=(nginx-light)
command -v curl >/dev/null || need+=(curl)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

swift build -c release --product download-bench >&2
BIN="$(swift build -c release --show-bin-path)/download-bench"

mkdir -p "$BENCH_DIR/www" "$BENCH_DIR/tmp"
WWW="$BENCH_DIR/www"
SIZE=$((SIZE_MIB * 1024 * 1024))
if [ "$(stat -c %s "$WWW/big.bin" 2>/dev/null || echo 0)" != "$SIZE" ]; then
    echo "writing a ${SIZE_MIB} MiB test file ..." >&2
    openssl rand -out "$WWW/big.bin" "$SIZE" 2>/dev/null || head -c "$SIZE" /dev/urandom > "$WWW/big.bin"
fi
PARTS=(256 128 64 32 16)   # MiB, the five files of the multi-file model
for i in "${!PARTS[@]}"; do
    f="$WWW/part$i.bin"; want=$((PARTS[i] * 1024 * 1024))
    [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" = "$want" ] || head -c "$want" "$WWW/big.bin" > "$f"
done
SHA="$(openssl dgst -sha256 -r "$WWW/big.bin" | cut -d' ' -f1)"
head -c 1024 "$WWW/big.bin" > "$WWW/tiny.bin"   # a 1 KiB file: what starting a process and one request cost
TINY_SHA="$(openssl dgst -sha256 -r "$WWW/tiny.bin" | cut -d' ' -f1)"

cat > "$BENCH_DIR/nginx.conf" <<CONF
worker_processes 1;
pid $BENCH_DIR/nginx.pid;
error_log $BENCH_DIR/error.log warn;
events { worker_connections 512; }
http {
    access_log off;
    log_format bytes '\$request_uri \$status \$body_bytes_sent "\$http_range"';
    client_body_temp_path $BENCH_DIR/tmp; proxy_temp_path $BENCH_DIR/tmp; fastcgi_temp_path $BENCH_DIR/tmp;
    uwsgi_temp_path $BENCH_DIR/tmp; scgi_temp_path $BENCH_DIR/tmp;
    sendfile on; tcp_nopush on; keepalive_requests 10000;
    types { } default_type application/octet-stream;
    server { listen 127.0.0.1:$PORT; root $WWW; access_log $BENCH_DIR/access.log bytes; }
    server { listen 127.0.0.1:$CAPPED; root $WWW; limit_rate 50m; access_log $BENCH_DIR/access-capped.log bytes; }
    server { listen 127.0.0.1:$WIRE; root $WWW; limit_rate $WIRE_RATE; }
}
CONF
stop_nginx() { [ -f "$BENCH_DIR/nginx.pid" ] && kill "$(cat "$BENCH_DIR/nginx.pid")" 2>/dev/null || true; }
stop_nginx; sleep 0.3
"$NGINX" -c "$BENCH_DIR/nginx.conf" -p "$BENCH_DIR" -e "$BENCH_DIR/error.log"
trap 'stop_nginx' EXIT
sleep 0.3
PLAIN_URL="http://127.0.0.1:$PORT"
CAPPED_URL="http://127.0.0.1:$CAPPED"
WIRE_URL="http://127.0.0.1:$WIRE"

RAW="$BENCH_DIR/raw.tsv"
: > "$RAW"
RUN="$BENCH_DIR/run"
TIMEF="$BENCH_DIR/time.txt"

# CPU time (user + system, in clock ticks) nginx's processes have used so far. On loopback the kernel's TCP work for
# a transfer is charged to whichever process's context it runs in, the server's or the client's, and the split moves
# with the client (bench/results/download-notes.md), so CPU is compared with the server's share counted too.
HZ="$(getconf CLK_TCK)"
server_ticks() {
    local master p t=0
    master="$(cat "$BENCH_DIR/nginx.pid" 2>/dev/null)" || { echo 0; return; }
    for p in "$master" $(pgrep -P "$master"); do
        [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
    done
    echo "$t"
}

# Before every timed run, the tmpfs it writes to gets 1.5 x the file's size written and deleted (untimed), so every tool
# starts on memory the VM has just used. On this project's VMs the first write into memory that has been free for a
# while runs ~7x slower (a 1 GiB dd into /dev/shm: 3.6 s, then 0.5 s: the host backs the pages again, the VM's free
# page reporting having handed them back), and in a row of runs whichever comes first after such a pause pays it:
# ours, first in each repetition, paid it in most (bench/results/download-notes.md, "Stop 35"). A real disk and a
# host that keeps its memory have no such cost.
warm_memory() {
    dd if=/dev/zero of="$RUN/.warm" bs=1M count="$((SIZE_MIB * 3 / 2))" status=none 2>/dev/null || true
    rm -f "$RUN/.warm"
}

# measure SCENARIO TOOL REP COMMAND...: wall, user, sys, max RSS, nginx's CPU seconds meanwhile, and the command's
# stdout (JSON for ours).
measure() {
    local scenario="$1" tool="$2" rep="$3"; shift 3
    rm -rf "$RUN"; mkdir -p "$RUN"
    warm_memory
    local out s0 s1
    s0="$(server_ticks)"
    out="$(/usr/bin/time -f '%e %U %S %M' -o "$TIMEF" "$@")" || { echo "failed: $*" >&2; cat "$TIMEF" >&2; return 1; }
    s1="$(server_ticks)"
    printf '%s\t%s\t%s\t%s %s\t%s\n' "$scenario" "$tool" "$rep" "$(tail -1 "$TIMEF")" \
        "$(awk -v a="$s0" -v b="$s1" -v h="$HZ" 'BEGIN { printf "%.2f", (b - a) / h }')" "${out//$'\n'/ }" >> "$RAW"
}

# measure_disk TOOL REP COMMAND...: as measure, writing into $DISK_DIR (a real disk) instead of the tmpfs; the memory
# is warmed the same way (the page cache comes from the same free memory).
measure_disk() {
    local tool="$1" rep="$2"; shift 2
    rm -rf "$RUN" "$DISK_DIR"; mkdir -p "$RUN" "$DISK_DIR"
    warm_memory
    sync
    local out s0 s1
    s0="$(server_ticks)"
    out="$(/usr/bin/time -f '%e %U %S %M' -o "$TIMEF" "$@")" || { echo "failed: $*" >&2; cat "$TIMEF" >&2; return 1; }
    s1="$(server_ticks)"
    printf '%s\t%s\t%s\t%s %s\t%s\n' disk "$tool" "$rep" "$(tail -1 "$TIMEF")" \
        "$(awk -v a="$s0" -v b="$s1" -v h="$HZ" 'BEGIN { printf "%.2f", (b - a) / h }')" "${out//$'\n'/ }" >> "$RAW"
    rm -rf "$DISK_DIR"
}

# A kill -9 at a random point, then a resume. The process SIGKILLs itself from its progress callback once a
# random byte count (10-90 % of the file) is written, so the bytes it had received are known; nginx's byte
# counts give what the server sent to both runs.
kill_resume() {
    local rep="$1" url="$CAPPED_URL/big.bin" log="$BENCH_DIR/access-capped.log"
    rm -rf "$RUN"; mkdir -p "$RUN"; : > "$log"
    local at; at="$(awk -v r="$RANDOM" -v s="$SIZE" 'BEGIN { printf "%d", (0.1 + (r / 32767) * 0.8) * s }')"
    local killed; killed="$("$BIN" file "$url" "$RUN" --kill-at "$at" 2>/dev/null || true)"
    killed="$(printf '%s' "$killed" | python3 -c "import json,sys; print(json.loads(sys.stdin.read() or '{}').get('killedAt', -1))")"
    sleep 0.5
    local first; first="$(awk '{ s += $3 } END { print s + 0 }' "$log")"
    local journal_bytes; journal_bytes="$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(sum(s['written'] for s in j['segments']) if j.get('segments') else j['bytesWritten'])" "$RUN/work/big.bin.journal" 2>/dev/null || echo 0)"
    : > "$log"
    local out; out="$("$BIN" file "$url" "$RUN" --sha256 "$SHA")"
    sleep 0.3
    local second; second="$(awk '{ s += $3 } END { print s + 0 }' "$log")"
    printf 'resume\tours-default\t%s\t%s %s %s %s\t%s\n' "$rep" "$killed" "$first" "$second" "$journal_bytes" "$out" >> "$RAW"
}

# What SHA-256 alone costs here (OpenSSL, 1 MiB blocks; openssl speed counts user CPU time), in bytes per
# second: measured once per repetition, between the downloads, so the CPU target uses this run's figure.
sha_speed() {
    local rate
    rate="$(openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | awk '$1 == "sha256" { sub(/k$/, "", $2); print $2 * 1000 }')"
    [ -n "$rate" ] && printf 'sha-speed\topenssl\t%s\t%s\n' "$1" "$rate" >> "$RAW"
}

mkdir -p bench/results
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
    echo "repetition $rep of $REPS ..." >&2
    sha_speed "$rep"
    measure one-connection ours "$rep" "$BIN" file "$PLAIN_URL/big.bin" "$RUN" --connections 1 --sha256 "$SHA"
    measure one-connection curl "$rep" curl -sS -o "$RUN/big.bin" "$PLAIN_URL/big.bin"
    measure one-connection curl-sha256sum "$rep" sh -c "curl -sS '$PLAIN_URL/big.bin' | sha256sum"
    measure one-connection ours-no-progress "$rep" "$BIN" file "$PLAIN_URL/big.bin" "$RUN" --connections 1 --sha256 "$SHA" --no-progress
    # The wire pair alternates its order (whichever runs second after the other shares the VM's next hiccup).
    for tool in $([ $((rep % 2)) -eq 1 ] && echo "ours curl" || echo "curl ours"); do
        if [ "$tool" = ours ]; then measure wire ours "$rep" "$BIN" file "$WIRE_URL/big.bin" "$RUN" --connections 1 --sha256 "$SHA"
        else measure wire curl "$rep" curl -sS -o "$RUN/big.bin" "$WIRE_URL/big.bin"; fi
    done
    if [ -n "$DISK_DIR" ]; then
        # Durable at the end both ways: ours fsyncs the file before moving it into place; curl's is synced after.
        for tool in $([ $((rep % 2)) -eq 1 ] && echo "ours curl" || echo "curl ours"); do
            if [ "$tool" = ours ]; then measure_disk ours "$rep" "$BIN" file "$PLAIN_URL/big.bin" "$DISK_DIR" --connections 1 --sha256 "$SHA"
            else measure_disk curl-sync "$rep" sh -c "curl -sS -o '$DISK_DIR/big.bin' '$PLAIN_URL/big.bin' && sync '$DISK_DIR/big.bin'"; fi
        done
    fi
    measure start ours "$rep" "$BIN" file "$PLAIN_URL/tiny.bin" "$RUN" --connections 1 --sha256 "$TINY_SHA"
    measure start curl "$rep" curl -sS -o "$RUN/tiny.bin" "$PLAIN_URL/tiny.bin"
    measure plain-default ours-default "$rep" "$BIN" file "$PLAIN_URL/big.bin" "$RUN" --sha256 "$SHA"
    measure capped ours-default "$rep" "$BIN" file "$CAPPED_URL/big.bin" "$RUN" --sha256 "$SHA"
    measure capped curl "$rep" curl -sS -o "$RUN/big.bin" "$CAPPED_URL/big.bin"
    kill_resume "$rep"
    urls=(); for i in "${!PARTS[@]}"; do urls+=("$CAPPED_URL/part$i.bin"); done
    measure multi-file ours-model "$rep" env RUNANYWHERE_HOME="$RUN/home" "$BIN" model bench-model "${urls[@]}"
    measure multi-file curl-sequential "$rep" sh -c "for u in ${urls[*]}; do curl -sS -o '$RUN/'\$(basename \$u) \$u || exit 1; done"
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$RUN"

python3 bench/download/report.py "$RAW" \
    --size "$SIZE" --parts "${PARTS[*]}" --reps "$REPS" \
    --load "$LOAD_BEFORE / $LOAD_AFTER" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
    --cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores; flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'sha_ni|avx2|avx512f|vaes' | tr '\n' ' ' | sed 's/ $//'))" \
    --nginx "$("$NGINX" -v 2>&1 | cut -d/ -f2)" --curl "$(curl --version | head -1 | cut -d' ' -f2)" \
    --dir "$BENCH_DIR" --disk-dir "$DISK_DIR ($(df --output=source "$(dirname "$DISK_DIR")" 2>/dev/null | tail -1), $(stat -f -c %T "$(dirname "$DISK_DIR")" 2>/dev/null))" --wire-rate "$WIRE_RATE" --cores "$(nproc)" --out "$OUT" > "$OUT"
cat "$OUT"
