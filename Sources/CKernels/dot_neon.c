// NEON dot products for aarch64 (the decode hot path: one weight row · one quantized activation row).
//
// Two tables: ra_dots_neon uses only plain ARMv8 Advanced SIMD, which every aarch64 core has, and
// ra_dots_neon_dotprod uses the ARMv8.2 SDOT instruction. The dotprod functions are compiled with a
// per-function target attribute (no global -march flag), and dispatch.c only calls them after it has
// found the feature at run time (getauxval on Linux/Android, sysctl on Apple). Types without an entry
// here fall back to the scalar kernels; the batch entries (multi) are NULL, so batches loop over dot.
//
// Each kernel is written once as an always-inline body that takes the integer dot of a group of int8
// pairs as a function argument; the two tables instantiate it with the widening-multiply helper and the
// SDOT helper. The integer sums of a block are exact in both, so the results differ from the scalar
// reference only in the order of float additions (Q8_0) or not at all (Q4_K, Q6_K: the same float
// expression per super-block as dot_scalar.c).
#include "kernels_internal.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define RA_INLINE static inline __attribute__((always_inline))
// ARMv8.2-A with the dot product: GCC and clang both accept this spelling of the target attribute.
#define RA_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

// RA_NEON_SDOT: 1 when vdotq_s32 can be used inside a target("...+dotprod") function without a global
// -march flag. GCC's arm_neon.h defines it under a target pragma; clang's arm_neon.h guarded it with
// #ifdef __ARM_FEATURE_DOTPROD (a global flag) before the intrinsics became target-gated in LLVM 16
// (llvm-project issue #56480). With an older clang the SDOT table stays empty and dispatch falls back to
// the plain NEON one. (Apple clang numbers its own versions; its 16 is at least as new as LLVM 16.)
#ifndef RA_NEON_SDOT
#if defined(__ARM_FEATURE_DOTPROD) || (defined(__clang__) && __clang_major__ >= 16) || \
    (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10)
#define RA_NEON_SDOT 1
#else
#define RA_NEON_SDOT 0
#endif
#endif

// Integer dot of 16 / 32 int8 pairs as four int32 partial sums (lanes: any split of the sum).
typedef int32x4_t (*idot16_fn)(int8x16_t a, int8x16_t b);
typedef int32x4_t (*idot32_fn)(int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1);

// Plain ARMv8: widening multiplies into int16 lanes, each holding two products, then pairwise widening
// adds into int32. Two products fit int16: the activations never hold -128 (ra_quantize_row), so a
// product is at most 128 * 127 = 16256 in magnitude and two are at most 32512.
RA_INLINE int32x4_t idot16_mull(int8x16_t a, int8x16_t b) {
    const int16x8_t p = vmlal_high_s8(vmull_s8(vget_low_s8(a), vget_low_s8(b)), a, b);
    return vpaddlq_s16(p);
}

RA_INLINE int32x4_t idot32_mull(int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1) {
    const int16x8_t p0 = vmlal_high_s8(vmull_s8(vget_low_s8(a0), vget_low_s8(b0)), a0, b0);
    const int16x8_t p1 = vmlal_high_s8(vmull_s8(vget_low_s8(a1), vget_low_s8(b1)), a1, b1);
    return vpadalq_s16(vpaddlq_s16(p0), p1);
}

#if RA_NEON_SDOT
// ARMv8.2 SDOT: each int32 lane accumulates the products of 4 adjacent int8 pairs.
RA_DOTPROD RA_INLINE int32x4_t idot16_sdot(int8x16_t a, int8x16_t b) {
    return vdotq_s32(vdupq_n_s32(0), a, b);
}

RA_DOTPROD RA_INLINE int32x4_t idot32_sdot(int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1) {
    return vdotq_s32(vdotq_s32(vdupq_n_s32(0), a0, b0), a1, b1);
}
#endif

// Q8_0 × Q8_0: per block of 32, the integer dot is scaled by d_w * d_x and accumulated in four float
// lanes (one horizontal add per row instead of one per block).
RA_INLINE float q8_0_row(int64_t n, const void *w, const void *x, idot32_fn idot32) {
    const blk_q8_0 *a = w, *b = x;
    float32x4_t sum = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / QK8_0; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q8_0));
        const int32x4_t p = idot32(vld1q_s8(a[i].qs), vld1q_s8(a[i].qs + 16), vld1q_s8(b[i].qs), vld1q_s8(b[i].qs + 16));
        sum = vmlaq_n_f32(sum, vcvtq_f32_s32(p), ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return vaddvq_f32(sum);
}

// Q4_K × Q8_K. A super-block of 256 has 8 sub-blocks of 32 with a 6-bit scale and min each; qs holds
// 4 groups of 32 bytes, whose low nibbles are sub-block 2g and high nibbles sub-block 2g + 1. The
// nibbles (0..15) are dotted as int8 with the activations, each sub-block's int32 sums weighted by its
// scale; the mins meet the activation sums of 32 (bsums holds sums of 16, added pairwise).
RA_INLINE float q4_k_row(int64_t n, const void *w, const void *x, idot32_fn idot32) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q4_k));
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        uint8_t sm[16];   // sm[0..7]: scales, sm[8..15]: mins
        memcpy(sm, u, 16);
        // summ = sum_j min[j] * (bsums[2j] + bsums[2j+1]); a sum of 32 int8 fits int16
        const int16x8_t bs = vpaddq_s16(vld1q_s16(b[i].bsums), vld1q_s16(b[i].bsums + 8));
        const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sm + 8)));
        const int32x4_t mm = vmlal_high_s16(vmull_s16(vget_low_s16(bs), vget_low_s16(mins)), bs, mins);
        const int summ = vaddvq_s32(mm);
        int32x4_t acc = vdupq_n_s32(0);
        const uint8_t *q = a[i].qs;
        const int8_t *y = b[i].qs;
        for (int g = 0; g < 4; g++, q += 32, y += 64) {
            const uint8x16_t q0 = vld1q_u8(q), q1 = vld1q_u8(q + 16);
            const int8x16_t lo0 = vreinterpretq_s8_u8(vandq_u8(q0, m4)), lo1 = vreinterpretq_s8_u8(vandq_u8(q1, m4));
            const int8x16_t hi0 = vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), hi1 = vreinterpretq_s8_u8(vshrq_n_u8(q1, 4));
            acc = vmlaq_n_s32(acc, idot32(lo0, lo1, vld1q_s8(y), vld1q_s8(y + 16)), sm[2 * g]);
            acc = vmlaq_n_s32(acc, idot32(hi0, hi1, vld1q_s8(y + 32), vld1q_s8(y + 48)), sm[2 * g + 1]);
        }
        const int sumi = vaddvq_s32(acc);
        s += b[i].d * ra_f16_table[a[i].d] * (float)sumi - b[i].d * ra_f16_table[a[i].dmin] * (float)summ;
    }
    return s;
}

// Q6_K × Q8_K. A super-block of 256 six-bit quants is two halves of 128; in half h, for l in 0..31,
// ql[64h + l] holds elements l (low nibble) and l + 64 (high nibble), ql[64h + 32 + l] elements l + 32
// and l + 96, and the 4 two-bit pairs of qh[32h + l] (bits 0-1, 2-3, 4-5, 6-7) are the fifth and sixth
// bits of elements l, l + 32, l + 64, l + 96. The values minus 32 (-32..31) are dotted 16 at a time, each
// group of 16 weighted by its int8 scale.
RA_INLINE float q6_k_row(int64_t n, const void *w, const void *x, idot16_fn idot16) {
    const blk_q6_k *a = w;
    const blk_q8_k *b = x;
    const uint8x16_t m4 = vdupq_n_u8(0x0f), m30 = vdupq_n_u8(0x30);
    const int8x16_t off = vdupq_n_s8(32);
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q6_k));
        const uint8_t *ql = a[i].ql, *qh = a[i].qh;
        const int8_t *y = b[i].qs, *sc = a[i].scales;
        int32x4_t acc = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++, ql += 64, qh += 32, y += 128, sc += 8)
            for (int v = 0; v < 2; v++) {   // l in [16v, 16v + 16): elements 16v + 32k + l', scale sc[2k + v]
                const uint8x16_t hb = vld1q_u8(qh + 16 * v), la = vld1q_u8(ql + 16 * v), lb = vld1q_u8(ql + 32 + 16 * v);
                const uint8x16_t u0 = vorrq_u8(vandq_u8(la, m4), vandq_u8(vshlq_n_u8(hb, 4), m30));
                const uint8x16_t u1 = vorrq_u8(vandq_u8(lb, m4), vandq_u8(vshlq_n_u8(hb, 2), m30));
                const uint8x16_t u2 = vorrq_u8(vshrq_n_u8(la, 4), vandq_u8(hb, m30));
                const uint8x16_t u3 = vorrq_u8(vshrq_n_u8(lb, 4), vandq_u8(vshrq_n_u8(hb, 2), m30));
                const int8x16_t q0 = vsubq_s8(vreinterpretq_s8_u8(u0), off), q1 = vsubq_s8(vreinterpretq_s8_u8(u1), off);
                const int8x16_t q2 = vsubq_s8(vreinterpretq_s8_u8(u2), off), q3 = vsubq_s8(vreinterpretq_s8_u8(u3), off);
                acc = vmlaq_n_s32(acc, idot16(q0, vld1q_s8(y + 16 * v)), sc[v]);
                acc = vmlaq_n_s32(acc, idot16(q1, vld1q_s8(y + 32 + 16 * v)), sc[2 + v]);
                acc = vmlaq_n_s32(acc, idot16(q2, vld1q_s8(y + 64 + 16 * v)), sc[4 + v]);
                acc = vmlaq_n_s32(acc, idot16(q3, vld1q_s8(y + 96 + 16 * v)), sc[6 + v]);
            }
        s += b[i].d * ra_f16_table[a[i].d] * (float)vaddvq_s32(acc);
    }
    return s;
}

static float dot_q8_0_neon(int64_t n, const void *w, const void *x) { return q8_0_row(n, w, x, idot32_mull); }
static float dot_q4_k_neon(int64_t n, const void *w, const void *x) { return q4_k_row(n, w, x, idot32_mull); }
static float dot_q6_k_neon(int64_t n, const void *w, const void *x) { return q6_k_row(n, w, x, idot16_mull); }

const ra_dot_table ra_dots_neon = {
    .dot = { [RA_DI_Q8_0] = dot_q8_0_neon, [RA_DI_Q4_K] = dot_q4_k_neon, [RA_DI_Q6_K] = dot_q6_k_neon },
};

#if RA_NEON_SDOT
RA_DOTPROD static float dot_q8_0_sdot(int64_t n, const void *w, const void *x) { return q8_0_row(n, w, x, idot32_sdot); }
RA_DOTPROD static float dot_q4_k_sdot(int64_t n, const void *w, const void *x) { return q4_k_row(n, w, x, idot32_sdot); }
RA_DOTPROD static float dot_q6_k_sdot(int64_t n, const void *w, const void *x) { return q6_k_row(n, w, x, idot16_sdot); }

const ra_dot_table ra_dots_neon_dotprod = {
    .dot = { [RA_DI_Q8_0] = dot_q8_0_sdot, [RA_DI_Q4_K] = dot_q4_k_sdot, [RA_DI_Q6_K] = dot_q6_k_sdot },
};
#else
const ra_dot_table ra_dots_neon_dotprod = { .dot = { NULL } };   // (falls back to ra_dots_neon)
#endif

#endif
