// NEON versions of the activation quantization (quants.c) and of the float operations of ops.c that show in a
// profile: attention's F16 loads (scores, weighted sums of V, rounding to F16), RMSNorm's sum of squares, SwiGLU
// and softmax (a vector exp). Used on the NEON paths only (ra_neon_ops_enabled: the scalar path, selected by the
// feature masks, stays scalar), so tests compare them with the scalar code side by side.
//
// Quantization gives the scalar bytes exactly: the same products rounded by FCVTNS (to nearest, ties to even,
// what ra_nearest_int's magic-number addition does for these magnitudes), the same largest magnitude (FMAXNM
// from 0 ignores NaN as the scalar compare does). The float operations differ from scalar only in the order of
// additions and in exp's last bits (|error| of the vector exp below 2 ulp).
#include "neon_internal.h"
#include <math.h>

#if defined(__aarch64__)

int ra_neon_ops_enabled(void) {
    const int path = ra_kernel_path();
    return path == RA_PATH_NEON || path == RA_PATH_NEON_DOTPROD;
}

// MARK: - Activation quantization

// Largest |x| of 32 * nv floats, NaN ignored (starts from 0 like the scalar loop).
RA_INLINE float absmax(const float *x, int nv) {
    float32x4_t m = vdupq_n_f32(0);
    for (int j = 0; j < nv; j++) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + 4 * j)));
    return vmaxnmvq_f32(m);
}

// 16 values x * id rounded to nearest even, as int8 (|x * id| <= 127, NaN -> 0 as the scalar code gives).
RA_INLINE int8x16_t round16(const float *x, float id) {
    int32x4_t v[4];
    for (int j = 0; j < 4; j++) v[j] = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + 4 * j), id));
    const int16x8_t a = vcombine_s16(vmovn_s32(v[0]), vmovn_s32(v[1])), b = vcombine_s16(vmovn_s32(v[2]), vmovn_s32(v[3]));
    return vcombine_s8(vmovn_s16(a), vmovn_s16(b));
}

// Q8_0 / Q8_1 (with_sum) blocks of 32 (quants.c's ra_quant_q8_block).
static void quantize_q8(const float *x, void *dst, int64_t nb, const int with_sum) {
    for (int64_t i = 0; i < nb; i++, x += 32) {
        const float amax = absmax(x, 8);
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        const int8x16_t q0 = round16(x, id), q1 = round16(x + 16, id);
        if (with_sum) {
            blk_q8_1 *y = (blk_q8_1 *)dst + i;
            vst1q_s8(y->qs, q0);
            vst1q_s8(y->qs + 16, q1);
            const int sum = vaddlvq_s8(q0) + vaddlvq_s8(q1);
            y->d = ra_fp32_to_fp16(d);
            y->s = ra_fp32_to_fp16(d * (float)sum);
        } else {
            blk_q8_0 *y = (blk_q8_0 *)dst + i;
            vst1q_s8(y->qs, q0);
            vst1q_s8(y->qs + 16, q1);
            y->d = ra_fp32_to_fp16(d);
        }
    }
}

// Q8_K (quants.c's quantize_q8_k: the signed value of largest magnitude, first one on ties, sets the scale).
static void quantize_q8_k(const float *x, blk_q8_k *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        const float amax = absmax(x, 64);
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        float max = 0.0f;
        for (int j = 0; j < QK_K; j++)
            if (fabsf(x[j]) == amax) { max = x[j]; break; }
        const float iscale = -127.f / max;
        const int8x16_t lim = vdupq_n_s8(127);
        for (int g = 0; g < 16; g++) {
            // iscale * x rounds into [-127, 127] (|x| <= |max|), so narrowing first and clamping after is exact
            const int8x16_t q = vminq_s8(round16(x + 16 * g, iscale), lim);
            vst1q_s8(y[i].qs + 16 * g, q);
            y[i].bsums[g] = (int16_t)vaddlvq_s8(q);
        }
        y[i].d = 1.0f / iscale;
    }
}

// F16 rows: FCVTN rounds to nearest even, overflows to inf and keeps NaN quiet with its top payload bits, as
// ra_fp32_to_fp16 does.
static void quantize_f16(const float *x, uint16_t *h, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t v = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4));
        vst1q_u16(h + i, vreinterpretq_u16_f16(v));
    }
    for (; i < n; i++) h[i] = ra_fp32_to_fp16(x[i]);
}

int ra_neon_quantize_row(int type, const float *x, void *dst, int64_t n) {
    if (!ra_neon_ops_enabled()) return 0;
    switch (type) {
    case RA_Q8_0: quantize_q8(x, dst, n / 32, 0); return 1;
    case RA_Q8_1: quantize_q8(x, dst, n / 32, 1); return 1;
    case RA_Q8_K: quantize_q8_k(x, dst, n / QK_K); return 1;
    case RA_F16: quantize_f16(x, dst, n); return 1;
    default: return 0;
    }
}

// MARK: - Attention over an F16 cache (head_dim a multiple of 8)

// Eight halves as two float vectors.
RA_INLINE void ld8h(const uint16_t *p, float32x4_t *a, float32x4_t *b) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    *a = vcvt_f32_f16(vget_low_f16(h));
    *b = vcvt_high_f32_f16(h);
}

// Scores of G query heads against R positions from j of one kv head: each K row is converted once and shared by the
// G heads; the R rows' chains of fmas are independent (one row at a time ran at the fma's latency for a single head).
// Each (row, head) sums in the same order whatever G and R, so the grouping changes no bits.
RA_INLINE void scores_rows(const uint16_t *k, int64_t kv_stride, int64_t j, const float *q, int64_t hd, float scale,
                           float *scores, int64_t ss, const int G, const int R) {
    float32x4_t acc[4][8][2];
    for (int r = 0; r < R; r++)
        for (int h = 0; h < G; h++) acc[r][h][0] = acc[r][h][1] = vdupq_n_f32(0);
    for (int64_t i = 0; i < hd; i += 8) {
        float32x4_t k0[4], k1[4];
        for (int r = 0; r < R; r++) ld8h(k + (j + r) * kv_stride + i, &k0[r], &k1[r]);
        for (int h = 0; h < G; h++) {
            const float32x4_t q0 = vld1q_f32(q + h * hd + i), q1 = vld1q_f32(q + h * hd + i + 4);
            for (int r = 0; r < R; r++) {
                acc[r][h][0] = vfmaq_f32(acc[r][h][0], k0[r], q0);
                acc[r][h][1] = vfmaq_f32(acc[r][h][1], k1[r], q1);
            }
        }
    }
    for (int h = 0; h < G; h++)
        for (int r = 0; r < R; r++) scores[h * ss + j + r] = vaddvq_f32(vaddq_f32(acc[r][h][0], acc[r][h][1])) * scale;
}

// Scores of G query heads against positions [0, n_kv): R rows at a time, then the rest one by one.
RA_INLINE void scores_g(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t hd, float scale,
                        float *scores, int64_t ss, const int G, const int R) {
    int64_t j = 0;
    for (; j + R <= n_kv; j += R) scores_rows(k, kv_stride, j, q, hd, scale, scores, ss, G, R);
    for (; j < n_kv; j++) scores_rows(k, kv_stride, j, q, hd, scale, scores, ss, G, 1);
}

// out[h][i0, i0 + 8W) = sum_j w[h][j] * V[j][i0, i0 + 8W) for G heads; G * 2W accumulators stay in registers.
RA_INLINE void values_slice(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws, int64_t hd,
                            float *out, int64_t i0, const int G, const int W) {
    float32x4_t acc[8][8];
    for (int h = 0; h < G; h++)
        for (int s = 0; s < 2 * W; s++) acc[h][s] = vdupq_n_f32(0);
    for (int64_t j = 0; j < n_kv; j++) {
        float32x4_t vv[8];
        for (int s = 0; s < W; s++) ld8h(v + j * kv_stride + i0 + 8 * s, &vv[2 * s], &vv[2 * s + 1]);
        for (int h = 0; h < G; h++) {
            const float wj = w[h * ws + j];
            for (int s = 0; s < 2 * W; s++) acc[h][s] = vfmaq_n_f32(acc[h][s], vv[s], wj);
        }
    }
    for (int h = 0; h < G; h++)
        for (int s = 0; s < 2 * W; s++) vst1q_f32(out + h * hd + i0 + 4 * s, acc[h][s]);
}

RA_INLINE void values_g(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws, int64_t hd,
                        float *out, const int G, const int W) {
    int64_t i0 = 0;
    for (; i0 + 8 * W <= hd; i0 += 8 * W) values_slice(v, kv_stride, n_kv, w, ws, hd, out, i0, G, W);
    for (; i0 < hd; i0 += 8) values_slice(v, kv_stride, n_kv, w, ws, hd, out, i0, G, 1);
}

#define RA_ATTN_GROUP(G, W, R)                                                                                   \
    static void scores_g##G(const uint16_t *k, int64_t kvs, int64_t n_kv, const float *q, int64_t hd, float scale,   \
                            float *scores, int64_t ss) { scores_g(k, kvs, n_kv, q, hd, scale, scores, ss, G, R); }  \
    static void values_g##G(const uint16_t *v, int64_t kvs, int64_t n_kv, const float *w, int64_t ws, int64_t hd, \
                            float *out) { values_g(v, kvs, n_kv, w, ws, hd, out, G, W); }
RA_ATTN_GROUP(1, 4, 4)
RA_ATTN_GROUP(2, 2, 4)
RA_ATTN_GROUP(4, 1, 2)
RA_ATTN_GROUP(8, 1, 1)

void ra_neon_attn_scores(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group, int64_t hd,
                         float scale, float *scores, int64_t ss) {
    int64_t h = 0;
    for (; h + 8 <= group; h += 8) scores_g8(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
    if (h + 4 <= group) { scores_g4(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); h += 4; }
    if (h + 2 <= group) { scores_g2(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); h += 2; }
    if (h < group) scores_g1(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
}

void ra_neon_attn_values(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws, int64_t group,
                         int64_t hd, float *out) {
    int64_t h = 0;
    for (; h + 8 <= group; h += 8) values_g8(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
    if (h + 4 <= group) { values_g4(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); h += 4; }
    if (h + 2 <= group) { values_g2(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); h += 2; }
    if (h < group) values_g1(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
}

void ra_neon_round_f16(float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(x + i, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    for (; i < n; i++) x[i] = vgetq_lane_f32(vcvt_f32_f16(vcvt_f16_f32(vdupq_n_f32(x[i]))), 0);
}

// MARK: - RMSNorm, SwiGLU, softmax

double ra_neon_sum_squares(const float *x, int64_t n) {
    // float squares (as the scalar loop rounds them), summed in double in four lanes
    float64x2_t s0 = vdupq_n_f64(0), s1 = vdupq_n_f64(0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i), sq = vmulq_f32(v, v);
        s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(sq)));
        s1 = vaddq_f64(s1, vcvt_high_f64_f32(sq));
    }
    double sum = vaddvq_f64(vaddq_f64(s0, s1));
    for (; i < n; i++) sum += (double)(x[i] * x[i]);
    return sum;
}

// e^x for 4 lanes: x = k ln2 + r (|r| <= ln2/2, ln2 in two parts), e^r by a degree-6 polynomial, times 2^k built
// in two halves so that k down to -150 (subnormal results) and up to 128 (inf) come out right. NaN stays NaN.
RA_INLINE float32x4_t exp4(float32x4_t x) {
    x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-104.0f)), vdupq_n_f32(89.0f));   // e^-104 rounds to 0, e^89 to inf
    const float32x4_t k = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    float32x4_t r = vfmsq_n_f32(x, k, 0.693359375f);                          // ln2 high part (exact product)
    r = vfmsq_n_f32(r, k, -2.12194440e-4f);                                   // ln2 low part
    float32x4_t p = vdupq_n_f32(1.0f / 720.0f);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 120.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    const int32x4_t ki = vcvtq_s32_f32(k), k1 = vshrq_n_s32(ki, 1), k2 = vsubq_s32(ki, k1);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k1, vdupq_n_s32(127)), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k2, vdupq_n_s32(127)), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

void ra_neon_silu_mul(float *g, const float *u, int64_t lo, int64_t hi) {
    int64_t i = lo;
    const float32x4_t one = vdupq_n_f32(1.0f);
    for (; i + 4 <= hi; i += 4) {
        const float32x4_t x = vld1q_f32(g + i);
        vst1q_f32(g + i, vmulq_f32(vdivq_f32(x, vaddq_f32(one, exp4(vnegq_f32(x)))), vld1q_f32(u + i)));
    }
    for (; i < hi; i++) g[i] = (g[i] / (1.0f + expf(-g[i]))) * u[i];
}

// x[i] = e^(x[i] - mx) for i in [0, n); returns the sum in double (as the scalar loop keeps it).
double ra_neon_exp_sub(float *x, int64_t n, float mx) {
    float64x2_t s0 = vdupq_n_f64(0), s1 = vdupq_n_f64(0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = exp4(vsubq_f32(vld1q_f32(x + i), vdupq_n_f32(mx)));
        vst1q_f32(x + i, e);
        s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(e)));
        s1 = vaddq_f64(s1, vcvt_high_f64_f32(e));
    }
    double sum = vaddvq_f64(vaddq_f64(s0, s1));
    for (; i < n; i++) {
        x[i] = expf(x[i] - mx);
        sum += (double)x[i];
    }
    return sum;
}

#endif
