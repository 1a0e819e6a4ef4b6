// Float operations of the transformer: RMSNorm, RoPE, softmax, SwiGLU, residual adds, attention over an
// F16 KV cache. Portable C that the compiler vectorises; the F16 loads of attention have an F16C/AVX2 path
// chosen at run time on x86-64, and on aarch64 attention, RMSNorm's sum, SwiGLU and softmax have NEON code
// (ops_neon.c) used on the NEON kernel paths.
#include "ra_ops.h"
#include "ckernels.h"
#include "kernels_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define RA_X86 1
#elif defined(__aarch64__)
#include "neon_internal.h"
#define RA_ARM 1
#endif

// MARK: - Half precision

static inline uint32_t ra_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ra_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float ra_ops_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return ra_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        float v = (float)mant * 0x1p-24f;        // zero or subnormal, exact
        return sign ? -v : v;
    }
    return ra_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t ra_ops_f32_to_f16(float f) {
    uint32_t x = ra_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u);   // inf, nan
    if (ax >= 0x477ff000u) return sign | 0x7c00u;                                      // rounds to inf
    if (ax < 0x38800000u) {                                                             // below 2^-14: subnormal
        float v = ra_float(ax) * 0x1p24f;                                               // exact scaling
        return sign | (uint16_t)lrintf(v);                                              // ties to even
    }
    ax += 0xfffu + ((ax >> 13) & 1u);                                                   // round to nearest even
    return sign | (uint16_t)((ax - (112u << 23)) >> 13);
}

void ra_ops_f32_to_f16_row(const float *x, uint16_t *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ra_ops_f32_to_f16(x[i]);
}

// MARK: - Parallel helpers

/// Items per claimed chunk: about four chunks per thread, at least `min`.
static inline int64_t ra_chunk(ra_pool *pool, int64_t n, int64_t min) {
    int64_t c = n / (4 * (int64_t)ra_pool_size(pool));
    return c < min ? min : c;
}

// MARK: - RMSNorm

static void ra_rms_norm_row(const float *x, const float *w, float *y, int64_t n, float eps) {
    double sum = 0.0;
#ifdef RA_ARM
    if (ra_neon_ops_enabled()) sum = ra_neon_sum_squares(x, n);
    else
#endif
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / sqrtf((float)(sum / (double)n) + eps);
    if (w) {
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] * scale) * w[i];
    } else {
        for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale;
    }
}

typedef struct {
    const float *x; const float *w; float *y; int64_t n, rows; float eps;
} ra_rms_ctx;

static void ra_rms_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_rms_ctx *c = (const ra_rms_ctx *)p;
    for (int64_t r = lo; r < hi; r++) ra_rms_norm_row(c->x + r * c->n, c->w, c->y + r * c->n, c->n, c->eps);
}

void ra_rms_norm(ra_pool *pool, const float *x, const float *w, float *y, int64_t n, int64_t rows, float eps) {
    ra_rms_ctx c = { x, w, y, n, rows, eps };
    ra_pool_for(pool, rows, ra_chunk(pool, rows, 1), ra_rms_task, &c);
}

typedef struct {
    float *x; const float *w; int64_t rows, row_stride, n_heads, head_dim; float eps;
} ra_rms_heads_ctx;

static void ra_rms_heads_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_rms_heads_ctx *c = (const ra_rms_heads_ctx *)p;
    for (int64_t i = lo; i < hi; i++) {
        float *h = c->x + (i / c->n_heads) * c->row_stride + (i % c->n_heads) * c->head_dim;
        ra_rms_norm_row(h, c->w, h, c->head_dim, c->eps);
    }
}

void ra_rms_norm_heads(ra_pool *pool, float *x, const float *w, int64_t rows, int64_t row_stride,
                       int64_t n_heads, int64_t head_dim, float eps) {
    ra_rms_heads_ctx c = { x, w, rows, row_stride, n_heads, head_dim, eps };
    const int64_t n = rows * n_heads;
    ra_pool_for(pool, n, rows == 1 ? n : ra_chunk(pool, n, 4), ra_rms_heads_task, &c);
}

// MARK: - RoPE

typedef struct {
    float *x; int64_t rows, row_stride, n_heads, head_dim; const int32_t *pos;
    int n_dims; float freq_base, freq_scale; const float *freq_factors; int neox;
} ra_rope_ctx;

static void ra_rope_row(const ra_rope_ctx *c, int64_t t) {
    const int half = c->n_dims / 2;
    float cs[512], sn[512];                 // n_dims <= 1024
    const float theta_scale = powf(c->freq_base, -2.0f / (float)c->n_dims);
    float theta = (float)c->pos[t];
    for (int i = 0; i < half; i++) {        // theta_i = pos * base^(-2i/n_dims), built up by products like ggml
        const float th = (c->freq_factors ? theta / c->freq_factors[i] : theta) * c->freq_scale;
        cs[i] = cosf(th);
        sn[i] = sinf(th);
        theta *= theta_scale;
    }
    float *row = c->x + t * c->row_stride;
    for (int64_t h = 0; h < c->n_heads; h++) {
        float *v = row + h * c->head_dim;
        if (c->neox) {
            for (int i = 0; i < half; i++) {
                const float a = v[i], b = v[i + half];
                v[i] = a * cs[i] - b * sn[i];
                v[i + half] = a * sn[i] + b * cs[i];
            }
        } else {
            for (int i = 0; i < half; i++) {
                const float a = v[2 * i], b = v[2 * i + 1];
                v[2 * i] = a * cs[i] - b * sn[i];
                v[2 * i + 1] = a * sn[i] + b * cs[i];
            }
        }
    }
}

static void ra_rope_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_rope_ctx *c = (const ra_rope_ctx *)p;
    for (int64_t t = lo; t < hi; t++) ra_rope_row(c, t);
}

void ra_rope(ra_pool *pool, float *x, int64_t rows, int64_t row_stride, int64_t n_heads, int64_t head_dim,
             const int32_t *pos, int n_dims, float freq_base, float freq_scale, const float *freq_factors, int neox) {
    if (n_dims > head_dim) n_dims = (int)head_dim;
    if (n_dims > 1024) n_dims = 1024;
    n_dims &= ~1;
    if (n_dims <= 0) return;
    ra_rope_ctx c = { x, rows, row_stride, n_heads, head_dim, pos, n_dims, freq_base, freq_scale, freq_factors, neox };
    ra_pool_for(pool, rows, ra_chunk(pool, rows, 1), ra_rope_task, &c);
}

// MARK: - Elementwise

void ra_softmax(float *x, int64_t n) {
    if (n <= 0) return;
    float mx = x[0];
    for (int64_t i = 1; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    double sum = 0.0;
#ifdef RA_ARM
    if (ra_neon_ops_enabled()) sum = ra_neon_exp_sub(x, n, mx);
    else
#endif
    for (int64_t i = 0; i < n; i++) {
        const float e = expf(x[i] - mx);
        x[i] = e;
        sum += (double)e;
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t i = 0; i < n; i++) x[i] *= inv;
}

// GELU as ggml computes it on the CPU: the input rounded to F16, the tanh approximation of the rounded value rounded
// to F16 again. There are only 65,536 F16 inputs, so the results are computed once into a table (the same values as
// computing each one: exp/tanh were a fifth of Gemma 3's prompt time).
uint16_t ra_gelu_table_f16[1 << 16];
static pthread_once_t ra_gelu_once = PTHREAD_ONCE_INIT;

static void ra_gelu_table_init(void) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const float h = ra_ops_f16_to_f32((uint16_t)i);
        const float g = 0.5f * h * (1.0f + tanhf(0.79788456080286535587989211986876f * h * (1.0f + 0.044715f * h * h)));
        ra_gelu_table_f16[i] = ra_ops_f32_to_f16(g);
    }
}

void ra_gelu_table_ready(void) { pthread_once(&ra_gelu_once, ra_gelu_table_init); }

float ra_gelu_f16(float x) {
    ra_gelu_table_ready();
    return x >= 10.0f ? x : ra_gelu_lookup(x);
}

/// The elementwise operations one parallel loop runs.
enum { RA_EW_ADD, RA_EW_SILU_MUL, RA_EW_GELU_MUL, RA_EW_SCALE, RA_EW_SOFTCAP };

typedef struct { float *y; const float *x; float s; int op; int simd; } ra_ew_ctx;

static void ra_ew_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_ew_ctx *c = (const ra_ew_ctx *)p;
    float *y = c->y;
    const float *x = c->x;
    const float s = c->s;
    switch (c->op) {
    case RA_EW_ADD:
        for (int64_t i = lo; i < hi; i++) y[i] += x[i];
        break;
    case RA_EW_SILU_MUL:
#ifdef RA_ARM
        if (c->simd) { ra_neon_silu_mul(y, x, lo, hi); break; }
#endif
        for (int64_t i = lo; i < hi; i++) {
            const float g = y[i];
            y[i] = (g / (1.0f + expf(-g))) * x[i];
        }
        break;
    case RA_EW_GELU_MUL:
        for (int64_t i = lo; i < hi; i++) {
            const float g = y[i];
            // ggml multiplies the unrounded input by `up` beyond +10.
            y[i] = (g >= 10.0f ? g : ra_gelu_lookup(g)) * x[i];
        }
        break;
    case RA_EW_SCALE:
        for (int64_t i = lo; i < hi; i++) y[i] *= s;
        break;
    default: {
        const float inv = 1.0f / s;
        for (int64_t i = lo; i < hi; i++) y[i] = tanhf(y[i] * inv) * s;
        break;
    }
    }
}

static void ra_ew(ra_pool *pool, float *y, const float *x, float s, int64_t n, int op, int64_t min_chunk) {
    ra_ew_ctx c = { y, x, s, op, 0 };
#ifdef RA_ARM
    c.simd = ra_neon_ops_enabled();   // the caller's path (pool workers run with the caller's mask)
#endif
    ra_pool_for(pool, n, ra_chunk(pool, n, min_chunk), ra_ew_task, &c);
}

void ra_silu_mul(ra_pool *pool, float *gate, const float *up, int64_t n) { ra_ew(pool, gate, up, 0, n, RA_EW_SILU_MUL, 4096); }

void ra_gelu_mul(ra_pool *pool, float *gate, const float *up, int64_t n) {
    ra_gelu_table_ready();
    ra_ew(pool, gate, up, 0, n, RA_EW_GELU_MUL, 4096);
}

void ra_add(ra_pool *pool, float *y, const float *x, int64_t n) { ra_ew(pool, y, x, 0, n, RA_EW_ADD, 65536); }

void ra_scale(ra_pool *pool, float *x, float s, int64_t n) { ra_ew(pool, x, NULL, s, n, RA_EW_SCALE, 65536); }

void ra_softcap(ra_pool *pool, float *x, float cap, int64_t n) { ra_ew(pool, x, NULL, cap, n, RA_EW_SOFTCAP, 4096); }

void ra_add_bias(float *y, const float *b, int64_t n, int64_t rows) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = y + r * n;
        for (int64_t i = 0; i < n; i++) row[i] += b[i];
    }
}

void ra_store_f16_rows(const float *src, int64_t src_stride, uint16_t *dst, int64_t dst_stride, int64_t n, int64_t rows) {
    for (int64_t r = 0; r < rows; r++) ra_ops_f32_to_f16_row(src + r * src_stride, dst + r * dst_stride, n);
}

int64_t ra_argmax(const float *x, int64_t n) {
    if (n <= 0) return -1;
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

// MARK: - Attention

/// sum_i h[i] * x[i], h in F16.
static float ra_dot_h_f_scalar(const uint16_t *h, const float *x, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += ra_ops_f16_to_f32(h[i]) * x[i];
    return sum;
}

/// y[i] += a * h[i], h in F16.
static void ra_axpy_h_scalar(float *y, const uint16_t *h, float a, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += a * ra_ops_f16_to_f32(h[i]);
}

#ifdef RA_X86
/// The F16 attention loads use AVX2/FMA/F16C when the calling thread's kernel path allows them (so the scalar
/// path, selected by the feature masks, is scalar here too).
static int ra_has_avx2_f16c(void) {
    const int path = ra_kernel_path();
    return path == RA_PATH_AVX2 || path == RA_PATH_AVX512 || path == RA_PATH_AVX512_VNNI;
}
#endif

int64_t ra_attention_scratch_floats(int nth, int64_t n_ctx, int64_t head_dim, int64_t n_head) {
    if (nth < 1) nth = 1;
    const int64_t rows = n_head > 8 ? n_head : 8;     // query rows of one work item: at most max(8, group)
    return (int64_t)nth * (rows * (n_ctx + 2 * head_dim) + 64);
}

typedef struct {
    const ra_attention_params *p;
    int simd;
    int64_t group;          // query heads per kv head
    int64_t block;          // tokens per work item
    int64_t stride;         // scratch floats per thread
} ra_attn_ctx;

#ifdef RA_X86
__attribute__((target("avx2")))
static inline float ra_hsum256(__m256 v) {
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    return _mm_cvtss_f32(s4);
}

// Scores of G query heads against positions [0, n_kv) of one kv head: each K row is converted once and
// shared by the G heads (accumulators stay in registers; G is a constant). head_dim % 8 == 0.
#define RA_ATTN_SCORES(G)                                                                                          \
    __attribute__((target("avx2,fma,f16c")))                                                                       \
    static void ra_attn_scores_g##G(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t hd, \
                                    float scale, float *scores, int64_t ss) {                                      \
        for (int64_t j = 0; j < n_kv; j++) {                                                                       \
            const uint16_t *row = k + j * kv_stride;                                                               \
            __m256 acc[G];                                                                                         \
            for (int h = 0; h < G; h++) acc[h] = _mm256_setzero_ps();                                              \
            for (int64_t i = 0; i < hd; i += 8) {                                                                  \
                const __m256 kv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + i)));                    \
                for (int h = 0; h < G; h++) acc[h] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q + h * hd + i), acc[h]); \
            }                                                                                                      \
            for (int h = 0; h < G; h++) scores[h * ss + j] = ra_hsum256(acc[h]) * scale;                           \
        }                                                                                                          \
    }

// out[h] = sum_j w[h][j] * V[j] for G heads, in slices of 8*S dimensions whose G*S accumulators stay in
// registers; each V element is converted once per group. head_dim % 8 == 0.
#define RA_ATTN_VALUES(G, S)                                                                                       \
    __attribute__((target("avx2,fma,f16c")))                                                                       \
    static void ra_attn_values_g##G(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w,            \
                                    int64_t ws, int64_t hd, float *out) {                                          \
        int64_t i0 = 0;                                                                                            \
        for (; i0 + 8 * S <= hd; i0 += 8 * S) {                                                                    \
            __m256 acc[G][S];                                                                                      \
            for (int h = 0; h < G; h++)                                                                            \
                for (int s = 0; s < S; s++) acc[h][s] = _mm256_setzero_ps();                                       \
            for (int64_t j = 0; j < n_kv; j++) {                                                                   \
                const uint16_t *row = v + j * kv_stride + i0;                                                      \
                __m256 vv[S];                                                                                      \
                for (int s = 0; s < S; s++) vv[s] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 8 * s))); \
                for (int h = 0; h < G; h++) {                                                                      \
                    const __m256 wb = _mm256_set1_ps(w[h * ws + j]);                                               \
                    for (int s = 0; s < S; s++) acc[h][s] = _mm256_fmadd_ps(wb, vv[s], acc[h][s]);                 \
                }                                                                                                  \
            }                                                                                                      \
            for (int h = 0; h < G; h++)                                                                            \
                for (int s = 0; s < S; s++) _mm256_storeu_ps(out + h * hd + i0 + 8 * s, acc[h][s]);                \
        }                                                                                                          \
        for (; i0 < hd; i0 += 8) {                                                                                 \
            __m256 acc[G];                                                                                         \
            for (int h = 0; h < G; h++) acc[h] = _mm256_setzero_ps();                                              \
            for (int64_t j = 0; j < n_kv; j++) {                                                                   \
                const __m256 vv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + j * kv_stride + i0)));     \
                for (int h = 0; h < G; h++) acc[h] = _mm256_fmadd_ps(_mm256_set1_ps(w[h * ws + j]), vv, acc[h]);   \
            }                                                                                                      \
            for (int h = 0; h < G; h++) _mm256_storeu_ps(out + h * hd + i0, acc[h]);                               \
        }                                                                                                          \
    }

RA_ATTN_SCORES(1)
RA_ATTN_SCORES(2)
RA_ATTN_SCORES(4)
RA_ATTN_SCORES(8)
RA_ATTN_VALUES(1, 4)
RA_ATTN_VALUES(2, 4)
RA_ATTN_VALUES(4, 2)
RA_ATTN_VALUES(8, 1)

/// Scores for any group size: sub-groups of 8, 4, 2, 1 heads.
static void ra_attn_scores_avx2(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                                int64_t hd, float scale, float *scores, int64_t ss) {
    int64_t h = 0;
    for (; h + 8 <= group; h += 8) ra_attn_scores_g8(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
    if (h + 4 <= group) { ra_attn_scores_g4(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); h += 4; }
    if (h + 2 <= group) { ra_attn_scores_g2(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); h += 2; }
    if (h < group) ra_attn_scores_g1(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
}

/// Weighted sums of V for any group size (out is overwritten).
static void ra_attn_values_avx2(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                                int64_t group, int64_t hd, float *out) {
    int64_t h = 0;
    for (; h + 8 <= group; h += 8) ra_attn_values_g8(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
    if (h + 4 <= group) { ra_attn_values_g4(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); h += 4; }
    if (h + 2 <= group) { ra_attn_values_g2(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); h += 2; }
    if (h < group) ra_attn_values_g1(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
}

/// Rounds n floats to F16 precision in place.
__attribute__((target("avx2,f16c")))
static void ra_round_f16_avx2(float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++) x[i] = ra_ops_f16_to_f32(ra_ops_f32_to_f16(x[i]));
}
#endif

static void ra_attn_scores_scalar(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                                  int64_t hd, float scale, float *scores, int64_t scores_stride) {
    for (int64_t j = 0; j < n_kv; j++) {
        for (int64_t h = 0; h < group; h++) {
            scores[h * scores_stride + j] = ra_dot_h_f_scalar(k + j * kv_stride, q + h * hd, hd) * scale;
        }
    }
}

static void ra_attn_values_scalar(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t w_stride,
                                  int64_t group, int64_t hd, float *out) {
    for (int64_t j = 0; j < n_kv; j++) {
        for (int64_t h = 0; h < group; h++) ra_axpy_h_scalar(out + h * hd, v + j * kv_stride, w[h * w_stride + j], hd);
    }
}

/// One work item = a block of up to `block` consecutive tokens and one kv head: the block's tokens × the query
/// heads of the group form R query rows that share every K/V row read (R <= 8 when the group is <= 8).
static void ra_attn_task(void *arg, int64_t lo, int64_t hi, int ith) {
    const ra_attn_ctx *c = (const ra_attn_ctx *)arg;
    const ra_attention_params *p = c->p;
    const int64_t hd = p->head_dim, group = c->group;
    const int64_t n_ctx = p->pos0 + p->n_tokens;
    const int64_t rows_max = c->block * group;
    float *scores = p->scratch + (int64_t)ith * c->stride;      // rows × n_ctx
    float *qh = scores + rows_max * n_ctx;                       // rows × hd
    float *acc = qh + rows_max * hd;                             // rows × hd
    for (int64_t item = lo; item < hi; item++) {
        const int64_t tb = item / p->n_head_kv, g = item % p->n_head_kv;
        const int64_t t0 = tb * c->block;
        const int64_t nb = p->n_tokens - t0 < c->block ? p->n_tokens - t0 : c->block;
        const int64_t rows = nb * group;
        const int64_t n_kv_max = p->pos0 + t0 + nb;              // causal: the last token's positions
        // Sliding window: the first token of the block sees the earliest position; later rows mask more.
        int64_t j0 = p->window > 0 ? p->pos0 + t0 - p->window + 1 : 0;
        if (j0 < 0) j0 = 0;
        for (int64_t b = 0; b < nb; b++) {
            const float *q = p->q + (t0 + b) * p->q_stride + g * group * hd;
            for (int64_t i = 0; i < group * hd; i++) qh[b * group * hd + i] = ra_ops_f16_to_f32(ra_ops_f32_to_f16(q[i]));   // q in F16
        }
        const uint16_t *kbase = p->k + g * hd + j0 * p->kv_stride;
        const uint16_t *vbase = p->v + g * hd + j0 * p->kv_stride;
        float *s0 = scores + j0;                                   // scores of position j at s0[r * n_ctx + j - j0]
        const int64_t n_span = n_kv_max - j0;
#ifdef RA_X86
        if (c->simd) ra_attn_scores_avx2(kbase, p->kv_stride, n_span, qh, rows, hd, p->scale, s0, n_ctx);
        else
#elif defined(RA_ARM)
        if (c->simd) ra_neon_attn_scores(kbase, p->kv_stride, n_span, qh, rows, hd, p->scale, s0, n_ctx);
        else
#endif
        ra_attn_scores_scalar(kbase, p->kv_stride, n_span, qh, rows, hd, p->scale, s0, n_ctx);
        for (int64_t r = 0; r < rows; r++) {
            const int64_t pos = p->pos0 + t0 + r / group;
            const int64_t n_kv = pos + 1;                          // positions <= this row's token
            int64_t lo = p->window > 0 ? pos - p->window + 1 : 0;  // and inside its window
            if (lo < j0) lo = j0;
            float *s = scores + r * n_ctx;
            float mx = -INFINITY;
            for (int64_t j = lo; j < n_kv; j++) mx = s[j] > mx ? s[j] : mx;
            double sum = 0.0;
#ifdef RA_ARM
            if (c->simd) sum = ra_neon_exp_sub(s + lo, n_kv - lo, mx);
            else
#endif
            for (int64_t j = lo; j < n_kv; j++) {
                const float e = expf(s[j] - mx);
                s[j] = e;
                sum += (double)e;
            }
            const float inv = (float)(1.0 / sum);
            for (int64_t j = lo; j < n_kv; j++) s[j] *= inv;
#ifdef RA_X86
            if (c->simd) ra_round_f16_avx2(s + lo, n_kv - lo);     // probabilities in F16, as ggml
            else
#elif defined(RA_ARM)
            if (c->simd) ra_neon_round_f16(s + lo, n_kv - lo);
            else
#endif
            for (int64_t j = lo; j < n_kv; j++) s[j] = ra_ops_f16_to_f32(ra_ops_f32_to_f16(s[j]));
            for (int64_t j = j0; j < lo; j++) s[j] = 0.0f;          // masked: left the window
            for (int64_t j = n_kv; j < n_kv_max; j++) s[j] = 0.0f;  // masked: later positions of the block
        }
        for (int64_t i = 0; i < rows * hd; i++) acc[i] = 0.0f;
#ifdef RA_X86
        if (c->simd) ra_attn_values_avx2(vbase, p->kv_stride, n_span, s0, n_ctx, rows, hd, acc);
        else
#elif defined(RA_ARM)
        if (c->simd) ra_neon_attn_values(vbase, p->kv_stride, n_span, s0, n_ctx, rows, hd, acc);
        else
#endif
        ra_attn_values_scalar(vbase, p->kv_stride, n_span, s0, n_ctx, rows, hd, acc);
        for (int64_t b = 0; b < nb; b++) {
            memcpy(p->out + (t0 + b) * p->out_stride + g * group * hd, acc + b * group * hd, (size_t)(group * hd) * sizeof(float));
        }
    }
}

void ra_attention(ra_pool *pool, const ra_attention_params *p) {
    if (p->n_tokens <= 0 || p->n_head <= 0 || p->n_head_kv <= 0 || p->n_head % p->n_head_kv != 0) return;
    ra_attn_ctx c;
    c.p = p;
#ifdef RA_X86
    c.simd = ra_has_avx2_f16c() && p->head_dim % 8 == 0;
#elif defined(RA_ARM)
    c.simd = ra_neon_ops_enabled() && p->head_dim % 8 == 0;
#else
    c.simd = 0;
#endif
    c.group = p->n_head / p->n_head_kv;
    c.block = c.group >= 8 ? 1 : 8 / c.group;
    const int64_t n_ctx = p->pos0 + p->n_tokens;
    c.stride = c.block * c.group * (n_ctx + 2 * p->head_dim) + 64;
    // Small problems (decode over a short cache) are not worth waking the pool.
    const int64_t work = p->n_tokens * p->n_head * n_ctx * p->head_dim;
    const int64_t items = (p->n_tokens + c.block - 1) / c.block * p->n_head_kv;
    ra_pool_for(pool, items, work < 32768 ? items : 1, ra_attn_task, &c);
}
