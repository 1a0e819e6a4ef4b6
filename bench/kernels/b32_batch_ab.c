// In-process before/after of the AVX2 batch kernels of the 32-element block types (matmul_avx2_b32.c) on a model's
// layer shapes: the BEFORE build's ra_matmul_b32_side_avx2 (symbols renamed old_*) and the working tree's, called in
// alternation on the same weights and activations, in the engine's row chunks (ops_matmul.c: rows / 64 rounded up to
// 16, at most 64) and with the activation scales converted once per product, as the engine calls them. Single thread,
// thread CPU time; checks that both give the same bits. Built and run by b32_batch_ab.sh.
//
//   b32_batch_ab TYPE NB LAYERS SHAPES      e.g. 3 70 30 576x576,192x576,192x576,576x576,1536x576,1536x576,576x1536
// B32AB_CHUNK=48: rows per chunk for both builds instead of the engine's rule; B32AB_CHUNK_AFTER=48: for the working
// tree's only (B32AB_ANY_BITS=1: time even when the bits differ, for experiments).
// (TYPE: RA_* number, 3 = Q4_1; SHAPES: rows x n of one layer's products; LAYERS copies of the layer's weights, so that
// as in a forward pass the weights come from memory, not the cache.)
#include "ckernels.h"
#include "kernels_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void old_b32_side_avx2(int weight_type, const void *x, int64_t n, int64_t nb, float *side);
int old_matmul_b32_side_avx2(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                             float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
typedef int (*side_fn)(int, const void *, int64_t, const void *, const float *, int64_t, float *, int64_t, int64_t, int64_t,
                       uint8_t *, int64_t);

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static float frand(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)(uint32_t)(rng >> 16) / 4294967296.0f * 2.0f - 1.0f;
}
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b) { const double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

enum { MAXS = 16 };
static int64_t rows_[MAXS], n_[MAXS];
static int nshapes;
static int64_t g_chunk[2];   // B32AB_CHUNK, B32AB_CHUNK_AFTER: rows per chunk instead of the engine's rule

// One forward pass's products of every layer with kernel f; returns seconds per shape summed over the layers.
static void pass(side_fn f, int type, int layers, int64_t nb, void **w, void **x, float **side, float **out, uint8_t *scratch,
                 int64_t sbytes, double *t) {
    for (int l = 0; l < layers; l++)
        for (int s = 0; s < nshapes; s++) {
            int64_t chunk = rows_[s] / 64;
            if (chunk > 64) chunk = 64;
            chunk = (chunk + 15) & ~(int64_t)15;
            if (chunk < 16) chunk = 16;
            if (g_chunk[f == ra_matmul_b32_side_avx2] > 0) chunk = g_chunk[f == ra_matmul_b32_side_avx2];
            const double t0 = now();
            for (int64_t r = 0; r < rows_[s]; r += chunk)
                if (!f(type, w[l * nshapes + s], n_[s], x[s], side[s], nb, out[s], rows_[s], r, r + chunk < rows_[s] ? r + chunk : rows_[s],
                       scratch, sbytes)) { fprintf(stderr, "kernel declined\n"); exit(1); }
            t[s] += now() - t0;
        }
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: %s TYPE NB LAYERS RxN,...\n", argv[0]); return 2; }
    const int type = atoi(argv[1]), xtype = ra_vec_dot_type(type);
    const int64_t nb = atoll(argv[2]);
    const int layers = atoi(argv[3]);
    if (getenv("B32AB_CHUNK")) g_chunk[0] = g_chunk[1] = atoll(getenv("B32AB_CHUNK"));
    if (getenv("B32AB_CHUNK_AFTER")) g_chunk[1] = atoll(getenv("B32AB_CHUNK_AFTER"));
    for (char *p = argv[4]; *p && nshapes < MAXS;) {
        rows_[nshapes] = strtoll(p, &p, 10);
        if (*p++ != 'x') break;
        n_[nshapes++] = strtoll(p, &p, 10);
        while (*p == ',') p++;
    }
    void **w = calloc((size_t)(layers * nshapes), sizeof(void *));
    void *x[MAXS];
    float *side[MAXS], *out[2][MAXS];
    int64_t sbytes = 0;
    float *row = NULL;
    for (int s = 0; s < nshapes; s++) {
        const int64_t n = n_[s], rb = ra_row_bytes(type, n), xb = ra_row_bytes(xtype, n);
        row = realloc(row, (size_t)n * sizeof(float));
        for (int l = 0; l < layers; l++) {
            uint8_t *m = aligned_alloc(64, (size_t)((rows_[s] * rb + 63) / 64 * 64));
            for (int64_t r = 0; r < rows_[s]; r++) {
                for (int64_t i = 0; i < n; i++) row[i] = frand() * 0.05f;
                ra_quantize_row(type, row, m + r * rb, n);
            }
            w[l * nshapes + s] = m;
        }
        uint8_t *a = aligned_alloc(64, (size_t)((nb * xb + 63) / 64 * 64));
        for (int64_t b = 0; b < nb; b++) {
            for (int64_t i = 0; i < n; i++) row[i] = frand();
            ra_quantize_row(xtype, row, a + b * xb, n);
        }
        x[s] = a;
        // the scales, then for Q8_0 the rows in int16 (as ra_matmul_side gives them; the BEFORE build reads the scales only)
        side[s] = aligned_alloc(64, (size_t)((2 * (n / 32) * nb * 4 + n * nb * 2 + 16 + 63) / 64 * 64));
        ra_b32_side_avx2(type, a, n, nb, side[s]);
        if (type == RA_Q8_0) ra_q8_0_widen_avx2(a, n, nb, (int16_t *)(void *)(side[s] + 2 * (n / 32) * nb));
        for (int k = 0; k < 2; k++) out[k][s] = malloc((size_t)(rows_[s] * nb) * sizeof(float));
        if (RA_B32_BATCH_SCRATCH(n, nb) > sbytes) sbytes = RA_B32_BATCH_SCRATCH(n, nb);
        if (RA_Q8_0_BATCH_SCRATCH(n, nb) > sbytes) sbytes = RA_Q8_0_BATCH_SCRATCH(n, nb);   // (Q8_0's int16 panels)
    }
    uint8_t *scratch = malloc((size_t)sbytes);
    enum { RUNS = 15 };
    double t[2][RUNS][MAXS];
    memset(t, 0, sizeof t);
    side_fn fn[2] = { old_matmul_b32_side_avx2, ra_matmul_b32_side_avx2 };
    for (int k = 0; k < 2; k++) {   // warm-up, then the bits
        double junk[MAXS] = {0};
        pass(fn[k], type, 1, nb, w, x, side, out[k], scratch, sbytes, junk);
    }
    for (int s = 0; s < nshapes; s++)
        if (memcmp(out[0][s], out[1][s], (size_t)(rows_[s] * nb) * sizeof(float))) {
            printf("DIFFERENT BITS on shape %lldx%lld\n", (long long)rows_[s], (long long)n_[s]);
            if (!getenv("B32AB_ANY_BITS")) return 1;
        }
    for (int r = 0; r < RUNS; r++)
        for (int k = 0; k < 2; k++) pass(fn[k], type, layers, nb, w, x, side, out[k], scratch, sbytes, t[k][r]);
    printf("type %d, nb %lld, %d layers, same bits; ms per pass, median of %d (after/before)\n", type, (long long)nb, layers, RUNS);
    double tot[2][RUNS] = {{0}};
    for (int s = 0; s < nshapes; s++) {
        double med[2];
        for (int k = 0; k < 2; k++) {
            double v[RUNS];
            for (int r = 0; r < RUNS; r++) { v[r] = t[k][r][s]; tot[k][r] += v[r]; }
            qsort(v, RUNS, sizeof v[0], cmpd);
            med[k] = v[RUNS / 2];
        }
        printf("%5lldx%-5lld before %7.3f  after %7.3f  %.3f\n", (long long)rows_[s], (long long)n_[s], med[0] * 1e3, med[1] * 1e3, med[1] / med[0]);
    }
    for (int k = 0; k < 2; k++) qsort(tot[k], RUNS, sizeof tot[k][0], cmpd);
    printf("total       before %7.3f  after %7.3f  %.3f\n", tot[0][RUNS / 2] * 1e3, tot[1][RUNS / 2] * 1e3, tot[1][RUNS / 2] / tot[0][RUNS / 2]);
    return 0;
}
