// Hand-off latency of the engine's thread pool (pool.c): how long after ra_pool_for publishes a run its worker starts
// on it, when the caller worked alone for GAP microseconds before (a decode step's norms, RoPE, attention, sampling).
// Under RA_SPIN_NS (pool.c) the worker is still spinning; beyond it, it sleeps on the condition variable and is woken
// through the kernel. Built and run by bench/kernels/handoff.sh.
//
//   handoff GAP_US [RUNS]
#include "ra_ops.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/// Longest wait for the worker before a run counts as "the worker did not come" (it was not on a CPU).
#define GIVE_UP_S 2e-3

static _Atomic int started;
static _Atomic int worker_items;

/// Each of the run's two items waits until both have started (or GIVE_UP_S passed), so the run lasts as long as the
/// worker takes to start.
static void item(void *ctx, int64_t lo, int64_t hi, int ith) {
    (void)ctx; (void)lo; (void)hi;
    if (ith != 0) atomic_fetch_add(&worker_items, 1);
    atomic_fetch_add(&started, 1);
    const double t0 = now();
    while (atomic_load(&started) < 2 && now() - t0 < GIVE_UP_S) {}
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: handoff GAP_US [RUNS]\n"); return 2; }
    const double gap = atof(argv[1]);
    const int runs = argc > 2 ? atoi(argv[2]) : 3000;
    if (runs < 10) { fprintf(stderr, "RUNS must be at least 10\n"); return 2; }
    ra_pool *pool = ra_pool_create(2);
    double *d = malloc(sizeof(double) * (size_t)runs);
    if (!pool || !d) { fprintf(stderr, "out of memory or threads\n"); return 1; }
    int missed = 0;
    for (int i = 0; i < runs; i++) {
        const double g0 = now();
        while ((now() - g0) * 1e6 < gap) {}
        atomic_store(&started, 0);
        const double t0 = now();
        ra_pool_for(pool, 2, 1, item, NULL);
        d[i] = (now() - t0) * 1e6;
        missed += d[i] >= GIVE_UP_S * 1e6;
    }
    qsort(d, (size_t)runs, sizeof(double), by_value);
    printf("gap %6.0f us: worker starts after p10 %.2f, median %.2f, p90 %.2f us; not within %.0f ms in %.1f%% of runs; "
           "worker ran %.0f%% of the items\n", gap, d[runs / 10], d[runs / 2], d[runs * 9 / 10], GIVE_UP_S * 1e3,
           100.0 * missed / runs, 50.0 * atomic_load(&worker_items) / runs);
    ra_pool_destroy(pool);
    free(d);
    return 0;
}
