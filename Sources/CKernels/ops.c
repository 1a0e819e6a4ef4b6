// Float operations of the transformer: RMSNorm, RoPE, softmax, SwiGLU, residual adds, attention over an
// F16 KV cache. Portable C that the compiler vectorises; the F16 loads of attention have an F16C/AVX2 path
// chosen at run time on x86-64.
#include "ra_ops.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define RA_X86 1
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

static inline void ra_split(int64_t n, int ith, int nth, int64_t *lo, int64_t *hi) {
    *lo = n * ith / nth;
    *hi = n * (ith + 1) / nth;
}

// MARK: - RMSNorm

static void ra_rms_norm_row(const float *x, const float *w, float *y, int64_t n, float eps) {
    double sum = 0.0;
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

static void ra_rms_task(void *p, int ith, int nth) {
    const ra_rms_ctx *c = (const ra_rms_ctx *)p;
    int64_t lo, hi;
    ra_split(c->rows, ith, nth, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) ra_rms_norm_row(c->x + r * c->n, c->w, c->y + r * c->n, c->n, c->eps);
}

void ra_rms_norm(ra_pool *pool, const float *x, const float *w, float *y, int64_t n, int64_t rows, float eps) {
    ra_rms_ctx c = { x, w, y, n, rows, eps };
    if (rows == 1) ra_rms_task(&c, 0, 1);
    else ra_pool_run(pool, ra_rms_task, &c);
}

typedef struct {
    float *x; const float *w; int64_t rows, row_stride, n_heads, head_dim; float eps;
} ra_rms_heads_ctx;

static void ra_rms_heads_task(void *p, int ith, int nth) {
    const ra_rms_heads_ctx *c = (const ra_rms_heads_ctx *)p;
    int64_t lo, hi;
    ra_split(c->rows * c->n_heads, ith, nth, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
        float *h = c->x + (i / c->n_heads) * c->row_stride + (i % c->n_heads) * c->head_dim;
        ra_rms_norm_row(h, c->w, h, c->head_dim, c->eps);
    }
}

void ra_rms_norm_heads(ra_pool *pool, float *x, const float *w, int64_t rows, int64_t row_stride,
                       int64_t n_heads, int64_t head_dim, float eps) {
    ra_rms_heads_ctx c = { x, w, rows, row_stride, n_heads, head_dim, eps };
    if (rows == 1) ra_rms_heads_task(&c, 0, 1);
    else ra_pool_run(pool, ra_rms_heads_task, &c);
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

static void ra_rope_task(void *p, int ith, int nth) {
    const ra_rope_ctx *c = (const ra_rope_ctx *)p;
    int64_t lo, hi;
    ra_split(c->rows, ith, nth, &lo, &hi);
    for (int64_t t = lo; t < hi; t++) ra_rope_row(c, t);
}

void ra_rope(ra_pool *pool, float *x, int64_t rows, int64_t row_stride, int64_t n_heads, int64_t head_dim,
             const int32_t *pos, int n_dims, float freq_base, float freq_scale, const float *freq_factors, int neox) {
    if (n_dims > head_dim) n_dims = (int)head_dim;
    if (n_dims > 1024) n_dims = 1024;
    n_dims &= ~1;
    if (n_dims <= 0) return;
    ra_rope_ctx c = { x, rows, row_stride, n_heads, head_dim, pos, n_dims, freq_base, freq_scale, freq_factors, neox };
    if (rows == 1) ra_rope_task(&c, 0, 1);
    else ra_pool_run(pool, ra_rope_task, &c);
}

// MARK: - Elementwise

void ra_softmax(float *x, int64_t n) {
    if (n <= 0) return;
    float mx = x[0];
    for (int64_t i = 1; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float e = expf(x[i] - mx);
        x[i] = e;
        sum += (double)e;
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t i = 0; i < n; i++) x[i] *= inv;
}

typedef struct { float *y; const float *x; int64_t n; int op; } ra_ew_ctx;

static void ra_ew_task(void *p, int ith, int nth) {
    const ra_ew_ctx *c = (const ra_ew_ctx *)p;
    int64_t lo, hi;
    ra_split(c->n, ith, nth, &lo, &hi);
    float *y = c->y;
    const float *x = c->x;
    if (c->op == 0) {
        for (int64_t i = lo; i < hi; i++) y[i] += x[i];
    } else {
        for (int64_t i = lo; i < hi; i++) {
            const float g = y[i];
            y[i] = (g / (1.0f + expf(-g))) * x[i];
        }
    }
}

void ra_silu_mul(ra_pool *pool, float *gate, const float *up, int64_t n) {
    ra_ew_ctx c = { gate, up, n, 1 };
    if (n < 4096) ra_ew_task(&c, 0, 1);
    else ra_pool_run(pool, ra_ew_task, &c);
}

void ra_add(ra_pool *pool, float *y, const float *x, int64_t n) {
    ra_ew_ctx c = { y, x, n, 0 };
    if (n < 65536) ra_ew_task(&c, 0, 1);
    else ra_pool_run(pool, ra_ew_task, &c);
}

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
__attribute__((target("avx2,fma,f16c")))
static float ra_dot_h_f_avx2(const uint16_t *h, const float *x, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 h0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i)));
        __m256 h1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i + 8)));
        acc0 = _mm256_fmadd_ps(h0, _mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_fmadd_ps(h1, _mm256_loadu_ps(x + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 h0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i)));
        acc0 = _mm256_fmadd_ps(h0, _mm256_loadu_ps(x + i), acc0);
    }
    acc0 = _mm256_add_ps(acc0, acc1);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    float sum = _mm_cvtss_f32(s);
    for (; i < n; i++) sum += ra_ops_f16_to_f32(h[i]) * x[i];
    return sum;
}

__attribute__((target("avx2,fma,f16c")))
static void ra_axpy_h_avx2(float *y, const uint16_t *h, float a, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 h0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i)));
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, h0, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; i++) y[i] += a * ra_ops_f16_to_f32(h[i]);
}

static int ra_has_avx2_f16c(void) {
    static _Atomic int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}
#endif

int64_t ra_attention_scratch_floats(int nth, int64_t n_ctx, int64_t head_dim) {
    if (nth < 1) nth = 1;
    return (int64_t)nth * (n_ctx + 2 * head_dim + 16);
}

typedef struct {
    const ra_attention_params *p;
    _Atomic int64_t next;
    int simd;
} ra_attn_ctx;

static void ra_attn_task(void *arg, int ith, int nth) {
    (void)nth;
    ra_attn_ctx *c = (ra_attn_ctx *)arg;
    const ra_attention_params *p = c->p;
    const int64_t hd = p->head_dim;
    const int64_t n_ctx_needed = p->pos0 + p->n_tokens;
    float *scores = p->scratch + (int64_t)ith * (n_ctx_needed + 2 * hd + 16);
    float *qh = scores + n_ctx_needed;
    float *acc = qh + hd;
    const int64_t group = p->n_head / p->n_head_kv;
    const int64_t total = p->n_tokens * p->n_head;
    for (;;) {
        const int64_t item = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed);
        if (item >= total) break;
        const int64_t t = item / p->n_head, h = item % p->n_head;
        const int64_t g = h / group;
        const int64_t n_kv = p->pos0 + t + 1;
        const float *q = p->q + t * p->q_stride + h * hd;
        for (int64_t i = 0; i < hd; i++) qh[i] = ra_ops_f16_to_f32(ra_ops_f32_to_f16(q[i]));   // q rounded to F16
        const uint16_t *kbase = p->k + g * hd;
        const uint16_t *vbase = p->v + g * hd;
        float mx = -INFINITY;
#ifdef RA_X86
        if (c->simd) {
            for (int64_t j = 0; j < n_kv; j++) {
                const float s = ra_dot_h_f_avx2(kbase + j * p->kv_stride, qh, hd) * p->scale;
                scores[j] = s;
                mx = s > mx ? s : mx;
            }
        } else
#endif
        {
            for (int64_t j = 0; j < n_kv; j++) {
                const float s = ra_dot_h_f_scalar(kbase + j * p->kv_stride, qh, hd) * p->scale;
                scores[j] = s;
                mx = s > mx ? s : mx;
            }
        }
        double sum = 0.0;
        for (int64_t j = 0; j < n_kv; j++) {
            const float e = expf(scores[j] - mx);
            scores[j] = e;
            sum += (double)e;
        }
        const float inv = (float)(1.0 / sum);
        for (int64_t i = 0; i < hd; i++) acc[i] = 0.0f;
#ifdef RA_X86
        if (c->simd) {
            for (int64_t j = 0; j < n_kv; j++) {
                const float w = ra_ops_f16_to_f32(ra_ops_f32_to_f16(scores[j] * inv));   // probabilities in F16
                ra_axpy_h_avx2(acc, vbase + j * p->kv_stride, w, hd);
            }
        } else
#endif
        {
            for (int64_t j = 0; j < n_kv; j++) {
                const float w = ra_ops_f16_to_f32(ra_ops_f32_to_f16(scores[j] * inv));
                ra_axpy_h_scalar(acc, vbase + j * p->kv_stride, w, hd);
            }
        }
        float *out = p->out + t * p->out_stride + h * hd;
        memcpy(out, acc, (size_t)hd * sizeof(float));
    }
}

void ra_attention(ra_pool *pool, const ra_attention_params *p) {
    if (p->n_tokens <= 0 || p->n_head <= 0 || p->n_head_kv <= 0 || p->n_head % p->n_head_kv != 0) return;
    ra_attn_ctx c;
    c.p = p;
    atomic_init(&c.next, 0);
#ifdef RA_X86
    c.simd = ra_has_avx2_f16c();
#else
    c.simd = 0;
#endif
    // Small problems (decode over a short cache) are not worth waking the pool.
    const int64_t work = p->n_tokens * p->n_head * (p->pos0 + p->n_tokens) * p->head_dim;
    if (work < 32768) ra_attn_task(&c, 0, 1);
    else ra_pool_run(pool, ra_attn_task, &c);
}
