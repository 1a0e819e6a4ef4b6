// Portable scalar reference dot products (weight row × activation row in ra_vec_dot_type).
// Each block is decoded to int8 and dotted in integers (exact); its sum is scaled once, as ggml's
// generic code does. Written so that compilers can vectorise the loops (the portable fallback).
#include "kernels_internal.h"
#include <math.h>

// Float rows: four partial sums (lets compilers vectorise), halves decoded through the table.
static float dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = w, *b = x;
    float s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) s[j] += a[i + j] * b[i + j];
    for (; i < n; i++) s[0] += a[i] * b[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

static float dot_f16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    float s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) s[j] += ra_f16_table[a[i + j]] * ra_f16_table[b[i + j]];
    for (; i < n; i++) s[0] += ra_f16_table[a[i]] * ra_f16_table[b[i]];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

static float dot_bf16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    float s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) s[j] += ra_bf2f(a[i + j]) * ra_bf2f(b[i + j]);
    for (; i < n; i++) s[0] += ra_bf2f(a[i]) * ra_bf2f(b[i]);
    return (s[0] + s[1]) + (s[2] + s[3]);
}

// Integer dot of n int8 pairs (n a multiple of 16 here; the loops vectorise).
static inline int idot(const int8_t *q, const int8_t *y, int n) {
    int s = 0;
    for (int l = 0; l < n; l++) s += q[l] * y[l];
    return s;
}

// The 32-element formats: decode the block's quants to int8 (offset removed), then one integer dot.
static inline void nibbles_to_i8(const uint8_t qs[16], int offset, int8_t q[32]) {
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)((qs[j] & 15) - offset);
        q[j + 16] = (int8_t)((qs[j] >> 4) - offset);
    }
}

static inline void fifth_bits(const uint8_t qh[4], int8_t q[32]) {
    for (int k = 0; k < 4; k++) {
        uint64_t v;
        memcpy(&v, q + 8 * k, 8);
        v |= ra_bit16_table[qh[k]];
        memcpy(q + 8 * k, &v, 8);
    }
}

static float dot_q4_0(int64_t n, const void *w, const void *x) {
    const blk_q4_0 *a = w;
    const blk_q8_0 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q4_0));
        int8_t q[32];
        nibbles_to_i8(a[i].qs, 8, q);
        s += (float)idot(q, b[i].qs, 32) * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return s;
}

static float dot_q4_1(int64_t n, const void *w, const void *x) {
    const blk_q4_1 *a = w;
    const blk_q8_1 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q4_1));
        int8_t q[32];
        nibbles_to_i8(a[i].qs, 0, q);
        s += (float)idot(q, b[i].qs, 32) * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d])
           + ra_f16_table[a[i].m] * ra_f16_table[b[i].s];
    }
    return s;
}

static float dot_q5_0(int64_t n, const void *w, const void *x) {
    const blk_q5_0 *a = w;
    const blk_q8_0 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q5_0));
        int8_t q[32];
        nibbles_to_i8(a[i].qs, 0, q);
        fifth_bits(a[i].qh, q);
        for (int j = 0; j < 32; j++) q[j] = (int8_t)(q[j] - 16);
        s += (float)idot(q, b[i].qs, 32) * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return s;
}

static float dot_q5_1(int64_t n, const void *w, const void *x) {
    const blk_q5_1 *a = w;
    const blk_q8_1 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q5_1));
        int8_t q[32];
        nibbles_to_i8(a[i].qs, 0, q);
        fifth_bits(a[i].qh, q);
        s += (float)idot(q, b[i].qs, 32) * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d])
           + ra_f16_table[a[i].m] * ra_f16_table[b[i].s];
    }
    return s;
}

static float dot_q8_0(int64_t n, const void *w, const void *x) {
    const blk_q8_0 *a = w, *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q8_0));
        s += (float)idot(a[i].qs, b[i].qs, 32) * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return s;
}

// Q4_K/Q5_K: decode 256 quants to int8, dot each 32-element sub-block, weight it by its 6-bit scale;
// the mins meet the activation block sums.
static inline float k4_finish(const uint8_t *scales, uint16_t d, uint16_t dmin, const blk_q8_k *y, const int8_t q[256]) {
    uint8_t sc[8], m[8];
    ra_unpack_scales_k4(scales, sc, m);
    int sumi = 0, summ = 0;
    for (int j = 0; j < 8; j++) {
        sumi += sc[j] * idot(q + 32 * j, y->qs + 32 * j, 32);
        summ += m[j] * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
    }
    return y->d * ra_f16_table[d] * (float)sumi - y->d * ra_f16_table[dmin] * (float)summ;
}

static float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q4_k));
        int8_t q[256];
        for (int g = 0; g < 4; g++)
            for (int l = 0; l < 32; l++) {
                q[64 * g + l] = (int8_t)(a[i].qs[32 * g + l] & 15);
                q[64 * g + 32 + l] = (int8_t)(a[i].qs[32 * g + l] >> 4);
            }
        s += k4_finish(a[i].scales, a[i].d, a[i].dmin, &b[i], q);
    }
    return s;
}

static float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    // integer sums per super-block, scaled and accumulated in two sums (scales, mins) with fma: the
    // float order of ggml's repacked Q5_K kernels, shared by every path here
    float sacc = 0, smin = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q5_k));
        int8_t q[256];
        for (int g = 0; g < 4; g++)
            for (int l = 0; l < 32; l++) {
                const uint8_t h = a[i].qh[l];
                q[64 * g + l] = (int8_t)((a[i].qs[32 * g + l] & 15) | (((h >> (2 * g)) & 1) << 4));
                q[64 * g + 32 + l] = (int8_t)((a[i].qs[32 * g + l] >> 4) | (((h >> (2 * g + 1)) & 1) << 4));
            }
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        int sumi = 0, summ = 0;
        for (int j = 0; j < 8; j++) {
            sumi += sc[j] * idot(q + 32 * j, b[i].qs + 32 * j, 32);
            summ += m[j] * (b[i].bsums[2 * j] + b[i].bsums[2 * j + 1]);
        }
        sacc = fmaf((float)sumi, ra_f16_table[a[i].d] * b[i].d, sacc);
        smin = fmaf((float)summ, ra_f16_table[a[i].dmin] * b[i].d, smin);
    }
    return sacc - smin;
}

// Q6_K: decode 256 six-bit quants (offset 32 removed) to int8, then one int8 scale per 16 elements.
static float dot_q6_k(int64_t n, const void *w, const void *x) {
    const blk_q6_k *a = w;
    const blk_q8_k *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q6_k));
        int8_t q[256];
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = a[i].ql + 64 * h, *qh = a[i].qh + 32 * h;
            int8_t *o = q + 128 * h;
            for (int l = 0; l < 32; l++) {
                o[l] = (int8_t)(((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32);
                o[l + 32] = (int8_t)(((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32);
                o[l + 64] = (int8_t)(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                o[l + 96] = (int8_t)(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
        }
        int sumi = 0;
        for (int k = 0; k < 16; k++) sumi += a[i].scales[k] * idot(q + 16 * k, b[i].qs + 16 * k, 16);
        s += b[i].d * ra_f16_table[a[i].d] * (float)sumi;
    }
    return s;
}

// Q2_K and Q3_K: per super-block the exact int32 sum I of scale · quant · activation (Q2_K: also M, min · activation
// block sum), then acc = fma(I, d · d_x, acc) (and acc = fma(-M, dmin · d_x, acc)): the float order of every path.
static float dot_q2_k(int64_t n, const void *w, const void *x) {
    const blk_q2_k *a = w;
    const blk_q8_k *b = x;
    float acc = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q2_k));
        int8_t q[256];
        ra_q2_k_quants(&a[i], q);
        int sumi = 0, summ = 0;
        for (int k = 0; k < 16; k++) {
            sumi += (a[i].scales[k] & 15) * idot(q + 16 * k, b[i].qs + 16 * k, 16);
            summ += (a[i].scales[k] >> 4) * b[i].bsums[k];
        }
        acc = fmaf((float)sumi, ra_f16_table[a[i].d] * b[i].d, acc);
        acc = fmaf(-(float)summ, ra_f16_table[a[i].dmin] * b[i].d, acc);
    }
    return acc;
}

static float dot_q3_k(int64_t n, const void *w, const void *x) {
    const blk_q3_k *a = w;
    const blk_q8_k *b = x;
    float acc = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q3_k));
        int8_t q[256], sc[16];
        ra_q3_k_quants(&a[i], q);
        ra_unpack_scales_q3_k(a[i].scales, sc);
        int sumi = 0;
        for (int k = 0; k < 16; k++) sumi += sc[k] * idot(q + 16 * k, b[i].qs + 16 * k, 16);
        acc = fmaf((float)sumi, ra_f16_table[a[i].d] * b[i].d, acc);
    }
    return acc;
}

// IQ4_NL and IQ4_XS: the nibbles looked up in the 16 levels; per block (IQ4_XS: per super-block, the blocks' sums
// weighted by their scales) the exact int32 sum, then acc = fma(I, d · d_x, acc): the float order of every path.
static float dot_iq4_nl(int64_t n, const void *w, const void *x) {
    const blk_iq4_nl *a = w;
    const blk_q8_0 *b = x;
    float acc = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_iq4_nl));
        int8_t q[32];
        ra_iq4_values(a[i].qs, q);
        acc = fmaf((float)idot(q, b[i].qs, 32), ra_f16_table[a[i].d] * ra_f16_table[b[i].d], acc);
    }
    return acc;
}

static float dot_iq4_xs(int64_t n, const void *w, const void *x) {
    const blk_iq4_xs *a = w;
    const blk_q8_k *b = x;
    float acc = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_iq4_xs));
        int sumi = 0;
        for (int j = 0; j < 8; j++) {
            int8_t q[32];
            ra_iq4_values(a[i].qs + 16 * j, q);
            sumi += ra_iq4_xs_scale(&a[i], j) * idot(q, b[i].qs + 32 * j, 32);
        }
        acc = fmaf((float)sumi, ra_f16_table[a[i].d] * b[i].d, acc);
    }
    return acc;
}

const ra_dot_table ra_dots_scalar = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q4_0] = dot_q4_0, [RA_DI_Q4_1] = dot_q4_1, [RA_DI_Q5_0] = dot_q5_0, [RA_DI_Q5_1] = dot_q5_1,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_K] = dot_q4_k, [RA_DI_Q5_K] = dot_q5_k, [RA_DI_Q6_K] = dot_q6_k,
        [RA_DI_Q2_K] = dot_q2_k, [RA_DI_Q3_K] = dot_q3_k, [RA_DI_IQ4_NL] = dot_iq4_nl, [RA_DI_IQ4_XS] = dot_iq4_xs,
    },
};
