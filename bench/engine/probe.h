// Shared by the engine benchmark's read probes (bandwidth.c: one flat buffer; step_probe.c: the ranges a decode step
// reads from a model file's mapping), so both read memory the same way and their figures compare.
#ifndef RUNANYWHERE_BENCH_PROBE_H
#define RUNANYWHERE_BENCH_PROBE_H
#include <stdint.h>
#include <string.h>
#include <time.h>

enum { PROBE_PREFETCH_BYTES = 4096 };

static inline double probe_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Sum of the bytes [from, to) read as 8-byte words with eight independent accumulators (the additions never wait on
// each other, so the loop is bound by loads), 64 bytes a step from the first cache-line boundary, the unaligned head
// and tail byte by byte; with prefetch, a software prefetch PROBE_PREFETCH_BYTES ahead of each line (the hardware
// prefetcher stops at page boundaries; the engine's kernels prefetch like this).
static inline uint64_t probe_sum(const uint8_t *from, const uint8_t *to, int prefetch) {
    uint64_t a[8] = {0}, tail = 0;
    while (from < to && ((uintptr_t)from & 63)) tail += *from++;
    for (; from + 64 <= to; from += 64) {
        if (prefetch) __builtin_prefetch(from + PROBE_PREFETCH_BYTES, 0, 3);
        uint64_t w[8];
        memcpy(w, from, 64);
        for (int k = 0; k < 8; k++) a[k] += w[k];
    }
    while (from < to) tail += *from++;
    return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7] + tail;
}

// qsort order of doubles, ascending.
static inline int probe_by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
