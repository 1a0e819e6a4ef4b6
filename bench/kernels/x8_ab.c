// In-process A/B of decode on the current path: the file's rows (the path's rows kernel) against the same rows repacked at
// load (RA_*_X8, x8.c), the repacked ones both without a software prefetch and with one X8_AB_PREFETCH bytes ahead
// (default 4096; ra_set_x8_prefetch), called in alternation on one activation row, 300 trials
// each; prints best and median GB/s (of the file's bytes), which of the two this CPU uses (ra_x8_prefetch), and whether
// the outputs are bit-identical. Also checks a batch
// (nb = 5) and the scalar path through the repacked rows against the file's rows. Built and run by bench/kernels/x8_ab.sh.
//
//   x8_ab TYPE N ROWS   (TYPE 12: Q4_K, 13: Q5_K, 14: Q6_K, 11: Q3_K, 10: Q2_K, 23: IQ4_XS, 20: IQ4_NL, 2: Q4_0, 6: Q5_0, 3: Q4_1, 7: Q5_1, 8: Q8_0) X8_AB_MEMORY=1: cycle through 256 MB of matrices (from memory)
//                       instead of one (from cache); X8_AB_HUGE=1: in huge pages
#include "ckernels.h"
#include "ra_memory.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "paths.h"
#include "trial.h"

static int same(const float *a, const float *b, int64_t k) { return memcmp(a, b, (size_t)k * sizeof(float)) == 0; }

static const char *type_name(int type) {
    switch (type) {
    case RA_Q4_K: return "Q4_K";
    case RA_Q5_K: return "Q5_K";
    case RA_Q6_K: return "Q6_K";
    case RA_Q3_K: return "Q3_K";
    case RA_Q2_K: return "Q2_K";
    case RA_IQ4_XS: return "IQ4_XS";
    case RA_IQ4_NL: return "IQ4_NL";
    case RA_Q4_0: return "Q4_0";
    case RA_Q5_0: return "Q5_0";
    case RA_Q4_1: return "Q4_1";
    case RA_Q5_1: return "Q5_1";
    case RA_Q8_0: return "Q8_0";
    default: return "?";
    }
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: x8_ab TYPE N ROWS\n"); return 2; }
    const int type = atoi(argv[1]), x8 = ra_x8_type(type);
    const int64_t n = atol(argv[2]), rows = atol(argv[3]);
    const int mem = getenv("X8_AB_MEMORY") && atoi(getenv("X8_AB_MEMORY"));
    // X8_AB_CPU=PATH (avx2, avx512-vnni, ...): that path's features only, as engine-bench --cpu does; one this CPU
    // cannot run is refused rather than measured on another
    int mask = -1;
    if (getenv("X8_AB_CPU")) {
        kernel_path paths[8];
        const int count = runnable_paths(paths, 8);
        for (int p = 0; p < count && mask < 0; p++)
            if (strcmp(ra_kernel_path_name(paths[p].path), getenv("X8_AB_CPU")) == 0) mask = paths[p].mask;
        if (mask < 0) { fprintf(stderr, "X8_AB_CPU: this CPU runs no path %s\n", getenv("X8_AB_CPU")); return 2; }
    }
    ra_set_cpu_features_mask(mask);
    const int64_t wrow = ra_row_bytes(type, n), mat = wrow * rows, xmat = ra_x8_bytes(type, n, rows), bb = ra_type_block_bytes(type);
    if (x8 < 0 || wrow <= 0 || xmat <= 0) { fprintf(stderr, "shape %ld x %ld cannot be repacked\n", (long)n, (long)rows); return 2; }
    const int64_t nmat = mem ? (256 << 20) / mat + 1 : 1;
    // X8_AB_HUGE=1: both sides in pages asked to be huge (ra_advise_huge_pages), as the engine's repacked weights are
    const int huge = getenv("X8_AB_HUGE") && atoi(getenv("X8_AB_HUGE"));
    uint8_t *W = ra_alloc_pages((size_t)(mat * nmat)), *R = ra_alloc_pages((size_t)(xmat * nmat));
    if (huge && W && R) {
        ra_advise_huge_pages(W, (size_t)(mat * nmat));
        ra_advise_huge_pages(R, (size_t)(xmat * nmat));
    }
    enum { NB = 5 };
    float *xf = malloc((size_t)(n * NB) * sizeof(float)), *o1 = malloc((size_t)(rows * NB) * sizeof(float)), *o2 = malloc((size_t)(rows * NB) * sizeof(float));
    const int at = ra_vec_dot_type(type);
    const int64_t xrow = ra_row_bytes(at, n);
    uint8_t *X = malloc((size_t)(xrow * NB));
    if (!W || !R || !xf || !o1 || !o2 || !X) { fprintf(stderr, "out of memory\n"); return 2; }
    for (int64_t i = 0; i < mat * nmat; i++) W[i] = (uint8_t)trial_rnd();
    for (int64_t b = 0; b < mat * nmat / bb; b++) {   // finite half scales d and dmin (Q6_K, Q3_K: d, the block's last 2 bytes;
        const uint16_t d = ra_fp32_to_fp16((float)(trial_rnd() % 1000) * 1e-5f + 1e-4f), m = ra_fp32_to_fp16((float)(trial_rnd() % 1000) * 1e-5f);
        if (type == RA_Q6_K || type == RA_Q3_K) {   //                               Q2_K: d, dmin, its last 4)
            memcpy(W + b * bb + bb - 2, &d, 2);
            continue;
        }
        if (type == RA_Q2_K) {
            memcpy(W + b * bb + bb - 4, &d, 2);
            memcpy(W + b * bb + bb - 2, &m, 2);
            continue;
        }
        memcpy(W + b * bb, &d, 2);
        memcpy(W + b * bb + 2, &m, 2);
    }
    for (int64_t k = 0; k < nmat; k++) ra_x8_repack(type, W + k * mat, n, rows, R + k * xmat);
    for (int64_t i = 0; i < n * NB; i++) xf[i] = (float)((int)(trial_rnd() % 2001) - 1000) * 1e-3f;
    for (int b = 0; b < NB; b++) ra_quantize_row(at, xf + b * n, X + b * xrow, n);
    const int path = ra_kernel_path();
    int ok = 1;
    for (int nb = 1; nb <= NB; nb += NB - 1) {
        for (int p = 0; p < 2; p++) {   // the current path, then scalar
            if (p == 1) ra_set_cpu_features_mask(0);
            memset(o1, 0, (size_t)(rows * NB) * sizeof(float));
            memset(o2, 0xff, (size_t)(rows * NB) * sizeof(float));
            ra_matmul_rows(type, W, n, X, nb, o1, rows, 0, rows);
            ra_matmul_rows(x8, R, n, X, nb, o2, rows, 0, rows);
            const int s = same(o1, o2, rows * nb);
            ok &= s;
            printf("%s, %d activation rows: %s\n", ra_kernel_path_name(ra_kernel_path()), nb, s ? "bit-identical" : "DIFFER");
            ra_set_cpu_features_mask(mask);
        }
    }
    enum { T = 300 };
    static double ta[T], tb[T], tc[T];
    const int own = ra_x8_prefetch(type), ahead = getenv("X8_AB_PREFETCH") ? atoi(getenv("X8_AB_PREFETCH")) : 4096;
    const int inner = mem ? 1 : 20;
    int64_t k = 0;
    for (int t = 0; t < T; t++) {
        double t0 = trial_now();
        for (int i = 0; i < inner; i++, k = (k + 1) % nmat) ra_matmul_rows(type, W + k * mat, n, X, 1, o1, rows, 0, rows);
        ta[t] = trial_now() - t0;
        ra_set_x8_prefetch(0);
        t0 = trial_now();
        for (int i = 0; i < inner; i++, k = (k + 1) % nmat) ra_matmul_rows(x8, R + k * xmat, n, X, 1, o2, rows, 0, rows);
        tb[t] = trial_now() - t0;
        ra_set_x8_prefetch(ahead);
        t0 = trial_now();
        for (int i = 0; i < inner; i++, k = (k + 1) % nmat) ra_matmul_rows(x8, R + k * xmat, n, X, 1, o2, rows, 0, rows);
        tc[t] = trial_now() - t0;
    }
    qsort(ta, T, sizeof(double), trial_cmp);
    qsort(tb, T, sizeof(double), trial_cmp);
    qsort(tc, T, sizeof(double), trial_cmp);
    ra_set_x8_prefetch(-1);
    const double gb = (double)mat * inner / 1e9;
    printf("path %s, %s %ld x %ld, %s: file's rows best %.1f median %.1f GB/s | repacked best %.1f median %.1f GB/s | median ratio %.3f\n",
           ra_kernel_path_name(path), type_name(type), (long)rows, (long)n, mem ? "from memory" : "in cache", gb / ta[0], gb / ta[T / 2],
           gb / tb[0], gb / tb[T / 2], ta[T / 2] / tb[T / 2]);
    printf("  repacked, prefetch %d bytes ahead: best %.1f median %.1f GB/s | median ratio to the file's rows %.3f, to no prefetch %.3f"
           " (this CPU prefetches %d bytes ahead)\n",
           ahead, gb / tc[0], gb / tc[T / 2], ta[T / 2] / tc[T / 2], tb[T / 2] / tc[T / 2], own);
    return ok ? 0 : 1;
}
