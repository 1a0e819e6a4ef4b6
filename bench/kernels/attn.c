// Decode attention alone (ra_attention with one token) over a KV cache of `depth` positions, for every layer of a
// model shape, on a pool of `threads`: milliseconds per token and GB/s of K and V read. Random F16 caches, one
// per layer, so nothing of one layer's cache is in the CPU caches when the next layer runs (as in a forward pass).
// CPU: the process's CPU time per token (all threads; on a shared machine the wall time also counts waiting).
//
//   attn N_HEAD N_HEAD_KV HEAD_DIM LAYERS DEPTH [THREADS] [STEPS] [WINDOW] [PERIOD] [PATH]
//
// WINDOW > 0 with PERIOD p: layers whose index % p < p - 1 attend to the last WINDOW positions only (Gemma 3);
// PATH: scalar|avx2|native kernels (bench/kernels/attn.sh builds and runs it). Env ATTN_HEAD_MAJOR: the cache in the
// engine's head-major layout (kv_head_stride), else position-major. Env ATTN_PROMPT=N: each step is a prompt batch of N
// tokens after DEPTH cached positions (the step's time is that of the whole batch) instead of one decoded token.
#include "ckernels.h"
#include "ra_memory.h"
#include "ra_ops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

static double seconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t rnd_state = 12345u;
static float frand(void) {   // [-1, 1)
    rnd_state = rnd_state * 1664525u + 1013904223u;
    return (float)(rnd_state >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s N_HEAD N_HEAD_KV HEAD_DIM LAYERS DEPTH [THREADS] [STEPS] [WINDOW] [PERIOD] [scalar|avx2|native]\n", argv[0]);
        return 2;
    }
    const int64_t heads = atoll(argv[1]), kvh = atoll(argv[2]), hd = atoll(argv[3]), layers = atoll(argv[4]);
    const int64_t depth = atoll(argv[5]);
    const int threads = argc > 6 ? atoi(argv[6]) : 2, steps = argc > 7 ? atoi(argv[7]) : 16;
    const int64_t window = argc > 8 ? atoll(argv[8]) : 0, period = argc > 9 ? atoll(argv[9]) : 0;
    if (argc > 10 && strcmp(argv[10], "scalar") == 0) ra_set_cpu_features_mask(0);
    if (argc > 10 && strcmp(argv[10], "avx2") == 0) ra_set_cpu_features_mask(RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C);
    const int64_t prompt = getenv("ATTN_PROMPT") ? atoll(getenv("ATTN_PROMPT")) : 0, nt = prompt > 0 ? prompt : 1;
    const int64_t n_ctx = depth + (prompt > 0 ? prompt : steps), kvd = kvh * hd, qd = heads * hd;
    const size_t cache_bytes = (size_t)(layers * n_ctx * kvd) * 2;
    uint16_t *k = ra_alloc_pages(cache_bytes), *v = ra_alloc_pages(cache_bytes);
    if (getenv("ATTN_HUGE")) { madvise(k, cache_bytes, MADV_HUGEPAGE); madvise(v, cache_bytes, MADV_HUGEPAGE); }
    float *q = malloc((size_t)(layers * nt * qd) * 4), *out = malloc((size_t)(nt * qd) * 4), *row = malloc((size_t)kvd * 4);
    const int64_t scratch_floats = ra_attention_scratch_floats(threads, n_ctx, hd, heads);
    float *scratch = ra_alloc_pages((size_t)scratch_floats * 4);
    if (!k || !v || !q || !out || !row || !scratch) { fprintf(stderr, "out of memory\n"); return 1; }
    // 61 random K and V rows repeated over the cache (filling all of it with fresh values takes longer than the run)
    enum { NR = 61 };
    uint16_t *kr = malloc((size_t)(NR * kvd) * 2), *vr = malloc((size_t)(NR * kvd) * 2);
    if (!kr || !vr) { fprintf(stderr, "out of memory\n"); return 1; }
    for (int64_t r = 0; r < NR; r++) {
        for (int64_t i = 0; i < kvd; i++) row[i] = frand() * 2.0f;
        ra_store_f16_rows(row, kvd, kr + r * kvd, kvd, kvd, 1);
        for (int64_t i = 0; i < kvd; i++) row[i] = frand();
        ra_store_f16_rows(row, kvd, vr + r * kvd, kvd, kvd, 1);
    }
    for (int64_t p = 0; p < layers * n_ctx; p++) {
        memcpy(k + p * kvd, kr + (p % NR) * kvd, (size_t)kvd * 2);
        memcpy(v + p * kvd, vr + (p % NR) * kvd, (size_t)kvd * 2);
    }
    free(kr); free(vr);
    for (int64_t i = 0; i < layers * nt * qd; i++) q[i] = frand();   // each layer's queries (not timed)
    const int head_major = getenv("ATTN_HEAD_MAJOR") != NULL;
    ra_pool *pool = ra_pool_create(threads);
    double best = 1e30, total = 0, bytes = 0, cpu = 0;
    for (int s = -2; s < steps; s++) {      // two warm-up steps
        const int64_t pos = depth + (s < 0 || prompt > 0 ? 0 : s);
        const double t0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        double b = 0;
        for (int64_t l = 0; l < layers; l++) {
            const int local = window > 0 && period > 0 && l % period < period - 1;
            const int64_t span = local && pos + nt > window ? window : pos + nt;
            b += (double)(span * kvd * 4);
            ra_attention_params p = { q + l * nt * qd, qd, k + l * n_ctx * kvd, v + l * n_ctx * kvd, head_major ? hd : kvd, out, qd, nt, pos,
                                      local ? window : 0, heads, kvh, hd, 1.0f / sqrtf((float)hd), scratch,
                                      head_major ? n_ctx * hd : 0 };
            ra_attention(pool, &p);
        }
        const double t = seconds(CLOCK_MONOTONIC) - t0;
        if (s >= 0) {
            total += t;
            cpu += seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
            bytes += b;
            if (t < best) best = t;
        }
    }
    printf("attn heads %lld/%lld hd %lld layers %lld depth %lld tokens %lld threads %d path %s: %.3f ms/step (best %.3f, CPU %.3f), %.1f GB/s of K+V\n",
           (long long)heads, (long long)kvh, (long long)hd, (long long)layers, (long long)depth, (long long)nt, threads,
           ra_kernel_path_name(ra_kernel_path()), total / steps * 1e3, best * 1e3, cpu / steps * 1e3, bytes / total * 1e-9);
    ra_pool_destroy(pool);
    ra_free_pages(k, cache_bytes);
    ra_free_pages(v, cache_bytes);
    ra_free_pages(scratch, (size_t)scratch_floats * 4);
    free(q); free(out); free(row);
    return 0;
}
