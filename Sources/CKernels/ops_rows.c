// Row-wise steps between the matrix products of a forward pass, fused into one pass of the pool over the batch's
// rows: the residual add (with Gemma's post-norm of the added rows), RMSNorm, and the quantization of the next
// product's input; SwiGLU/GeGLU and that quantization. Each row gives the bits of the separate ops (ra_rms_norm,
// ra_add, ra_silu_mul / ra_gelu_mul, ra_quantize_rows_par) run one after the other: the same functions per row, and
// on the x86 SIMD paths RMSNorm's double sum of squares kept in the scalar loop's order, one row per vector lane.
#include "ra_ops.h"
#include "ckernels.h"
#include "kernels_internal.h"

#include <math.h>

/// Rows per claimed chunk: the 8 lanes of the x86 sums (ra_sumsq8_avx2).
enum { RA_ROWS_CHUNK = 8 };

#if defined(__x86_64__)
#include <immintrin.h>

/// sums[k] = Σ_i (double)(r[k][i] · r[k][i]) for 8 rows of n, each lane adding in i order as ra_rms_norm's scalar
/// loop does (the float square rounded, converted, added): 4 elements of 4 rows are transposed so that one vector
/// add takes element i of 4 rows; two such chains (rows 0–3 and 4–7) run side by side.
__attribute__((target("avx2,fma")))
static void ra_sumsq8_avx2(const float *const r[8], int64_t n, double sums[8]) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128 a[8];
        for (int k = 0; k < 8; k++) {
            const __m128 v = _mm_loadu_ps(r[k] + i);
            a[k] = _mm_mul_ps(v, v);
        }
        _MM_TRANSPOSE4_PS(a[0], a[1], a[2], a[3]);
        _MM_TRANSPOSE4_PS(a[4], a[5], a[6], a[7]);
        for (int e = 0; e < 4; e++) {
            s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(a[e]));
            s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(a[4 + e]));
        }
    }
    _mm256_storeu_pd(sums, s0);
    _mm256_storeu_pd(sums + 4, s1);
    for (; i < n; i++)
        for (int k = 0; k < 8; k++) sums[k] += (double)(r[k][i] * r[k][i]);
}

/// y = (x · scale) · w (w NULL: x · scale), as ra_rms_norm's loops round it.
__attribute__((target("avx2,fma")))
static void ra_scale_row_avx2(const float *x, float scale, const float *w, float *y, int64_t n) {
    const __m256 s = _mm256_set1_ps(scale);
    int64_t i = 0;
    if (w) {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), s), _mm256_loadu_ps(w + i)));
        for (; i < n; i++) y[i] = (x[i] * scale) * w[i];
    } else {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), s));
        for (; i < n; i++) y[i] = x[i] * scale;
    }
}

/// RMSNorm of `count` (1..8) rows of n, x[k] into y[k] (x and y may be the same rows).
static void ra_rms_rows_x86(float *const x[], const float *w, float *const y[], int count, int64_t n, float eps) {
    const float *r[8];
    double sums[8];
    for (int k = 0; k < 8; k++) r[k] = x[k < count ? k : 0];
    ra_sumsq8_avx2(r, n, sums);
    for (int k = 0; k < count; k++) {
        const float scale = 1.0f / sqrtf((float)(sums[k] / (double)n) + eps);
        ra_scale_row_avx2(x[k], scale, w, y[k], n);
    }
}

/// GeGLU g[i] = gelu(g[i]) · u[i] for i in lo..<hi (ra_gelu_mul's AVX2 path, ops.c) as the scalar loop computes it
/// (the F16 table, inputs >= 10 passed through, <= -10 giving 0), 8 at a time: F16C rounds g as ra_ops_f32_to_f16 does for every value but NaN, whose
/// index is set to that function's (sign | 0x7e00), and a gather reads the table. (The gather reads 4 bytes at each
/// index; only 0xffff, a NaN, would read past the table's end.)
__attribute__((target("avx2,fma,f16c")))
void ra_gelu_mul_avx2(float *g, const float *u, int64_t lo, int64_t hi) {
    const __m256 ten = _mm256_set1_ps(10.0f), minus_ten = _mm256_set1_ps(-10.0f);
    const __m256i low16 = _mm256_set1_epi32(0xffff), nan_pos = _mm256_set1_epi32(0x7e00), nan_neg = _mm256_set1_epi32(0xfe00);
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        __m256i idx = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
        const __m256i nan_idx = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(nan_pos), _mm256_castsi256_ps(nan_neg), x));
        idx = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(idx), _mm256_castsi256_ps(nan_idx), nan));
        const __m256i h = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)ra_gelu_table_f16, idx, 2), low16);
        const __m128i h8 = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(h, h), 0x08));
        __m256 v = _mm256_cvtph_ps(h8);
        v = _mm256_andnot_ps(_mm256_cmp_ps(x, minus_ten, _CMP_LE_OQ), v);          // <= -10: 0
        v = _mm256_blendv_ps(v, x, _mm256_cmp_ps(x, ten, _CMP_GE_OQ));             // >= 10: x
        _mm256_storeu_ps(g + i, _mm256_mul_ps(v, _mm256_loadu_ps(u + i)));
    }
    for (; i < hi; i++) g[i] = (g[i] >= 10.0f ? g[i] : ra_gelu_lookup(g[i])) * u[i];
}
#endif

void ra_rms_norm_rows8(float *const x[], const float *w, float *const y[], int count, int64_t n, float eps) {
#if defined(__x86_64__)
    if (count > 1 && ra_x86_simd_ops()) {
        ra_rms_rows_x86(x, w, y, count, n, eps);
        return;
    }
#endif
    for (int k = 0; k < count; k++) ra_rms_norm(NULL, x[k], w, y[k], n, 1, eps);
}

typedef struct {
    float *x; float *add; const float *add_w; const float *w; float *y; int64_t n; float eps; int qtype; char *q;
    int64_t q_row;
} ra_anq_ctx;

static void ra_anq_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_anq_ctx *c = (const ra_anq_ctx *)p;
    const int64_t n = c->n;
    for (int64_t r0 = lo; r0 < hi; r0 += RA_ROWS_CHUNK) {
        const int count = (int)(hi - r0 < RA_ROWS_CHUNK ? hi - r0 : RA_ROWS_CHUNK);
        float *xs[RA_ROWS_CHUNK], *ys[RA_ROWS_CHUNK], *as[RA_ROWS_CHUNK];
        for (int k = 0; k < count; k++) {
            xs[k] = c->x + (r0 + k) * n;
            ys[k] = c->y + (r0 + k) * n;
            as[k] = c->add ? c->add + (r0 + k) * n : NULL;
        }
        if (c->add) {
            if (c->add_w) ra_rms_norm_rows8(as, c->add_w, as, count, n, c->eps);
            for (int k = 0; k < count; k++)
                for (int64_t i = 0; i < n; i++) xs[k][i] += as[k][i];
        }
        ra_rms_norm_rows8(xs, c->w, ys, count, n, c->eps);
        if (c->qtype >= 0)
            for (int k = 0; k < count; k++) ra_quantize_row(c->qtype, ys[k], c->q + (r0 + k) * c->q_row, n);
    }
}

/// Below this many floats a step runs on the calling thread (as ra_quantize_rows_par).
static int64_t ra_rows_chunk(int64_t rows, int64_t n) { return rows * n < 16384 ? rows : RA_ROWS_CHUNK; }

void ra_add_rms_norm_quant(ra_pool *pool, float *x, float *add, const float *add_w, const float *w, float *y, int64_t n,
                           int64_t rows, float eps, int qtype, void *qdst) {
    ra_anq_ctx c = { x, add, add_w, w, y, n, eps, qtype, (char *)qdst, qtype >= 0 ? ra_row_bytes(qtype, n) : 0 };
    ra_pool_for(pool, rows, ra_rows_chunk(rows, n), ra_anq_task, &c);
}

typedef struct {
    float *gate; const float *up; int64_t n; int gelu; int qtype; char *q; int64_t q_row;
} ra_glu_ctx;

static void ra_glu_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_glu_ctx *c = (const ra_glu_ctx *)p;
    for (int64_t r = lo; r < hi; r++) {
        float *g = c->gate + r * c->n;
        if (c->gelu) ra_gelu_mul(NULL, g, c->up + r * c->n, c->n);
        else ra_silu_mul(NULL, g, c->up + r * c->n, c->n);
        if (c->qtype >= 0) ra_quantize_row(c->qtype, g, c->q + r * c->q_row, c->n);
    }
}

void ra_glu_quant(ra_pool *pool, float *gate, const float *up, int64_t n, int64_t rows, int gelu, int qtype, void *qdst) {
    if (gelu) ra_gelu_table_ready();
    ra_glu_ctx c = { gate, up, n, gelu, qtype, (char *)qdst, qtype >= 0 ? ra_row_bytes(qtype, n) : 0 };
    ra_pool_for(pool, rows, ra_rows_chunk(rows, n), ra_glu_task, &c);
}
