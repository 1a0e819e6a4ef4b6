// In-process before/after of the AVX2 decode rows kernels: the `rows` entry of two builds of the AVX2 table (the old one's
// symbols renamed by rows_ab.sh) called in alternation on the same weights, 300 trials each; prints the best and the
// median GB/s of each and whether their outputs are bit-identical. Alternating within one process lets bursts of load
// from other jobs hit both sides alike. Built and run by bench/kernels/rows_ab.sh.
//
//   rows_ab TYPE N ROWS DI     (TYPE: RA_* weight type, N columns, ROWS rows, DI: the RA_DI_* index of the type)
// ROWS_AB_MEMORY=1: cycle through 256 MB of matrices (from memory) instead of one (from cache);
// ROWS_AB_CHUNK=R: call R rows at a time and skip every other chunk, as one of two threads takes turns in decode.
#include "ckernels.h"
#include "kernels_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trial.h"

#if defined(__x86_64__)
extern const ra_dot_table ra_dots_avx2, old_dots_avx2;

// One pass over matrix k's rows (every other chunk of ch rows when ch < rows).
static void pass(ra_dot_rows_fn f, int64_t n, const uint8_t *w, int64_t wrow, int64_t rows, int64_t ch, const void *x, float *out) {
    for (int64_t c = 0; c < rows; c += 2 * ch) f(n, w + c * wrow, wrow, c + ch < rows ? ch : rows - c, x, NULL, out + c);
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: rows_ab TYPE N ROWS DI\n"); return 2; }
    const int type = atoi(argv[1]), di = atoi(argv[4]);
    const int64_t n = atol(argv[2]), rows = atol(argv[3]);
    const int mem = getenv("ROWS_AB_MEMORY") && atoi(getenv("ROWS_AB_MEMORY"));
    const int64_t ch = getenv("ROWS_AB_CHUNK") ? atol(getenv("ROWS_AB_CHUNK")) : rows;
    const ra_dot_rows_fn A = old_dots_avx2.rows[di], B = ra_dots_avx2.rows[di];
    const int64_t wrow = ra_row_bytes(type, n), mat = wrow * rows, nmat = mem ? (256 << 20) / mat + 1 : 1;
    const int at = ra_vec_dot_type(type);
    if (!A || !B || wrow <= 0 || ch < 1 || at < 0) { fprintf(stderr, "no rows kernel for type %d (di %d), n %ld\n", type, di, (long)n); return 2; }
    uint8_t *W = malloc((size_t)(mat * nmat));
    float *xf = malloc((size_t)n * sizeof(float)), *o1 = malloc((size_t)rows * sizeof(float)), *o2 = malloc((size_t)rows * sizeof(float));
    void *X = malloc((size_t)ra_row_bytes(at, n) + 64);
    if (!W || !xf || !o1 || !o2 || !X) { fprintf(stderr, "out of memory\n"); return 2; }
    for (int64_t i = 0; i < mat * nmat; i++) W[i] = (uint8_t)trial_rnd();
    const int64_t bb = ra_type_block_bytes(type);
    for (int64_t b = 0; b < mat * nmat / bb; b++) {   // finite half scales (d, and m or dmin where the type has one)
        const uint16_t d = ra_fp32_to_fp16((float)(trial_rnd() % 1000) * 1e-5f + 1e-4f), m = ra_fp32_to_fp16(-(float)(trial_rnd() % 1000) * 1e-4f);
        memcpy(W + b * bb + (type == RA_Q6_K ? bb - 2 : 0), &d, 2);   // Q6_K keeps d at the end of its block
        if (type == RA_Q4_1 || type == RA_Q5_1) memcpy(W + b * bb + 2, &m, 2);
        if (type == RA_Q4_K || type == RA_Q5_K) memcpy(W + b * bb + 2, &d, 2);
    }
    for (int64_t i = 0; i < n; i++) xf[i] = (float)((int)(trial_rnd() % 2001) - 1000) * 1e-3f;
    ra_quantize_row(at, xf, X, n);
    ra_set_cpu_features_mask(RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C);   // fills the F16 table the kernels may use
    ra_vec_dot(type, n, W, X);
    A(n, W, wrow, rows, X, NULL, o1);
    B(n, W, wrow, rows, X, NULL, o2);
    printf("outputs: %s\n", memcmp(o1, o2, (size_t)rows * sizeof(float)) ? "DIFFER" : "bit-identical");
    enum { T = 300 };
    static double ta[T], tb[T];
    const int inner = mem ? 1 : 20;
    int64_t k = 0, done = 0;
    for (int64_t c = 0; c < rows; c += 2 * ch) done += c + ch < rows ? ch : rows - c;
    for (int t = 0; t < T; t++) {
        double t0 = trial_now();
        for (int i = 0; i < inner; i++, k = (k + 1) % nmat) pass(A, n, W + k * mat, wrow, rows, ch, X, o1);
        ta[t] = (trial_now() - t0) / inner;
        t0 = trial_now();
        for (int i = 0; i < inner; i++, k = (k + 1) % nmat) pass(B, n, W + k * mat, wrow, rows, ch, X, o2);
        tb[t] = (trial_now() - t0) / inner;
    }
    qsort(ta, T, sizeof(double), trial_cmp);
    qsort(tb, T, sizeof(double), trial_cmp);
    const double bytes = (double)(done * wrow);
    printf("type %d n %ld rows %ld chunk %ld, %s: before best %.2f median %.2f GB/s | after best %.2f median %.2f GB/s | after/before best %.3f median %.3f\n",
           type, (long)n, (long)rows, (long)ch, mem ? "from memory" : "in cache", bytes / ta[0] / 1e9, bytes / ta[T / 2] / 1e9,
           bytes / tb[0] / 1e9, bytes / tb[T / 2] / 1e9, ta[0] / tb[0], ta[T / 2] / tb[T / 2]);
    return 0;
}
#else
int main(void) { fprintf(stderr, "rows_ab: x86-64 only\n"); return 2; }
#endif
