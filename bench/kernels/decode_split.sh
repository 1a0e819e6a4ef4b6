#!/bin/sh
# Two threads through one decode product from memory: chunks taken in turns vs. a contiguous half per thread
# (bench/kernels/decode_split.c, this tree's kernels; clang at -O2 when on PATH, as SwiftPM builds them, else gcc; KOPT: cc.sh).
#
#   bench/kernels/decode_split.sh [TYPE N ROWS CHUNK]     default: Q4_1 (3), 576 columns, 1536 rows, 48-row chunks
set -e
. "$(dirname "$0")/cc.sh"
$CC $KOPT -fno-math-errno -I "$K/include" -o "$OUT/decode_split" "$K"/*.c "$ROOT/bench/kernels/decode_split.c" -lm -lpthread
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/decode_split" "${1:-3}" "${2:-576}" "${3:-1536}" "${4:-48}"
