// Decode-shaped read probe (engine benchmark): reads the byte ranges one decode step streams, in the model file's own
// mapping, as the engine's decode does — each range split across THREADS threads into contiguous equal parts, loads
// with a software prefetch 4 KiB ahead — and no arithmetic. Two ways, pass by pass in alternation:
//   synced: a spinning barrier after every range (a product's end in the engine, at its cheapest: no sleeping, no
//           work hand-off), so the ramp-down and ramp-up of the memory stream at each range boundary are paid as
//           decode pays them;
//   free:   each thread reads its parts of all ranges back to back, one barrier per pass.
// What decode's access pattern can get from this machine's memory, next to bandwidth.c's one flat buffer: the gap
// between bandwidth.c and `synced` is the pattern's (and the hardware's), the gap between `synced` and the engine's
// decode is the engine's (arithmetic, pool, serial work).
//
//   bench/engine/decode_bytes.py --segments MODEL.gguf | step_probe MODEL.gguf THREADS [PASSES]
// Input lines: OFFSET SIZE [NAME]. Map the file the way the engine does (whole file, MADV_HUGEPAGE where Linux has
// it) and read it once before timing, so the passes measure memory, not page faults; bench/engine/pagecache.py sets
// the page-cache state first. Prints one line:
//   STEP_PROBE threads=N segments=S bytes=B passes=P synced_best_gbs=.. synced_median_gbs=.. free_best_gbs=.. free_median_gbs=..
#include "probe.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MAX_THREADS = 64, MAX_PASSES = 1000, MAX_SEGMENTS = 100000 };

typedef struct { uint64_t offset, size; } segment;

static const uint8_t *base;
static segment segs[MAX_SEGMENTS];
static int nsegs, threads, passes;
static double times[2][MAX_PASSES];
static uint64_t sinks[MAX_THREADS];

// A sense-reversing spin barrier: one atomic add per arrival, then spinning on a shared flag.
static atomic_int arrived;
static atomic_int sense;

static void spin_barrier(int *local) {
    *local = !*local;
    if (atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel) == threads - 1) {
        atomic_store_explicit(&arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&sense, *local, memory_order_release);
    } else {
        while (atomic_load_explicit(&sense, memory_order_acquire) != *local) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    }
}

// Thread t's part of a segment: contiguous, equal to within a cache line.
static uint64_t part(const segment *s, int t) {
    const uint64_t lines = (s->size + 63) / 64;
    uint64_t from = lines * (uint64_t)t / (uint64_t)threads * 64, to = lines * (uint64_t)(t + 1) / (uint64_t)threads * 64;
    if (to > s->size) to = s->size;
    if (from > to) from = to;
    return probe_sum(base + s->offset + from, base + s->offset + to, 1);
}

static void *worker(void *arg) {
    const int t = (int)(intptr_t)arg;
    int local = 0;
    uint64_t sink = 0;
    for (int pass = 0; pass < 2 * passes; pass++) {
        const int synced = pass % 2 == 0;
        spin_barrier(&local);
        const double t0 = probe_now();
        for (int i = 0; i < nsegs; i++) {
            sink += part(&segs[i], t);
            if (synced) spin_barrier(&local);
        }
        if (!synced) spin_barrier(&local);
        if (t == 0) times[!synced][pass / 2] = probe_now() - t0;
    }
    sinks[t] = sink;
    return NULL;
}

int main(int argc, char **argv) {
    threads = argc > 2 ? atoi(argv[2]) : 0;
    passes = argc > 3 ? atoi(argv[3]) : 9;
    if (argc < 3 || threads < 1 || threads > MAX_THREADS || passes < 1 || passes > MAX_PASSES) {
        fprintf(stderr, "usage: decode_bytes.py --segments MODEL.gguf | step_probe MODEL.gguf THREADS [PASSES]\n");
        return 2;
    }
    const int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 2; }
    const size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) { perror("mmap"); return 2; }
#ifdef MADV_HUGEPAGE
    madvise(map, size, MADV_HUGEPAGE);
#endif
    base = map;
    char line[512];
    uint64_t bytes = 0;
    while (fgets(line, sizeof line, stdin)) {
        unsigned long long o, s;
        if (sscanf(line, "%llu %llu", &o, &s) != 2) continue;
        if (o + s > size || nsegs == MAX_SEGMENTS) { fprintf(stderr, "step_probe: segment %llu+%llu outside the file or too many\n", o, s); return 2; }
        segs[nsegs++] = (segment){ o, s };
        bytes += s;
    }
    if (nsegs == 0) { fprintf(stderr, "step_probe: no segments on stdin\n"); return 2; }
    uint64_t warm = 0;
    for (int i = 0; i < nsegs; i++) warm += probe_sum(base + segs[i].offset, base + segs[i].offset + segs[i].size, 0);
    pthread_t ids[MAX_THREADS];
    for (int t = 1; t < threads; t++)
        if (pthread_create(&ids[t], NULL, worker, (void *)(intptr_t)t) != 0) { fprintf(stderr, "step_probe: no thread\n"); return 2; }
    worker((void *)(intptr_t)0);
    uint64_t sink = warm ^ sinks[0];
    for (int t = 1; t < threads; t++) { pthread_join(ids[t], NULL); sink ^= sinks[t]; }
    double best[2] = {0, 0}, median[2];
    for (int v = 0; v < 2; v++) {
        double all[MAX_PASSES];
        for (int p = 0; p < passes; p++) {
            all[p] = (double)bytes / times[v][p] / 1e9;
            if (all[p] > best[v]) best[v] = all[p];
        }
        qsort(all, (size_t)passes, sizeof(double), probe_by_value);
        median[v] = all[passes / 2];
    }
    printf("STEP_PROBE threads=%d segments=%d bytes=%llu passes=%d synced_best_gbs=%.2f synced_median_gbs=%.2f free_best_gbs=%.2f "
           "free_median_gbs=%.2f sink=%llu\n", threads, nsegs, (unsigned long long)bytes, passes, best[0], median[0], best[1], median[1],
           (unsigned long long)(sink & 1));
    munmap(map, size);
    close(fd);
    return 0;
}
