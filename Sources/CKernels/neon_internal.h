// Private to the aarch64 kernels (dot_neon.c, dot_neon_k.c, ops_neon.c): the integer dot helpers of the two
// NEON tables and the wrapper that makes a row·vector dot and its multi-row kernel from one body.
#ifndef RUNANYWHERE_NEON_INTERNAL_H
#define RUNANYWHERE_NEON_INTERNAL_H
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

// Integer dot of 16 / 32 int8 pairs as four int32 partial sums (lanes: any split of the sum; integer sums are
// exact, so every split gives the same total).
typedef int32x4_t (*idot16_fn)(int8x16_t a, int8x16_t b);
typedef int32x4_t (*idot32_fn)(int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1);

// Plain ARMv8: widening multiplies into int16 lanes, each holding two products, then pairwise widening
// adds into int32. Two products fit int16: the activations never hold -128 (ra_quantize_row) and every weight
// quant here is in [-128, 127], so a product is at most 128 * 127 = 16256 in magnitude and two are at most 32512.
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

// A half's float value by FCVT from its stored bits: exactly ra_f16_table's value, one load instead of two.
RA_INLINE float ra_neon_h2f(const uint16_t *p) {
    __fp16 h;
    memcpy(&h, p, 2);
    return (float)h;
}

// Activation row k of a batch (rows xs bytes apart).
#define RA_XROW(x, xs, k) ((const void *)((const uint8_t *)(x) + (int64_t)(k) * (xs)))

// A row·vector dot (name_dot) and its multi-row kernel (name_multi) from one always-inline body
//   rows(n, w, x, xs, nx, out, os, helper)   (nx a constant after inlining, 1..4)
// that computes out[k * os] = dot(w, activation row k) for k < nx, decoding each weight block once for the nx
// rows. The dot is the body with nx = 1, so each row of a batch goes through exactly the float operations of the
// single-row dot (every float step is an explicit intrinsic or fmaf, nothing for the compiler to contract
// differently): a prompt batch gives bit for bit the logits of feeding its tokens one by one, as on x86.
// (attr: storage class and target attribute of the two functions.)
#define RA_NEON_KERNELS(attr, name, rows, helper)                                                                   \
    attr float name##_dot(int64_t n, const void *w, const void *x) {                                            \
        float o;                                                                                                \
        rows(n, w, x, 0, 1, &o, 0, helper);                                                                     \
        return o;                                                                                               \
    }                                                                                                           \
    attr void name##_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os) { \
        for (; nx >= 4; nx -= 4, x = RA_XROW(x, xs, 4), out += 4 * os) rows(n, w, x, xs, 4, out, os, helper);   \
        if (nx == 3) rows(n, w, x, xs, 3, out, os, helper);                                                     \
        else if (nx == 2) rows(n, w, x, xs, 2, out, os, helper);                                                \
        else if (nx == 1) rows(n, w, x, xs, 1, out, os, helper);                                                \
    }

// The K-quant kernels of dot_neon_k.c (plain NEON and SDOT), entered into the tables of dot_neon.c.
float ra_neon_q4_k_dot(int64_t n, const void *w, const void *x);
void ra_neon_q4_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_neon_q5_k_dot(int64_t n, const void *w, const void *x);
void ra_neon_q5_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_neon_q6_k_dot(int64_t n, const void *w, const void *x);
void ra_neon_q6_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_neon_q3_k_dot(int64_t n, const void *w, const void *x);
void ra_neon_q3_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_neon_q2_k_dot(int64_t n, const void *w, const void *x);
void ra_neon_q2_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_neon_iq4_nl_dot(int64_t n, const void *w, const void *x);
void ra_neon_iq4_nl_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_neon_iq4_xs_dot(int64_t n, const void *w, const void *x);
void ra_neon_iq4_xs_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
#if RA_NEON_SDOT
float ra_sdot_q4_k_dot(int64_t n, const void *w, const void *x);
void ra_sdot_q4_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_sdot_q5_k_dot(int64_t n, const void *w, const void *x);
void ra_sdot_q5_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_sdot_q6_k_dot(int64_t n, const void *w, const void *x);
void ra_sdot_q6_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_sdot_q3_k_dot(int64_t n, const void *w, const void *x);
void ra_sdot_q3_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_sdot_q2_k_dot(int64_t n, const void *w, const void *x);
void ra_sdot_q2_k_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_sdot_iq4_nl_dot(int64_t n, const void *w, const void *x);
void ra_sdot_iq4_nl_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_sdot_iq4_xs_dot(int64_t n, const void *w, const void *x);
void ra_sdot_iq4_xs_multi(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);

// ops_neon.c: 1 when the calling thread's kernel path is a NEON one (the operations below are used only then).
int ra_neon_ops_enabled(void);
// ra_quantize_row of Q8_0, Q8_1, Q8_K and F16 rows with the scalar bytes; 0 (nothing done) for another type or
// when the path is scalar.
int ra_neon_quantize_row(int type, const float *x, void *dst, int64_t n);
// ops.c's attention steps (head_dim a multiple of 8): scores of `group` query rows against n_kv K rows, weighted
// sums of n_kv V rows (out overwritten), rounding to F16 precision in place.
void ra_neon_attn_scores(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group, int64_t hd,
                         float scale, float *scores, int64_t ss);
void ra_neon_attn_values(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws, int64_t group,
                         int64_t hd, float *out);
void ra_neon_round_f16(float *x, int64_t n);
// sum of x[i]^2 (float squares, double sum); g[i] = silu(g[i]) * u[i] for i in [lo, hi); x[i] = e^(x[i] - mx)
// returning their sum in double.
double ra_neon_sum_squares(const float *x, int64_t n);
void ra_neon_silu_mul(float *g, const float *u, int64_t lo, int64_t hi);
double ra_neon_exp_sub(float *x, int64_t n, float mx);

#endif

#endif
#endif
