// Edge-case check of the dot kernels against scalar, run by bench/kernels/arm.sh (and usable on any
// architecture): every SIMD path this CPU offers is compared with the scalar one on rows the benchmark does
// not make: weight blocks of random bytes (every quant pattern; Q8_0 blocks of all -128 too), activations of
// ±1 (quantized to ±127, the largest int8 products), several row lengths. Exits 1 when a path differs from
// scalar by more than 1e-5 of the largest |scalar| result of the same type, length and data.
#include "ckernels.h"
#include "paths.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint32_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)(rng >> 16); }

enum { ROWS = 16 };

int main(void) {
    const int types[] = { RA_Q8_0, RA_Q4_0, RA_Q4_K, RA_Q5_K, RA_Q6_K };
    const char *names[] = { "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K" };
    const int64_t lengths[] = { 256, 512, 2304, 4096 };
    // the SIMD paths this CPU can run (cand[0] is scalar, the reference)
    kernel_path cand[8];
    const int ncand = runnable_paths(cand, 8);
    int failed = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int type = types[t], xtype = ra_vec_dot_type(type);
        double worst[8] = {0};
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
            for (int data = 0; data < 3; data++) {   // 0: random activations, 1: ±1, 2: ±1 and Q8_0 weights of -128
                const int64_t n = lengths[k], wrow = ra_row_bytes(type, n), bb = ra_type_block_bytes(type);
                const int64_t xrow = ra_row_bytes(xtype, n);
                uint8_t *w = malloc((size_t)(wrow * ROWS)), *x = malloc((size_t)xrow);
                float *xf = malloc((size_t)n * sizeof(float)), ref[ROWS], out[ROWS];
                for (int64_t i = 0; i < wrow * ROWS; i++) w[i] = (uint8_t)rnd();
                for (int64_t b = 0; b < wrow * ROWS / bb; b++) {
                    // sane scales (random halves can be inf/NaN), the quants stay random
                    uint8_t *blk = w + b * bb;
                    const uint16_t d = ra_fp32_to_fp16(0.001f + (float)(rnd() % 1000) * 1e-5f);
                    const uint16_t dm = ra_fp32_to_fp16((float)(rnd() % 1000) * 1e-6f);
                    if (type == RA_Q6_K) memcpy(blk + 208, &d, 2);
                    else memcpy(blk, &d, 2);
                    if (type == RA_Q4_K || type == RA_Q5_K) memcpy(blk + 2, &dm, 2);
                    if (type == RA_Q8_0 && data == 2) memset(blk + 2, 0x80, 32);
                }
                for (int64_t i = 0; i < n; i++)
                    xf[i] = data == 0 ? (float)((int)(rnd() % 2001) - 1000) / 1000.0f : (i % 3 ? 1.0f : -1.0f);
                ra_quantize_row(xtype, xf, x, n);
                ra_set_cpu_features_mask(0);
                double scale = 0;
                for (int r = 0; r < ROWS; r++) scale = fmax(scale, fabs(ref[r] = ra_vec_dot(type, n, w + r * wrow, x)));
                for (int p = 1; p < ncand; p++) {
                    ra_set_cpu_features_mask(cand[p].mask);
                    for (int r = 0; r < ROWS; r++) out[r] = ra_vec_dot(type, n, w + r * wrow, x);
                    for (int r = 0; r < ROWS; r++) {
                        const double rel = fabs((double)out[r] - ref[r]) / (scale + 1e-30);
                        if (!(rel <= worst[p])) worst[p] = rel == rel ? rel : INFINITY;
                    }
                }
                free(w); free(x); free(xf);
            }
        printf("%-5s", names[t]);
        for (int p = 1; p < ncand; p++) {
            printf("  %s %.2g", ra_kernel_path_name(cand[p].path), worst[p]);
            if (!(worst[p] <= 1e-5)) { printf(" FAIL"); failed = 1; }
        }
        printf("\n");
    }
    ra_set_cpu_features_mask(-1);
    printf("edge cases: %s\n", failed ? "FAIL: a path differs from scalar by more than 1e-5" : "every path agrees with scalar within 1e-5");
    return failed;
}
