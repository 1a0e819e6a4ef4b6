// Where the VM's CPUs sit relative to each other: the one-way latency of a cache line handed back and forth between
// two threads pinned to CPUs A and B (bench/engine/placement.sh runs it next to the bandwidth probe). Two cores that
// share a last-level cache hand a line over in tens of nanoseconds; cores on different dies (AMD's CCDs) take
// hundreds, and then also read memory through two links, which is what the probe's fast spells on the Zen 4 EPYC were
// (bench/results/engine-notes.md, "Stop 46"). Linux only, like the rest of bench/engine.
//
//   placement [A B] [ROUND_TRIPS]      prints: PLACEMENT cpus=A,B oneway_ns=X
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long turn;   // odd: the pinger's, even: the ponger's, counting hand-offs
static long trips = 200000;

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *ponger(void *arg) {
    const int cpu = *(const int *)arg;
    if (pin(cpu) != 0) {
        fprintf(stderr, "placement: cannot pin to CPU %d\n", cpu);
        exit(2);
    }
    for (long i = 0; i < trips; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1) {}
        atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    if (argc > 3) trips = atol(argv[3]);
    if (trips < 1 || pin(a) != 0) {
        fprintf(stderr, "usage: placement [A B] [ROUND_TRIPS] (CPUs this process may run on)\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, ponger, &b) != 0) return 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < trips; i++) {
        atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2) {}
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    const double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)trips / 2.0;
    printf("PLACEMENT cpus=%d,%d oneway_ns=%.0f\n", a, b, ns);
    return 0;
}
