// NEON dot products for aarch64: one weight row · one activation row (decode), and the multi-row kernels of
// prompt batches (one weight row · up to 4 activation rows, each weight block decoded once).
//
// Two tables: ra_dots_neon uses only plain ARMv8 Advanced SIMD, which every aarch64 core has, and
// ra_dots_neon_dotprod uses the ARMv8.2 SDOT instruction. The dotprod functions are compiled with a
// per-function target attribute (no global -march flag), and dispatch.c only calls them after it has
// found the feature at run time (getauxval on Linux/Android, sysctl on Apple). Every supported weight type has
// a dot and a multi-row kernel in both tables (the float types need no SDOT: the dotprod table falls back to
// the plain one for them).
//
// Each kernel is written once as an always-inline body over nx activation rows that takes the integer dot of a
// group of int8 pairs as an argument; RA_NEON_KERNELS (neon_internal.h) makes the dot (nx = 1) and the multi
// kernel of both tables from it. The integer sums of a block are exact in both tables, so the two differ from
// each other not at all and from the scalar reference only in the order of float additions (none for Q5_K,
// whose float steps are dot_scalar.c's). This file: the float types and the 32-element block formats;
// dot_neon_k.c: the K-quants.
#include "neon_internal.h"

#if defined(__aarch64__)

// MARK: - Float rows (F32, F16, BF16)

enum { RA_NF_F32, RA_NF_F16, RA_NF_BF16 };

// Four elements at p + i as floats (halves converted exactly by FCVTL, bfloat16 by a shift).
RA_INLINE float32x4_t ld4f(const void *p, int64_t i, const int kind) {
    if (kind == RA_NF_F32) return vld1q_f32((const float *)p + i);
    const uint16x4_t h = vld1_u16((const uint16_t *)p + i);
    if (kind == RA_NF_F16) return vcvt_f32_f16(vreinterpret_f16_u16(h));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

RA_INLINE float ld1f(const void *p, int64_t i, const int kind) {
    if (kind == RA_NF_F32) return ((const float *)p)[i];
    const uint16_t h = ((const uint16_t *)p)[i];
    return kind == RA_NF_F16 ? ra_f16_table[h] : ra_bf2f(h);
}

// Four accumulators of 4 lanes over 16-element stripes, then 4-element steps into the first, a fixed reduction
// and a scalar fma tail; every activation row of a batch in the same order.
RA_INLINE void float_rows(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, const int kind) {
    const int64_t esize = kind == RA_NF_F32 ? 4 : 2;
    float32x4_t acc[4][4];
    for (int k = 0; k < nx; k++)
        for (int j = 0; j < 4; j++) acc[k][j] = vdupq_n_f32(0);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        ra_prefetch_ahead((const uint8_t *)w + i * esize, (size_t)(16 * esize));
        float32x4_t wv[4];
        for (int j = 0; j < 4; j++) wv[j] = ld4f(w, i + 4 * j, kind);
        for (int k = 0; k < nx; k++)
            for (int j = 0; j < 4; j++) acc[k][j] = vfmaq_f32(acc[k][j], wv[j], ld4f(RA_XROW(x, xs, k), i + 4 * j, kind));
    }
    for (; i + 4 <= n; i += 4) {
        const float32x4_t wv = ld4f(w, i, kind);
        for (int k = 0; k < nx; k++) acc[k][0] = vfmaq_f32(acc[k][0], wv, ld4f(RA_XROW(x, xs, k), i, kind));
    }
    for (int k = 0; k < nx; k++) {
        float t = vaddvq_f32(vaddq_f32(vaddq_f32(acc[k][0], acc[k][1]), vaddq_f32(acc[k][2], acc[k][3])));
        for (int64_t j = i; j < n; j++) t = __builtin_fmaf(ld1f(w, j, kind), ld1f(RA_XROW(x, xs, k), j, kind), t);
        out[k * os] = t;
    }
}

RA_NEON_KERNELS(static, f32_neon, float_rows, RA_NF_F32)
RA_NEON_KERNELS(static, f16_neon, float_rows, RA_NF_F16)
RA_NEON_KERNELS(static, bf16_neon, float_rows, RA_NF_BF16)

// MARK: - Blocks of 32 (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)

enum { RA_NQ_Q4_0, RA_NQ_Q4_1, RA_NQ_Q5_0, RA_NQ_Q5_1, RA_NQ_Q8_0 };

// Bytes of a weight block of each kind.
RA_INLINE int64_t q32_bytes(const int kind) {
    switch (kind) {
    case RA_NQ_Q4_0: return sizeof(blk_q4_0);
    case RA_NQ_Q4_1: return sizeof(blk_q4_1);
    case RA_NQ_Q5_0: return sizeof(blk_q5_0);
    case RA_NQ_Q5_1: return sizeof(blk_q5_1);
    default: return sizeof(blk_q8_0);
    }
}

// 0x10 in byte j of *lo (bits 0..15) and *hi (bits 16..31) where bit j of the 32-bit qh (inverted when flip) is
// set: qh loaded once, each byte's 8 bytes of ra_bit16_table loaded straight into a vector half (LDR d, then LD1 to lane 1).
RA_INLINE void fifth_bits(const uint8_t *qh, const int flip, uint8x16_t *lo, uint8x16_t *hi) {
    uint32_t b;
    memcpy(&b, qh, 4);
    if (flip) b = ~b;
    const uint64_t *t = ra_bit16_table;
    const uint64x1_t l0 = vld1_u64(&t[b & 0xff]), h0 = vld1_u64(&t[(b >> 16) & 0xff]);
    *lo = vreinterpretq_u8_u64(vld1q_lane_u64(&t[(b >> 8) & 0xff], vcombine_u64(l0, l0), 1));
    *hi = vreinterpretq_u8_u64(vld1q_lane_u64(&t[b >> 24], vcombine_u64(h0, h0), 1));
}

// The weight block at a as int8 elements 0..15 (*lo) and 16..31 (*hi), its scale *d and (Q4_1/Q5_1) min *m.
RA_INLINE void q32_decode(const uint8_t *a, const int kind, int8x16_t *lo, int8x16_t *hi, float *d, float *m) {
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    *d = ra_neon_h2f((const uint16_t *)(const void *)a);   // d first in every layout
    if (kind == RA_NQ_Q8_0) {
        *lo = vld1q_s8((const int8_t *)a + 2);
        *hi = vld1q_s8((const int8_t *)a + 18);
        return;
    }
    const int with_min = kind == RA_NQ_Q4_1 || kind == RA_NQ_Q5_1, five = kind == RA_NQ_Q5_0 || kind == RA_NQ_Q5_1;
    const uint8_t *qh = a + 2 + 2 * with_min, *qs = qh + 4 * five;   // (layouts of kernels_internal.h)
    if (with_min) *m = ra_neon_h2f((const uint16_t *)(const void *)(a + 2));
    const uint8x16_t q = vld1q_u8(qs), l = vandq_u8(q, m4), h = vshrq_n_u8(q, 4);
    if (five) {
        uint8x16_t bl, bh;
        fifth_bits(qh, kind == RA_NQ_Q5_0, &bl, &bh);
        if (kind == RA_NQ_Q5_0) {   // (nibble | bit << 4) - 16 = nibble - 0x10 where the bit is clear
            *lo = vreinterpretq_s8_u8(vsubq_u8(l, bl));
            *hi = vreinterpretq_s8_u8(vsubq_u8(h, bh));
        } else {
            *lo = vreinterpretq_s8_u8(vorrq_u8(l, bl));
            *hi = vreinterpretq_s8_u8(vorrq_u8(h, bh));
        }
    } else {
        const int8x16_t off = vdupq_n_s8(kind == RA_NQ_Q4_0 ? 8 : 0);
        *lo = vsubq_s8(vreinterpretq_s8_u8(l), off);
        *hi = vsubq_s8(vreinterpretq_s8_u8(h), off);
    }
}

// The weight block at a against the activation blocks at y (row k at y + k * xs): acc[k] += idot * (d_w * d_x);
// with a min, accm[k] += m_w * s_x (Q8_0 / Q8_1 activations: d, then s for Q8_1, then the 32 quants).
RA_INLINE void q32_step(const uint8_t *a, const uint8_t *y, int64_t xs, const int nx, float32x4_t *acc, float *accm,
                        idot32_fn idot32, const int kind) {
    const int q81 = kind == RA_NQ_Q4_1 || kind == RA_NQ_Q5_1;
    int8x16_t lo, hi;
    float d, m = 0;
    q32_decode(a, kind, &lo, &hi, &d, &m);
    for (int k = 0; k < nx; k++) {
        const uint8_t *b = y + k * xs;
        const int8_t *yq = (const int8_t *)b + 2 + 2 * q81;
        const float dx = ra_neon_h2f((const uint16_t *)(const void *)b);
        const float32x4_t p = vcvtq_f32_s32(idot32(lo, hi, vld1q_s8(yq), vld1q_s8(yq + 16)));
        acc[k] = vfmaq_n_f32(acc[k], p, d * dx);
        if (q81) accm[k] = __builtin_fmaf(m, ra_neon_h2f((const uint16_t *)(const void *)(b + 2)), accm[k]);
    }
}

// Even and odd blocks in two accumulators per row (independent fma chains), summed at the end. Pointers step
// through the blocks (no index arithmetic in the loop) and the weights are prefetched one cache line per pair of
// blocks (for Q8_0, 68 bytes a pair, that leaves one line in 17 to the hardware prefetcher).
RA_INLINE void q32_rows(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os,
                        idot32_fn idot32, const int kind) {
    float32x4_t acc0[4], acc1[4];
    float accm0[4], accm1[4];
    for (int k = 0; k < nx; k++) { acc0[k] = acc1[k] = vdupq_n_f32(0); accm0[k] = accm1[k] = 0; }
    const int64_t bb = q32_bytes(kind), xb = kind == RA_NQ_Q4_1 || kind == RA_NQ_Q5_1 ? 36 : 34;
    // (even and odd blocks through pointers of their own, which the empty asm keeps the compiler from folding
    // into one base plus offsets, so that a block's quants load as one pair: LDP q, q)
    // The pointers point at the quants (aq: the last field of the weight block, yq: of the activation block), the
    // fields before them are read at negative offsets: the 32 quants of a block are then one LDP q, q.
    const int64_t wq = bb - 16 - 16 * (kind == RA_NQ_Q8_0), yo = xb - 32;
    const uint8_t *aq = (const uint8_t *)w + wq, *aq1 = aq + bb, *yq = (const uint8_t *)x + yo, *yq1 = yq + xb;
    for (int64_t j = n / 64; j > 0; j--, aq += 2 * bb, aq1 += 2 * bb, yq += 2 * xb, yq1 += 2 * xb) {
        __asm__("" : "+r"(aq), "+r"(aq1), "+r"(yq), "+r"(yq1));
        ra_prefetch_ahead(aq, 64);
        q32_step(aq - wq, yq - yo, xs, nx, acc0, accm0, idot32, kind);
        q32_step(aq1 - wq, yq1 - yo, xs, nx, acc1, accm1, idot32, kind);
    }
    if ((n / 32) % 2) q32_step(aq - wq, yq - yo, xs, nx, acc0, accm0, idot32, kind);
    for (int k = 0; k < nx; k++) {
        float s = vaddvq_f32(vaddq_f32(acc0[k], acc1[k]));
        if (kind == RA_NQ_Q4_1 || kind == RA_NQ_Q5_1) s += accm0[k] + accm1[k];
        out[k * os] = s;
    }
}

#define RA_Q32_ROWS(kind)                                                                                        \
    RA_INLINE void rows_##kind(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, \
                               idot32_fn idot32) {                                                              \
        q32_rows(n, w, x, xs, nx, out, os, idot32, RA_NQ_##kind);                                               \
    }
RA_Q32_ROWS(Q4_0)
RA_Q32_ROWS(Q4_1)
RA_Q32_ROWS(Q5_0)
RA_Q32_ROWS(Q5_1)
RA_Q32_ROWS(Q8_0)

RA_NEON_KERNELS(static, q4_0_neon, rows_Q4_0, idot32_mull)
RA_NEON_KERNELS(static, q4_1_neon, rows_Q4_1, idot32_mull)
RA_NEON_KERNELS(static, q5_0_neon, rows_Q5_0, idot32_mull)
RA_NEON_KERNELS(static, q5_1_neon, rows_Q5_1, idot32_mull)
RA_NEON_KERNELS(static, q8_0_neon, rows_Q8_0, idot32_mull)

// MARK: - Tables

const ra_dot_table ra_dots_neon = {
    .dot = {
        [RA_DI_F32] = f32_neon_dot, [RA_DI_F16] = f16_neon_dot, [RA_DI_BF16] = bf16_neon_dot,
        [RA_DI_Q4_0] = q4_0_neon_dot, [RA_DI_Q4_1] = q4_1_neon_dot, [RA_DI_Q5_0] = q5_0_neon_dot,
        [RA_DI_Q5_1] = q5_1_neon_dot, [RA_DI_Q8_0] = q8_0_neon_dot,
        [RA_DI_Q4_K] = ra_neon_q4_k_dot, [RA_DI_Q5_K] = ra_neon_q5_k_dot, [RA_DI_Q6_K] = ra_neon_q6_k_dot,
        [RA_DI_Q2_K] = ra_neon_q2_k_dot, [RA_DI_Q3_K] = ra_neon_q3_k_dot, [RA_DI_IQ4_NL] = ra_neon_iq4_nl_dot,
        [RA_DI_IQ4_XS] = ra_neon_iq4_xs_dot,
    },
    .multi = {
        [RA_DI_F32] = f32_neon_multi, [RA_DI_F16] = f16_neon_multi, [RA_DI_BF16] = bf16_neon_multi,
        [RA_DI_Q4_0] = q4_0_neon_multi, [RA_DI_Q4_1] = q4_1_neon_multi, [RA_DI_Q5_0] = q5_0_neon_multi,
        [RA_DI_Q5_1] = q5_1_neon_multi, [RA_DI_Q8_0] = q8_0_neon_multi,
        [RA_DI_Q4_K] = ra_neon_q4_k_multi, [RA_DI_Q5_K] = ra_neon_q5_k_multi, [RA_DI_Q6_K] = ra_neon_q6_k_multi,
        [RA_DI_Q2_K] = ra_neon_q2_k_multi, [RA_DI_Q3_K] = ra_neon_q3_k_multi, [RA_DI_IQ4_NL] = ra_neon_iq4_nl_multi,
        [RA_DI_IQ4_XS] = ra_neon_iq4_xs_multi,
    },
};

#if RA_NEON_SDOT
RA_NEON_KERNELS(RA_DOTPROD static, q4_0_sdot, rows_Q4_0, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD static, q4_1_sdot, rows_Q4_1, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD static, q5_0_sdot, rows_Q5_0, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD static, q5_1_sdot, rows_Q5_1, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD static, q8_0_sdot, rows_Q8_0, idot32_sdot)

// (F32/F16/BF16: no entry, the plain NEON table's kernels run.)
const ra_dot_table ra_dots_neon_dotprod = {
    .dot = {
        [RA_DI_Q4_0] = q4_0_sdot_dot, [RA_DI_Q4_1] = q4_1_sdot_dot, [RA_DI_Q5_0] = q5_0_sdot_dot,
        [RA_DI_Q5_1] = q5_1_sdot_dot, [RA_DI_Q8_0] = q8_0_sdot_dot,
        [RA_DI_Q4_K] = ra_sdot_q4_k_dot, [RA_DI_Q5_K] = ra_sdot_q5_k_dot, [RA_DI_Q6_K] = ra_sdot_q6_k_dot,
        [RA_DI_Q2_K] = ra_sdot_q2_k_dot, [RA_DI_Q3_K] = ra_sdot_q3_k_dot, [RA_DI_IQ4_NL] = ra_sdot_iq4_nl_dot,
        [RA_DI_IQ4_XS] = ra_sdot_iq4_xs_dot,
    },
    .multi = {
        [RA_DI_Q4_0] = q4_0_sdot_multi, [RA_DI_Q4_1] = q4_1_sdot_multi, [RA_DI_Q5_0] = q5_0_sdot_multi,
        [RA_DI_Q5_1] = q5_1_sdot_multi, [RA_DI_Q8_0] = q8_0_sdot_multi,
        [RA_DI_Q4_K] = ra_sdot_q4_k_multi, [RA_DI_Q5_K] = ra_sdot_q5_k_multi, [RA_DI_Q6_K] = ra_sdot_q6_k_multi,
        [RA_DI_Q2_K] = ra_sdot_q2_k_multi, [RA_DI_Q3_K] = ra_sdot_q3_k_multi, [RA_DI_IQ4_NL] = ra_sdot_iq4_nl_multi,
        [RA_DI_IQ4_XS] = ra_sdot_iq4_xs_multi,
    },
};
#else
const ra_dot_table ra_dots_neon_dotprod = { .dot = { NULL } };   // (falls back to ra_dots_neon)
#endif

#endif
