#!/bin/sh
# Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, IQ4_XS, IQ4_NL, Q4_0, Q5_0, Q4_1, Q5_1 or Q8_0 decode from the file's rows against the same rows repacked at load (bench/kernels/x8_ab.c), in one
# process, on the machine's own path. clang -O2 when the Swift toolchain's clang is on PATH, else gcc; KOPT: cc.sh.
#
#   bench/kernels/x8_ab.sh [TYPE N ROWS]    TYPE 12 (Q4_K), 13 (Q5_K), 14 (Q6_K), 11 (Q3_K), 10 (Q2_K), 23 (IQ4_XS), 20 (IQ4_NL), 2 (Q4_0), 6 (Q5_0), 3 (Q4_1), 7 (Q5_1) or 8 (Q8_0);
#                                           e.g. 12 1024 512 (in L2),
#                                           X8_AB_MEMORY=1 X8_AB_HUGE=1 ... 12 1024 3072 (from memory, huge pages)
#                                           X8_AB_CPU=avx2 ...: that path (default: the machine's own)
#                                           X8_AB_PREFETCH=BYTES: the repacked rows' prefetch distance tried against none (4096)
set -e
. "$(dirname "$0")/cc.sh"
$CC $KOPT -fno-math-errno -I "$K/include" -I "$K" -o "$OUT/x8_ab" "$K"/*.c "$ROOT/bench/kernels/x8_ab.c" -lm -lpthread
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/x8_ab" "${1:-12}" "${2:-1024}" "${3:-512}"
