// Read-bandwidth probe of the engine benchmark (bench/engine/run.sh compiles and runs it): THREADS threads sum
// their share of a buffer several times larger than the last-level cache, PASSES times, each pass timed from a
// barrier to a barrier. The buffer is ordinary 4 KiB pages (no huge pages asked for), like a weight file's
// mapping. Two ways of reading are tried, pass by pass: plain loads (the hardware prefetcher alone) and loads
// with a software prefetch 4 KiB ahead (the prefetcher stops at page boundaries; the engine's kernels prefetch
// like this), and the faster is taken, so the figure is what the memory gives, not what one loop gets out of it.
//
//   bandwidth THREADS [MIB] [PASSES]
// MIB defaults to 8 x the last-level cache (at least 256). Prints one line:
//   BANDWIDTH threads=N mib=M passes=P best_gbs=X median_gbs=Y plain_best_gbs=A prefetch_best_gbs=B
#include "probe.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_THREADS = 256, MAX_PASSES = 1000 };

typedef struct {
    const uint64_t *base;
    size_t words;          // this thread's share, in 8-byte words (a multiple of 8)
    uint64_t sink;
} share;

static pthread_barrier_t start_line, finish_line;
static share shares[MAX_THREADS];
static int passes, threads;
static double times[2][MAX_PASSES];

static void *worker(void *arg) {
    share *s = arg;
    const int id = (int)(s - shares);
    for (int pass = 0; pass < 2 * passes; pass++) {
        pthread_barrier_wait(&start_line);
        const double t0 = probe_now();
        s->sink += probe_sum((const uint8_t *)s->base, (const uint8_t *)(s->base + s->words), pass % 2);
        pthread_barrier_wait(&finish_line);
        if (id == 0) times[pass % 2][pass / 2] = probe_now() - t0;
    }
    return NULL;
}

static long last_level_cache_bytes(void) {
    long best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], text[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(text, sizeof text, f)) {
            char *end;
            long v = strtol(text, &end, 10);
            if (*end == 'K') v <<= 10; else if (*end == 'M') v <<= 20;
            if (v > best) best = v;
        }
        fclose(f);
    }
    return best;
}

int main(int argc, char **argv) {
    threads = argc > 1 ? atoi(argv[1]) : 0;
    long mib = argc > 2 ? atol(argv[2]) : 0;
    passes = argc > 3 ? atoi(argv[3]) : 9;
    if (threads < 1 || threads > MAX_THREADS || passes < 1 || passes > MAX_PASSES || mib < 0) {
        fprintf(stderr, "usage: bandwidth THREADS [MIB] [PASSES]  (1..%d threads, 1..%d passes)\n", MAX_THREADS, MAX_PASSES);
        return 2;
    }
    if (mib == 0) {
        mib = 8 * last_level_cache_bytes() >> 20;
        if (mib < 256) mib = 256;
    }
    const size_t words = ((size_t)mib << 20) / 8 / (size_t)threads / 8 * 8;
    uint64_t *buffer = aligned_alloc(4096, words * (size_t)threads * 8 + PROBE_PREFETCH_BYTES);
    if (!buffer) { fprintf(stderr, "bandwidth: cannot allocate %ld MiB\n", mib); return 2; }
    // Every page written before timing (no page faults in the passes); the values only keep the sum honest.
    for (size_t i = 0; i < words * (size_t)threads + PROBE_PREFETCH_BYTES / 8; i++) buffer[i] = i * 0x9E3779B97F4A7C15ull;
    pthread_barrier_init(&start_line, NULL, (unsigned)threads);
    pthread_barrier_init(&finish_line, NULL, (unsigned)threads);
    pthread_t ids[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        shares[t] = (share){ buffer + (size_t)t * words, words, 0 };
        if (t > 0 && pthread_create(&ids[t], NULL, worker, &shares[t]) != 0) { fprintf(stderr, "bandwidth: no thread\n"); return 2; }
    }
    worker(&shares[0]);
    uint64_t sink = shares[0].sink;
    for (int t = 1; t < threads; t++) { pthread_join(ids[t], NULL); sink ^= shares[t].sink; }
    const double bytes = (double)words * (double)threads * 8;
    double all[2 * MAX_PASSES], best[2] = {0, 0};
    for (int v = 0; v < 2; v++)
        for (int p = 0; p < passes; p++) {
            const double gbs = bytes / times[v][p] / 1e9;
            all[v * passes + p] = gbs;
            if (gbs > best[v]) best[v] = gbs;
        }
    // The median of the faster way's passes.
    const int faster = best[1] > best[0];
    qsort(all + faster * passes, (size_t)passes, sizeof(double), probe_by_value);
    const double median = all[faster * passes + passes / 2];
    printf("BANDWIDTH threads=%d mib=%ld passes=%d best_gbs=%.2f median_gbs=%.2f plain_best_gbs=%.2f prefetch_best_gbs=%.2f sink=%llu\n",
           threads, mib, passes, best[faster], median, best[0], best[1], (unsigned long long)(sink & 1));
    free(buffer);
    return 0;
}
