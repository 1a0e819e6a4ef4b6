// The float operations of ra_ops.h on every path against the scalar one (part of check.c): RMSNorm, softmax,
// SwiGLU and attention over an F16 cache. Tolerances relative to max|scalar output|: 1e-5, except attention (1e-4),
// whose probabilities are rounded to F16 (a last-bit difference before the rounding can move one by 2^-11 of
// itself; worst seen 1.1e-5, and leaving out the rounding gives more than 1e-4).
#include "ckernels.h"
#include "ra_ops.h"
#include "check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*op_fn)(float *out, int variant);   // runs one operation on fixed inputs into out

enum { NV = 4, MAXOUT = 8192 };

static void op_rms(float *out, int v) {
    static const int64_t ns[NV] = { 7, 64, 576, 2051 };
    const int64_t n = ns[v], rows = 3;
    float *x = malloc((size_t)(n * rows) * 4), *w = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n * rows; i++) x[i] = check_frand() * 3.0f;
    for (int64_t i = 0; i < n; i++) w[i] = 0.5f + check_frand();
    ra_rms_norm(NULL, x, v == 1 ? NULL : w, out, n, rows, 1e-6f);
    free(x); free(w);
}

static void op_softmax(float *out, int v) {
    static const int64_t ns[NV] = { 1, 5, 131, 4099 };
    for (int64_t i = 0; i < ns[v]; i++) out[i] = check_frand() * (v == 3 ? 40.0f : 8.0f);
    ra_softmax(out, ns[v]);
}

static void op_silu(float *out, int v) {
    static const int64_t ns[NV] = { 3, 17, 1000, 8192 };
    const int64_t n = ns[v];
    float *u = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) { out[i] = check_frand() * (v == 3 ? 120.0f : 12.0f); u[i] = check_frand(); }
    ra_silu_mul(NULL, out, u, n);
    free(u);
}

// (head_dim, group, kv heads, window, tokens, pos0)
static const int attn_cfg[NV][6] = { { 8, 1, 4, 0, 4, 5 }, { 64, 4, 2, 0, 1, 40 }, { 32, 3, 2, 6, 5, 9 }, { 128, 8, 1, 0, 3, 20 } };

static void op_attention(float *out, int v) {
    const int hd = attn_cfg[v][0], group = attn_cfg[v][1], kvh = attn_cfg[v][2], window = attn_cfg[v][3];
    const int tokens = attn_cfg[v][4], pos0 = attn_cfg[v][5], heads = group * kvh, n_ctx = pos0 + tokens;
    const int64_t qd = (int64_t)heads * hd, kvd = (int64_t)kvh * hd;
    float *q = malloc((size_t)(tokens * qd) * 4), *kv = malloc((size_t)(n_ctx * kvd) * 4);
    uint16_t *k = malloc((size_t)(n_ctx * kvd) * 2), *vv = malloc((size_t)(n_ctx * kvd) * 2);
    for (int64_t i = 0; i < tokens * qd; i++) q[i] = check_frand() * 2.0f;
    for (int64_t i = 0; i < n_ctx * kvd; i++) kv[i] = check_frand() * 2.0f;
    ra_store_f16_rows(kv, kvd, k, kvd, kvd, n_ctx);
    for (int64_t i = 0; i < n_ctx * kvd; i++) kv[i] = check_frand();
    ra_store_f16_rows(kv, kvd, vv, kvd, kvd, n_ctx);
    float *scratch = malloc((size_t)ra_attention_scratch_floats(1, n_ctx, hd, heads) * 4);
    ra_attention_params p = { q, qd, k, vv, kvd, out, qd, tokens, pos0, window, heads, kvh, hd, 1.0f / sqrtf((float)hd), scratch };
    ra_attention(NULL, &p);
    free(q); free(kv); free(k); free(vv); free(scratch);
}

// Largest |a[i]| (NaN ignored: a NaN output fails through check_rel).
static double max_abs(const float *a, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) {
        const double v = fabs((double)a[i]);
        if (v > m) m = v;
    }
    return m;
}

static int check_op(const char *name, op_fn fn, double tol) {
    static float ref[MAXOUT], out[MAXOUT];
    double worst[8] = {0};
    for (int v = 0; v < NV; v++) {
        // every path regenerates the same inputs from one seed per variant
        const uint32_t seed = check_rnd();
        for (int p = 0; p < check_npaths; p++) {
            check_seed(seed);
            float *dst = p == 0 ? ref : out;
            for (int i = 0; i < MAXOUT; i++) dst[i] = 0.0f;
            ra_set_cpu_features_mask(check_paths[p].mask);
            fn(dst, v);
            if (p == 0) continue;
            const double scale = max_abs(ref, MAXOUT);
            for (int i = 0; i < MAXOUT; i++) {
                const double r = check_rel(out[i], ref[i], scale);
                if (!(r <= worst[p])) worst[p] = r;
            }
        }
    }
    ra_set_cpu_features_mask(-1);
    int failed = 0;
    for (int p = 1; p < check_npaths; p++) {
        check_report(name, p, worst[p], -1, tol);
        failed |= !(worst[p] <= tol);
    }
    return failed;
}

int check_ops(void) {
    int failed = 0;
    failed |= check_op("op rms_norm", op_rms, 1e-5);
    failed |= check_op("op softmax", op_softmax, 1e-5);
    failed |= check_op("op silu_mul (SwiGLU)", op_silu, 1e-5);
    failed |= check_op("op attention (F16 cache)", op_attention, 1e-4);
    return failed;
}
