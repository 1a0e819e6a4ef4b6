// Float operations of the transformer: RMSNorm, RoPE, softmax, SwiGLU, residual adds (attention over the F16 KV
// cache is in ops_attention.c). Portable C that the compiler vectorises; on aarch64 RMSNorm's sum, SwiGLU and
// softmax have NEON code (ops_neon.c) used on the NEON kernel paths.
#include "ra_ops.h"
#include "ckernels.h"
#include "kernels_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__aarch64__)
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
    for (int64_t i = lo; i < hi; i += 8) {     // 8 heads at a time (their sums side by side on x86)
        const int count = hi - i < 8 ? (int)(hi - i) : 8;
        float *h[8];
        for (int k = 0; k < count; k++) h[k] = c->x + ((i + k) / c->n_heads) * c->row_stride + ((i + k) % c->n_heads) * c->head_dim;
        ra_rms_norm_rows8(h, c->w, h, count, c->head_dim, c->eps);
    }
}

void ra_rms_norm_heads(ra_pool *pool, float *x, const float *w, int64_t rows, int64_t row_stride,
                       int64_t n_heads, int64_t head_dim, float eps) {
    ra_rms_heads_ctx c = { x, w, rows, row_stride, n_heads, head_dim, eps };
    const int64_t n = rows * n_heads;
    ra_pool_for(pool, n, rows == 1 ? n : ra_chunk(pool, n, 4), ra_rms_heads_task, &c);
}

// MARK: - RoPE

/// n_dims as RoPE uses it: at most head_dim and 1024, even.
static int ra_rope_dims(int n_dims, int64_t head_dim) {
    if (n_dims > head_dim) n_dims = (int)head_dim;
    if (n_dims > 1024) n_dims = 1024;
    return n_dims & ~1;
}

/// cos and sin of the n_dims / 2 angles of position `pos`: theta_i = pos * base^(-2i/n_dims), built up by products
/// like ggml.
static void ra_rope_angles(int32_t pos, int n_dims, float freq_base, float freq_scale, const float *freq_factors,
                           float *cs, float *sn) {
    const int half = n_dims / 2;
    const float theta_scale = powf(freq_base, -2.0f / (float)n_dims);
    float theta = (float)pos;
    for (int i = 0; i < half; i++) {
        const float th = (freq_factors ? theta / freq_factors[i] : theta) * freq_scale;
        cs[i] = cosf(th);
        sn[i] = sinf(th);
        theta *= theta_scale;
    }
}

/// Rotates the n_heads heads of one row by the angles cs/sn.
static void ra_rope_rotate(float *row, int64_t n_heads, int64_t head_dim, int n_dims, const float *cs, const float *sn,
                           int neox) {
    const int half = n_dims / 2;
    for (int64_t h = 0; h < n_heads; h++) {
        float *v = row + h * head_dim;
        if (neox) {
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

typedef struct {
    float *x; int64_t row_stride, n_heads, head_dim; const int32_t *pos;
    int n_dims; float freq_base, freq_scale; const float *freq_factors; int neox;
    const float *table;     // ra_rope_table's angles, or NULL: computed per row
} ra_rope_ctx;

static void ra_rope_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_rope_ctx *c = (const ra_rope_ctx *)p;
    const int half = c->n_dims / 2;
    float cs[512], sn[512];                 // n_dims <= 1024
    for (int64_t t = lo; t < hi; t++) {
        const float *tc = cs, *ts = sn;
        if (c->table) {
            tc = c->table + t * c->n_dims;
            ts = tc + half;
        } else {
            ra_rope_angles(c->pos[t], c->n_dims, c->freq_base, c->freq_scale, c->freq_factors, cs, sn);
        }
        ra_rope_rotate(c->x + t * c->row_stride, c->n_heads, c->head_dim, c->n_dims, tc, ts, c->neox);
    }
}

void ra_rope(ra_pool *pool, float *x, int64_t rows, int64_t row_stride, int64_t n_heads, int64_t head_dim,
             const int32_t *pos, int n_dims, float freq_base, float freq_scale, const float *freq_factors, int neox) {
    n_dims = ra_rope_dims(n_dims, head_dim);
    if (n_dims <= 0) return;
    ra_rope_ctx c = { x, row_stride, n_heads, head_dim, pos, n_dims, freq_base, freq_scale, freq_factors, neox, NULL };
    ra_pool_for(pool, rows, ra_chunk(pool, rows, 1), ra_rope_task, &c);
}

void ra_rope_table(const int32_t *pos, int64_t rows, int n_dims, int64_t head_dim, float freq_base, float freq_scale,
                   const float *freq_factors, float *table) {
    n_dims = ra_rope_dims(n_dims, head_dim);
    if (n_dims <= 0) return;
    for (int64_t t = 0; t < rows; t++) {
        float *cs = table + t * n_dims;
        ra_rope_angles(pos[t], n_dims, freq_base, freq_scale, freq_factors, cs, cs + n_dims / 2);
    }
}

void ra_rope_cached(ra_pool *pool, float *x, int64_t rows, int64_t row_stride, int64_t n_heads, int64_t head_dim,
                    int n_dims, const float *table, int neox) {
    n_dims = ra_rope_dims(n_dims, head_dim);
    if (n_dims <= 0) return;
    ra_rope_ctx c = { x, row_stride, n_heads, head_dim, NULL, n_dims, 0, 0, NULL, neox, table };
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
#elif defined(__x86_64__)
        if (c->simd) { ra_silu_mul_avx2(y, x, lo, hi); break; }
#endif
        for (int64_t i = lo; i < hi; i++) {
            const float g = y[i];
            y[i] = (g / (1.0f + expf(-g))) * x[i];
        }
        break;
    case RA_EW_GELU_MUL:
#if defined(__x86_64__)
        if (c->simd) { ra_gelu_mul_avx2(y, x, lo, hi); break; }
#endif
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
#elif defined(__x86_64__)
    c.simd = ra_x86_simd_ops();
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
#if defined(__x86_64__)
    if (ra_x86_simd_ops()) {
        for (int64_t r = 0; r < rows; r++) ra_f32_to_f16_row_avx2(src + r * src_stride, dst + r * dst_stride, n);
        return;
    }
#endif
    for (int64_t r = 0; r < rows; r++) ra_ops_f32_to_f16_row(src + r * src_stride, dst + r * dst_stride, n);
}
