// Small helpers of the in-process kernel benchmarks (rows_ab.c, decode_split.c): a wall clock, a seeded xorshift
// for weights and activations, and the comparison that sorts trial times for best and median.
#ifndef RUNANYWHERE_BENCH_KERNEL_TRIAL_H
#define RUNANYWHERE_BENCH_KERNEL_TRIAL_H
#include <stdint.h>
#include <time.h>

static double trial_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t trial_rng_state = 88172645463325252ull;
static uint32_t trial_rnd(void) {
    trial_rng_state ^= trial_rng_state << 13;
    trial_rng_state ^= trial_rng_state >> 7;
    trial_rng_state ^= trial_rng_state << 17;
    return (uint32_t)trial_rng_state;
}

static int trial_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif
