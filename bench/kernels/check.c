// Correctness check of every kernel path against the scalar one, run by bench/kernels/arm.sh under qemu (and
// usable on any architecture: it compares whatever paths the CPU offers). Exits 1 when anything fails, after
// printing every check. A check fails on a difference above its tolerance and on any NaN difference.
//   dots     every weight type, row lengths with and without tails, four kinds of data (weights quantized from
//            random floats; random weight bytes with sane scales, so every quant pattern; activations of ±1, the
//            largest int8 products; every quant byte 0xFF against activations of one sign per row, the largest sums
//            a block or sub-block can reach): |path - scalar| <= 1e-5 of max|scalar| over the rows
//   batches  ra_matmul_rows with 1..8 activation rows equals, bit for bit, ra_vec_dot on the same path for every
//            row (the multi-row kernels and panels sum in the dot's order): every type on every path.
//   quantize ra_quantize_row of every activation format (random values, ties, zeros, NaN, inf, subnormals):
//            byte for byte the scalar output
//   ops      RMSNorm, RoPE, softmax, SwiGLU, attention over an F16 cache (ops_check.c)
#include "ckernels.h"
#include "paths.h"
#include "check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dULL;
void check_seed(uint32_t seed) { rng = 0x9e3779b97f4a7c15ULL ^ seed; }
uint32_t check_rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)(rng >> 16); }
float check_frand(void) { return (float)check_rnd() / 4294967296.0f * 2.0f - 1.0f; }

kernel_path check_paths[8];
int check_npaths;
static int g_failed;

void check_report(const char *what, int p, double worst, long bad, double tol) {
    const int fail = !(worst <= tol) || bad > 0;
    printf("%-28s %-13s worst %-9.2g", what, ra_kernel_path_name(check_paths[p].path), worst);
    if (bad >= 0) printf(" mismatches %-5ld", bad);
    printf(" %s\n", fail ? "FAIL" : "ok");
    g_failed |= fail;
}

// Relative difference that counts a NaN (on either side, or in the scale) as infinitely bad.
double check_rel(double got, double want, double scale) {
    const double r = fabs(got - want) / (scale + 1e-30);
    return r == r ? r : INFINITY;
}

static void *make_weights(int type, int64_t rows, int64_t n, int data) {
    const int64_t rb = ra_row_bytes(type, n), bb = ra_type_block_bytes(type);
    uint8_t *w = malloc((size_t)(rows * rb));
    float *row = malloc((size_t)n * sizeof(float));
    for (int64_t r = 0; r < rows; r++) {
        uint8_t *dst = w + r * rb;
        if (data == 0 && ra_quantize_supported(type)) {
            for (int64_t i = 0; i < n; i++) row[i] = check_frand() * 0.05f;
            ra_quantize_row(type, row, dst, n);
            continue;
        }
        if (bb == 2 || bb == 4) {   // float rows: random values (random bytes would be NaN/inf)
            for (int64_t i = 0; i < n; i++) row[i] = check_frand() * (data == 2 ? 4.0f : 0.5f);
            ra_quantize_row(type, row, dst, n);
            continue;
        }
        for (int64_t i = 0; i < rb; i++) dst[i] = data == 3 ? 0xFF : (uint8_t)check_rnd();
        for (int64_t b = 0; b < rb / bb; b++) {   // sane scales (random halves can be inf/NaN), random quants
            uint8_t *blk = dst + b * bb;
            const uint16_t d = ra_fp32_to_fp16(0.001f + (float)(check_rnd() % 1000) * 1e-5f);
            const uint16_t dm = ra_fp32_to_fp16((float)(check_rnd() % 1000) * 1e-6f);
            if (type == RA_Q6_K) memcpy(blk + 208, &d, 2);
            else if (type == RA_Q3_K) memcpy(blk + 108, &d, 2);
            else if (type == RA_Q2_K) { memcpy(blk + 80, &d, 2); memcpy(blk + 82, &dm, 2); }
            else memcpy(blk, &d, 2);
            if (type == RA_Q4_K || type == RA_Q5_K || type == RA_Q4_1 || type == RA_Q5_1) memcpy(blk + 2, &dm, 2);
            if (type == RA_Q8_0 && data == 2) memset(blk + 2, 0x80, 32);   // -128, the int8 extreme
        }
    }
    free(row);
    return w;
}

enum { ROWS = 6, MAXNB = 8 };

static void check_dots(int type, const char *name) {
    const int xtype = ra_vec_dot_type(type), bs = (int)ra_type_block_size(type);
    const int64_t float_n[] = { 1, 3, 15, 16, 17, 100, 1027 }, q32_n[] = { 32, 64, 96, 1024, 4128 }, k_n[] = { 256, 512, 2304 };
    const int64_t *ns = bs == 1 ? float_n : bs == 32 ? q32_n : k_n;
    const int nn = bs == 1 ? 7 : bs == 32 ? 5 : 3;
    double worst[8] = {0};
    long bad[8] = {0};
    for (int k = 0; k < nn; k++)
        for (int data = 0; data < 4; data++) {
            const int64_t n = ns[k], wrow = ra_row_bytes(type, n), xrow = ra_row_bytes(xtype, n);
            uint8_t *w = make_weights(type, ROWS, n, data), *x = malloc((size_t)(xrow * MAXNB));
            float *xf = malloc((size_t)n * sizeof(float));
            ra_set_cpu_features_mask(0);   // the same activation bytes for every path
            for (int b = 0; b < MAXNB; b++) {
                for (int64_t i = 0; i < n; i++)
                    xf[i] = data == 0 ? check_frand() : data == 1 ? (float)((int)(check_rnd() % 2001) - 1000) / 1000.0f
                          : data == 2 ? ((i + b) % 3 ? 1.0f : -1.0f) : (b % 2 ? -1.0f : 1.0f);
                ra_quantize_row(xtype, xf, x + b * xrow, n);
            }
            float ref[ROWS * MAXNB], dot[ROWS * MAXNB], out[ROWS * MAXNB];
            double scale = 0;
            for (int b = 0; b < MAXNB; b++)
                for (int r = 0; r < ROWS; r++) scale = fmax(scale, fabs(ref[b * ROWS + r] = ra_vec_dot(type, n, w + r * wrow, x + b * xrow)));
            for (int p = 1; p < check_npaths; p++) {
                ra_set_cpu_features_mask(check_paths[p].mask);
                for (int b = 0; b < MAXNB; b++)
                    for (int r = 0; r < ROWS; r++) {
                        const int o = b * ROWS + r;
                        dot[o] = ra_vec_dot(type, n, w + r * wrow, x + b * xrow);
                        const double rel = check_rel(dot[o], ref[o], scale);
                        if (!(rel <= worst[p])) worst[p] = rel;
                    }
                for (int nb = 1; nb <= MAXNB; nb++) {
                    for (int o = 0; o < ROWS * MAXNB; o++) out[o] = -12345.0f;
                    ra_matmul_rows(type, w, n, x, nb, out, ROWS, 0, ROWS);
                    for (int o = 0; o < ROWS * MAXNB; o++) {
                        const float want = o < nb * ROWS ? dot[o] : -12345.0f;
                        if (memcmp(&out[o], &want, 4) != 0) bad[p]++;
                    }
                }
            }
            ra_set_cpu_features_mask(-1);
            free(w); free(x); free(xf);
        }
    char what[40];
    for (int p = 1; p < check_npaths; p++) {
        snprintf(what, sizeof what, "dot %s", name);
        check_report(what, p, worst[p], -1, 1e-5);
        snprintf(what, sizeof what, "batch %s (bits = dot)", name);
        check_report(what, p, 0, bad[p], 0);
    }
}

static void check_quantize(int type, const char *name) {
    enum { N = 4096 };
    static float x[N];
    static uint8_t ref[N * 4 + 64], out[N * 4 + 64];
    long bad[8] = {0};
    const int64_t bytes = ra_row_bytes(type, N);
    for (int data = 0; data < 3; data++) {
        for (int i = 0; i < N; i++) x[i] = check_frand() * (data == 2 ? 1e-3f : 3.0f);
        if (data > 0) {
            for (int j = 0; j < 32; j++) x[32 + j] = 0.0f;                       // a zero block
            for (int j = 0; j < 32; j++) x[64 + j] = (float)(j - 16) + 0.5f;      // amax 15.5: ties after scaling
            x[96] = 127.0f;                                                       // multiplier 1: x.5 values tie
            for (int j = 1; j < 32; j++) x[96 + j] = (float)(j - 16) + 0.5f;
            x[200] = NAN; x[300] = INFINITY; x[301] = -INFINITY; x[400] = -0.0f;
            x[500] = 1e-40f; x[501] = -3e-39f; x[502] = 6e-8f; x[503] = 65520.0f; x[504] = -65504.0f;
            for (int j = 0; j < 256; j++) x[1024 + j] = j % 2 ? -2.0f : 2.0f;     // equal magnitudes: first wins
        }
        ra_set_cpu_features_mask(0);
        ra_quantize_row(type, x, ref, N);
        for (int p = 1; p < check_npaths; p++) {
            ra_set_cpu_features_mask(check_paths[p].mask);
            memset(out, 0xa5, sizeof out);
            ra_quantize_row(type, x, out, N);
            for (int64_t i = 0; i < bytes; i++) bad[p] += ref[i] != out[i];
        }
    }
    ra_set_cpu_features_mask(-1);
    char what[40];
    snprintf(what, sizeof what, "quantize %s (bytes)", name);
    for (int p = 1; p < check_npaths; p++) check_report(what, p, 0, bad[p], 0);
}

int main(void) {
    check_npaths = runnable_paths(check_paths, 8);
    printf("paths:");
    for (int p = 0; p < check_npaths; p++) printf(" %s", ra_kernel_path_name(check_paths[p].path));
    printf("\n");
    const int types[] = { RA_F32, RA_F16, RA_BF16, RA_Q4_0, RA_Q4_1, RA_Q5_0, RA_Q5_1, RA_Q8_0, RA_Q2_K, RA_Q3_K, RA_Q4_K, RA_Q5_K, RA_Q6_K, RA_IQ4_NL, RA_IQ4_XS };
    const char *names[] = { "F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS" };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) check_dots(types[t], names[t]);
    const int qtypes[] = { RA_Q8_0, RA_Q8_1, RA_Q8_K, RA_F16, RA_BF16 };
    const char *qnames[] = { "Q8_0", "Q8_1", "Q8_K", "F16", "BF16" };
    for (size_t t = 0; t < sizeof qtypes / sizeof qtypes[0]; t++) check_quantize(qtypes[t], qnames[t]);
    g_failed |= check_ops();
    printf("check: %s\n", g_failed ? "FAIL" : "every path agrees with scalar");
    return g_failed;
}
