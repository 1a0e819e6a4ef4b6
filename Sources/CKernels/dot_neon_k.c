// NEON kernels of the K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K × Q8_K activations) and of IQ4_NL / IQ4_XS for aarch64: dots and multi-row kernels,
// plain ARMv8 and ARMv8.2 SDOT, made by RA_NEON_KERNELS (neon_internal.h) and entered into the tables of
// dot_neon.c. Per super-block the integer sums are exact and the float step is dot_scalar.c's expression, so a
// row gives what the scalar kernel gives up to that expression's rounding (Q4_K, Q6_K) or bit for bit (Q2_K, Q3_K, Q5_K).
#include "neon_internal.h"

#if defined(__aarch64__)

// Activation super-block i of row k.
#define RA_Q8K(x, xs, k, i) ((const blk_q8_k *)RA_XROW(x, xs, k) + (i))

// sum_j min[j] * (bsums[2j] + bsums[2j+1]) of a Q4_K/Q5_K super-block (a sum of 32 int8 fits int16).
RA_INLINE int k4_min_sum(const blk_q8_k *b, int16x8_t mins) {
    const int16x8_t bs = vpaddq_s16(vld1q_s16(b->bsums), vld1q_s16(b->bsums + 8));
    return vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(bs), vget_low_s16(mins)), bs, mins));
}

// Q4_K and Q5_K (five = 1). A super-block of 256 has 8 sub-blocks of 32 with a 6-bit scale and min each; qs holds
// 4 groups of 32 bytes, whose low nibbles are sub-block 2g and high nibbles sub-block 2g + 1 (Q5_K: bits 2g and
// 2g + 1 of qh[l] are the fifth bits of element l of those sub-blocks). The quants (0..15 / 0..31) are dotted as
// int8 with the activations, each sub-block's int32 sums weighted by its scale; the mins meet the activation
// sums of 32.
RA_INLINE void k4_rows(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os,
                       idot32_fn idot32, const int five) {
    const uint8x16_t m4 = vdupq_n_u8(0x0f), one = vdupq_n_u8(1), two = vdupq_n_u8(2);
    float s[4] = { 0, 0, 0, 0 }, smin[4] = { 0, 0, 0, 0 };
    for (int64_t i = 0; i < n / QK_K; i++) {
        const uint8_t *sc, *q, *qhp = NULL;
        uint16_t dh, mh;
        if (five) {
            const blk_q5_k *a = (const blk_q5_k *)w + i;
            ra_prefetch_ahead(a, sizeof *a);
            sc = a->scales; q = a->qs; qhp = a->qh; dh = a->d; mh = a->dmin;
        } else {
            const blk_q4_k *a = (const blk_q4_k *)w + i;
            ra_prefetch_ahead(a, sizeof *a);
            sc = a->scales; q = a->qs; dh = a->d; mh = a->dmin;
        }
        uint32_t u[4];
        ra_unpack_scales_k4_words(sc, u);
        uint8_t sm[16];   // sm[0..7]: scales, sm[8..15]: mins
        memcpy(sm, u, 16);
        const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sm + 8)));
        uint8x16_t qh0 = vdupq_n_u8(0), qh1 = vdupq_n_u8(0);
        if (five) { qh0 = vld1q_u8(qhp); qh1 = vld1q_u8(qhp + 16); }
        int32x4_t acc[4];
        for (int k = 0; k < nx; k++) acc[k] = vdupq_n_s32(0);
        for (int g = 0; g < 4; g++, q += 32) {
            const uint8x16_t q0 = vld1q_u8(q), q1 = vld1q_u8(q + 16);
            uint8x16_t l0 = vandq_u8(q0, m4), l1 = vandq_u8(q1, m4), h0 = vshrq_n_u8(q0, 4), h1 = vshrq_n_u8(q1, 4);
            if (five) {   // qh0/qh1 are shifted right by 2 per group: bit 0 -> sub-block 2g, bit 1 -> 2g + 1
                l0 = vorrq_u8(l0, vshlq_n_u8(vandq_u8(qh0, one), 4));
                l1 = vorrq_u8(l1, vshlq_n_u8(vandq_u8(qh1, one), 4));
                h0 = vorrq_u8(h0, vshlq_n_u8(vandq_u8(qh0, two), 3));
                h1 = vorrq_u8(h1, vshlq_n_u8(vandq_u8(qh1, two), 3));
                qh0 = vshrq_n_u8(qh0, 2);
                qh1 = vshrq_n_u8(qh1, 2);
            }
            const int8x16_t lo0 = vreinterpretq_s8_u8(l0), lo1 = vreinterpretq_s8_u8(l1);
            const int8x16_t hi0 = vreinterpretq_s8_u8(h0), hi1 = vreinterpretq_s8_u8(h1);
            for (int k = 0; k < nx; k++) {
                const int8_t *y = RA_Q8K(x, xs, k, i)->qs + 64 * g;
                acc[k] = vmlaq_n_s32(acc[k], idot32(lo0, lo1, vld1q_s8(y), vld1q_s8(y + 16)), sm[2 * g]);
                acc[k] = vmlaq_n_s32(acc[k], idot32(hi0, hi1, vld1q_s8(y + 32), vld1q_s8(y + 48)), sm[2 * g + 1]);
            }
        }
        const float dw = ra_f16_table[dh], dmin = ra_f16_table[mh];
        for (int k = 0; k < nx; k++) {
            const blk_q8_k *b = RA_Q8K(x, xs, k, i);
            const int sumi = vaddvq_s32(acc[k]), summ = k4_min_sum(b, mins);
            if (five) {   // dot_scalar.c's dot_q5_k: two fma sums (ggml's repacked Q5_K order)
                s[k] = __builtin_fmaf((float)sumi, dw * b->d, s[k]);
                smin[k] = __builtin_fmaf((float)summ, dmin * b->d, smin[k]);
            } else {      // dot_scalar.c's k4_finish
                s[k] += b->d * dw * (float)sumi - b->d * dmin * (float)summ;
            }
        }
    }
    for (int k = 0; k < nx; k++) out[k * os] = five ? s[k] - smin[k] : s[k];
}

RA_INLINE void rows_q4_k(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot32_fn f) {
    k4_rows(n, w, x, xs, nx, out, os, f, 0);
}

RA_INLINE void rows_q5_k(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot32_fn f) {
    k4_rows(n, w, x, xs, nx, out, os, f, 1);
}

// Σ_k w[k] · bsums[k] over a super-block's 16 sub-blocks of 16 (w: int16 weights 0..7 in w0, 8..15 in w1, scales or
// mins) as 4 int32 partial sums: what the offsets and mins of Q6_K, Q3_K and Q2_K take off through the activation sums.
RA_INLINE int32x4_t k16_bsum_dot(int16x8_t w0, int16x8_t w1, const blk_q8_k *b) {
    const int16x8_t bs0 = vld1q_s16(b->bsums), bs1 = vld1q_s16(b->bsums + 8);
    int32x4_t m = vmull_s16(vget_low_s16(bs0), vget_low_s16(w0));
    m = vmlal_high_s16(m, bs0, w0);
    m = vmlal_s16(m, vget_low_s16(bs1), vget_low_s16(w1));
    return vmlal_high_s16(m, bs1, w1);
}

// Q6_K × Q8_K. A super-block of 256 six-bit quants is two halves of 128; in half h, for l in 0..31,
// ql[64h + l] holds elements l (low nibble) and l + 64 (high nibble), ql[64h + 32 + l] elements l + 32
// and l + 96, and the 4 two-bit pairs of qh[32h + l] (bits 0-1, 2-3, 4-5, 6-7) are the fifth and sixth
// bits of elements l, l + 32, l + 64, l + 96. Scale g (int8) weights elements 16g..16g+15. The stored values
// (0..63) are dotted 16 at a time; the offset 32 is taken off once per super-block through the activation
// sums: sum_g sc[g] * dot(q_g - 32, y_g) = sum_g sc[g] * dot(q_g, y_g) - 32 * sum_g sc[g] * bsums[g] (exact
// in int32, so the result is the scalar kernel's).
RA_INLINE void rows_q6_k(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os,
                         idot16_fn idot16) {
    const uint8x16_t m4 = vdupq_n_u8(0x0f), m30 = vdupq_n_u8(0x30);
    float s[4] = { 0, 0, 0, 0 };
    for (int64_t i = 0; i < n / QK_K; i++) {
        const blk_q6_k *a = (const blk_q6_k *)w + i;
        ra_prefetch_ahead(a, sizeof *a);
        const uint8_t *ql = a->ql, *qh = a->qh;
        const int8_t *sc = a->scales;
        const int8x16_t scv = vld1q_s8(sc);
        const int16x8_t sc0 = vmovl_s8(vget_low_s8(scv)), sc1 = vmovl_high_s8(scv);
        int32x4_t acc[4];
        for (int k = 0; k < nx; k++) acc[k] = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++, ql += 64, qh += 32, sc += 8)
            for (int v = 0; v < 2; v++) {   // l in [16v, 16v + 16): elements 16v + 32k + l', scale sc[2k + v]
                const uint8x16_t hb = vld1q_u8(qh + 16 * v), la = vld1q_u8(ql + 16 * v), lb = vld1q_u8(ql + 32 + 16 * v);
                const int8x16_t q0 = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(la, m4), vandq_u8(vshlq_n_u8(hb, 4), m30)));
                const int8x16_t q1 = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(lb, m4), vandq_u8(vshlq_n_u8(hb, 2), m30)));
                const int8x16_t q2 = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(la, 4), vandq_u8(hb, m30)));
                const int8x16_t q3 = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(lb, 4), vandq_u8(vshrq_n_u8(hb, 2), m30)));
                for (int k = 0; k < nx; k++) {
                    const int8_t *y = RA_Q8K(x, xs, k, i)->qs + 128 * h + 16 * v;
                    acc[k] = vmlaq_n_s32(acc[k], idot16(q0, vld1q_s8(y)), sc[v]);
                    acc[k] = vmlaq_n_s32(acc[k], idot16(q1, vld1q_s8(y + 32)), sc[2 + v]);
                    acc[k] = vmlaq_n_s32(acc[k], idot16(q2, vld1q_s8(y + 64)), sc[4 + v]);
                    acc[k] = vmlaq_n_s32(acc[k], idot16(q3, vld1q_s8(y + 96)), sc[6 + v]);
                }
            }
        const float dw = ra_f16_table[a->d];
        for (int k = 0; k < nx; k++) {
            const blk_q8_k *b = RA_Q8K(x, xs, k, i);
            const int sumi = vaddvq_s32(vmlsq_n_s32(acc[k], k16_bsum_dot(sc0, sc1, b), 32));
            s[k] += b->d * dw * (float)sumi;
        }
    }
    for (int k = 0; k < nx; k++) out[k * os] = s[k];
}

// Q3_K (three = 1) and Q2_K × Q8_K. In half h (128 elements), bits 2c, 2c + 1 of qs[32h + l] are the two low bits
// of element 128h + 32c + l; Q3_K's third bit is bit 4h + c of hmask[l]. Scale k weights elements 16k..16k+15. The
// unsigned quants (Q3_K 0..7, Q2_K 0..3) are dotted 16 at a time; Q3_K's offset 4 comes off as 4 · Σ_k sc[k] ·
// bsums[k], Q2_K's mins meet the activation sums the same way: exact int32 sums, then dot_scalar.c's fmas, so a row
// gives the scalar kernel's bits.
RA_INLINE void k16_low_rows(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os,
                            idot16_fn idot16, const int three) {
    const uint8x16_t m3 = vdupq_n_u8(3), four = vdupq_n_u8(4);
    float s[4] = { 0, 0, 0, 0 };
    for (int64_t i = 0; i < n / QK_K; i++) {
        const uint8_t *qs, *hm = NULL;
        const uint16_t *dh, *mh = NULL;
        int8_t sc[16], mn[16];
        if (three) {
            const blk_q3_k *a = (const blk_q3_k *)w + i;
            ra_prefetch_ahead(a, sizeof *a);
            qs = a->qs; hm = a->hmask; dh = &a->d;
            ra_unpack_scales_q3_k(a->scales, sc);
        } else {
            const blk_q2_k *a = (const blk_q2_k *)w + i;
            ra_prefetch_ahead(a, sizeof *a);
            qs = a->qs; dh = &a->d; mh = &a->dmin;
            const uint8x16_t b = vld1q_u8(a->scales);
            vst1q_s8(sc, vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(15))));
            vst1q_s8(mn, vreinterpretq_s8_u8(vshrq_n_u8(b, 4)));
        }
        int32x4_t acc[4];
        for (int k = 0; k < nx; k++) acc[k] = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++)
            for (int v = 0; v < 2; v++) {   // l in [16v, 16v + 16): elements 128h + 32c + 16v + l', scale 8h + 2c + v
                uint8x16_t bits = vld1q_u8(qs + 32 * h + 16 * v), hb = vdupq_n_u8(0);
                if (three) hb = h ? vshrq_n_u8(vld1q_u8(hm + 16 * v), 4) : vld1q_u8(hm + 16 * v);
                for (int c = 0; c < 4; c++) {
                    uint8x16_t q = vandq_u8(bits, m3);
                    if (three) q = vorrq_u8(q, vandq_u8(vshlq_n_u8(hb, 2), four));
                    bits = vshrq_n_u8(bits, 2);
                    hb = vshrq_n_u8(hb, 1);
                    const int8x16_t qv = vreinterpretq_s8_u8(q);
                    for (int k = 0; k < nx; k++) {
                        const int8_t *y = RA_Q8K(x, xs, k, i)->qs + 128 * h + 32 * c + 16 * v;
                        acc[k] = vmlaq_n_s32(acc[k], idot16(qv, vld1q_s8(y)), sc[8 * h + 2 * c + v]);
                    }
                }
            }
        const float dw = ra_neon_h2f(dh), dmin = three ? 0 : ra_neon_h2f(mh);
        const int8x16_t wv = vld1q_s8(three ? sc : mn);   // Q3_K: the scales meet the offset; Q2_K: the mins
        const int16x8_t w0 = vmovl_s8(vget_low_s8(wv)), w1 = vmovl_high_s8(wv);
        for (int k = 0; k < nx; k++) {
            const blk_q8_k *b = RA_Q8K(x, xs, k, i);
            const int32x4_t m = k16_bsum_dot(w0, w1, b);
            if (three) {
                s[k] = __builtin_fmaf((float)vaddvq_s32(vmlsq_n_s32(acc[k], m, 4)), dw * b->d, s[k]);
            } else {
                s[k] = __builtin_fmaf((float)vaddvq_s32(acc[k]), dw * b->d, s[k]);
                s[k] = __builtin_fmaf(-(float)vaddvq_s32(m), dmin * b->d, s[k]);
            }
        }
    }
    for (int k = 0; k < nx; k++) out[k * os] = s[k];
}

RA_INLINE void rows_q3_k(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot16_fn f) {
    k16_low_rows(n, w, x, xs, nx, out, os, f, 1);
}

RA_INLINE void rows_q2_k(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot16_fn f) {
    k16_low_rows(n, w, x, xs, nx, out, os, f, 0);
}

// IQ4_NL (xs = 0, Q8_0 activations) and IQ4_XS (Q8_K): the 16 levels looked up by TBL on a block's nibbles, dotted
// signed with the activations (|level| <= 127); per block (IQ4_XS: per super-block, the blocks' sums weighted by their
// scales) the exact int32 sum, then dot_scalar.c's fma: the scalar kernel's bits.
RA_INLINE void iq4_rows(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot32_fn idot32,
                        const int k256) {
    const int8x16_t levels = vld1q_s8(ra_iq4_levels);
    const uint8x16_t m4 = vdupq_n_u8(15);
    float s[4] = { 0, 0, 0, 0 };
    const int64_t nb = k256 ? n / QK_K : n / 32;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *qs;
        if (k256) {
            qs = ((const blk_iq4_xs *)w)[i].qs;
            ra_prefetch_ahead((const blk_iq4_xs *)w + i, sizeof(blk_iq4_xs));
        } else {
            qs = ((const blk_iq4_nl *)w)[i].qs;
            ra_prefetch_ahead((const blk_iq4_nl *)w + i, sizeof(blk_iq4_nl));
        }
        int32x4_t acc[4];
        for (int k = 0; k < nx; k++) acc[k] = vdupq_n_s32(0);
        for (int j = 0; j < (k256 ? 8 : 1); j++) {
            const uint8x16_t q = vld1q_u8(qs + 16 * j);
            const int8x16_t lo = vqtbl1q_s8(levels, vandq_u8(q, m4)), hi = vqtbl1q_s8(levels, vshrq_n_u8(q, 4));
            const int sc = k256 ? ra_iq4_xs_scale((const blk_iq4_xs *)w + i, j) : 1;
            for (int k = 0; k < nx; k++) {
                const int8_t *y = k256 ? RA_Q8K(x, xs, k, i)->qs + 32 * j : ((const blk_q8_0 *)RA_XROW(x, xs, k))[i].qs;
                acc[k] = vmlaq_n_s32(acc[k], idot32(lo, hi, vld1q_s8(y), vld1q_s8(y + 16)), sc);
            }
        }
        for (int k = 0; k < nx; k++) {
            const int sumi = vaddvq_s32(acc[k]);
            const float dw = ra_f16_table[k256 ? ((const blk_iq4_xs *)w)[i].d : ((const blk_iq4_nl *)w)[i].d];
            const float dx = k256 ? RA_Q8K(x, xs, k, i)->d : ra_f16_table[((const blk_q8_0 *)RA_XROW(x, xs, k))[i].d];
            s[k] = __builtin_fmaf((float)sumi, dw * dx, s[k]);
        }
    }
    for (int k = 0; k < nx; k++) out[k * os] = s[k];
}

RA_INLINE void rows_iq4_nl(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot32_fn f) {
    iq4_rows(n, w, x, xs, nx, out, os, f, 0);
}

RA_INLINE void rows_iq4_xs(int64_t n, const void *w, const void *x, int64_t xs, const int nx, float *out, int64_t os, idot32_fn f) {
    iq4_rows(n, w, x, xs, nx, out, os, f, 1);
}

RA_NEON_KERNELS(, ra_neon_q4_k, rows_q4_k, idot32_mull)
RA_NEON_KERNELS(, ra_neon_q5_k, rows_q5_k, idot32_mull)
RA_NEON_KERNELS(, ra_neon_q6_k, rows_q6_k, idot16_mull)
RA_NEON_KERNELS(, ra_neon_q3_k, rows_q3_k, idot16_mull)
RA_NEON_KERNELS(, ra_neon_q2_k, rows_q2_k, idot16_mull)
RA_NEON_KERNELS(, ra_neon_iq4_nl, rows_iq4_nl, idot32_mull)
RA_NEON_KERNELS(, ra_neon_iq4_xs, rows_iq4_xs, idot32_mull)

#if RA_NEON_SDOT
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_q4_k, rows_q4_k, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_q5_k, rows_q5_k, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_q6_k, rows_q6_k, idot16_sdot)
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_q3_k, rows_q3_k, idot16_sdot)
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_q2_k, rows_q2_k, idot16_sdot)
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_iq4_nl, rows_iq4_nl, idot32_sdot)
RA_NEON_KERNELS(RA_DOTPROD, ra_sdot_iq4_xs, rows_iq4_xs, idot32_sdot)
#endif

#endif
