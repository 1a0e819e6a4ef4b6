// The q·k and V kernels of attention for one vector width, compiled twice: ops_attention_avx2.c (8 floats a vector)
// and ops_attention_avx512.c (16), which define first:
//   RA_AK_TARGET          the functions' target attribute
//   RA_AK_VEC, RA_AK_W    the vector type and its lanes
//   RA_AK_ZERO(), RA_AK_SET1(x), RA_AK_LOADU(p), RA_AK_STOREU(p, v), RA_AK_FMA(a, b, c)
//   RA_AK_LOADH(p)        RA_AK_W halves at p as floats
//   RA_AK_FOLD(v)         the vector folded to 8 lanes (__m256) for ra_attn_store_scores
//   RA_AK_SUFFIX          appended to the entry points' names (ra_attn_scores_<suffix>, ra_attn_values_<suffix>)
// Private to CKernels; head_dim % RA_AK_W == 0.
#include "attention_x86.h"

#if defined(__x86_64__)

#define RA_AK_CAT2(a, b) a##_##b
#define RA_AK_CAT(a, b) RA_AK_CAT2(a, b)
#define RA_AK_NAME(x) RA_AK_CAT(x, RA_AK_SUFFIX)

// Scores of G query heads against the R positions from j of one kv head: each K row is converted once and shared by
// the G heads (accumulators stay in registers; G and R are constants). A score is one chain of head_dim / W fmas, so
// one row at a time ran at the fma's latency (a single head of 256 dims: 32 dependent fmas a position at W = 8); R
// rows side by side are R independent chains. Each (row, head) sums its products in the same order whatever G and R,
// then folds and sums its lanes in one order (ra_attn_store_scores), so the bits do not depend on how heads and rows
// are grouped.
RA_AK_TARGET static inline __attribute__((always_inline)) void RA_AK_NAME(ra_attn_scores_rows)(
        const uint16_t *k, int64_t kv_stride, int64_t j, const float *q, int64_t hd, float scale, float *scores, int64_t ss,
        int64_t pf, const int G, const int R) {
    const uint16_t *row = k + j * kv_stride;
    for (int r = 0; r < R; r++) ra_attn_prefetch_row(row + pf + r * kv_stride, hd);
    RA_AK_VEC acc[4][4];   // [position][head]: R and G are at most 4
    for (int r = 0; r < R; r++)
        for (int h = 0; h < G; h++) acc[r][h] = RA_AK_ZERO();
    for (int64_t i = 0; i < hd; i += RA_AK_W) {
        RA_AK_VEC kv[4];
        for (int r = 0; r < R; r++) kv[r] = RA_AK_LOADH(row + r * kv_stride + i);
        for (int h = 0; h < G; h++) {
            const RA_AK_VEC qv = RA_AK_LOADU(q + h * hd + i);
            for (int r = 0; r < R; r++) acc[r][h] = RA_AK_FMA(kv[r], qv, acc[r][h]);
        }
    }
    __m256 folded[4][4];
    for (int r = 0; r < R; r++)
        for (int h = 0; h < G; h++) folded[r][h] = RA_AK_FOLD(acc[r][h]);
    ra_attn_store_scores(folded, scale, scores, ss, j, G, R);
}

// Scores of G query heads against positions [0, n_kv): R rows at a time, then the rest one by one; pf: halves from a
// row to the one its pass prefetches.
#define RA_AK_SCORES(G, R)                                                                                         \
    RA_AK_TARGET static void RA_AK_NAME(ra_attn_scores_g##G)(const uint16_t *k, int64_t kv_stride, int64_t n_kv,    \
                                                             const float *q, int64_t hd, float scale, float *scores, \
                                                             int64_t ss) {                                         \
        _Static_assert(G <= 4 && R <= 4, "ra_attn_scores_rows holds at most 4 heads x 4 positions");              \
        const int64_t pf = ra_attn_prefetch_rows(hd) * kv_stride;                                                  \
        int64_t j = 0;                                                                                             \
        for (; j + R <= n_kv; j += R) RA_AK_NAME(ra_attn_scores_rows)(k, kv_stride, j, q, hd, scale, scores, ss, pf, G, R); \
        for (; j < n_kv; j++) RA_AK_NAME(ra_attn_scores_rows)(k, kv_stride, j, q, hd, scale, scores, ss, pf, G, 1); \
    }

// Positions [j0, j1) of out[h] = sum_j w[h][j] * V[j] for G heads, dimensions [i0, i0 + W*S): G*S accumulators in
// registers, each V element converted once for the G heads; they start from out (zero at j0 = 0), so every output
// element is one chain of fmas over j in order however the positions are cut. PF: the pass that also prefetches each
// V row pf halves ahead (a block's first slice). The V row advances by a pointer and the prefetch is a
// constant of the pass (an index times kv_stride and a test of i0 in the loop took ports the fmas need).
RA_AK_TARGET static inline __attribute__((always_inline)) void RA_AK_NAME(ra_attn_values_part)(
        const uint16_t *v, int64_t kv_stride, int64_t j0, int64_t j1, const float *w, int64_t ws, int64_t hd, float *out,
        int64_t i0, int64_t pf, const int G, const int S, const int PF) {
    RA_AK_VEC acc[4][4];
    for (int h = 0; h < G; h++)
        for (int s = 0; s < S; s++) acc[h][s] = j0 == 0 ? RA_AK_ZERO() : RA_AK_LOADU(out + h * hd + i0 + RA_AK_W * s);
    const uint16_t *row = v + j0 * kv_stride + i0;
    for (int64_t j = j0; j < j1; j++, row += kv_stride) {
        if (PF) ra_attn_prefetch_row(row + pf, hd);
        RA_AK_VEC vv[4];
        for (int s = 0; s < S; s++) vv[s] = RA_AK_LOADH(row + RA_AK_W * s);
        for (int h = 0; h < G; h++) {
            const RA_AK_VEC wb = RA_AK_SET1(w[h * ws + j]);
            for (int s = 0; s < S; s++) acc[h][s] = RA_AK_FMA(wb, vv[s], acc[h][s]);
        }
    }
    for (int h = 0; h < G; h++)
        for (int s = 0; s < S; s++) RA_AK_STOREU(out + h * hd + i0 + RA_AK_W * s, acc[h][s]);
}

// out[h] = sum_j w[h][j] * V[j] for G heads: per block of positions, slices of W*S dimensions whose G*S
// accumulators stay in registers (per position, S conversions and G broadcasts feed G*S fmas), then the rest W at a
// time; the first slice of a block prefetches its V rows.
#define RA_AK_VALUES(G, S)                                                                                         \
    RA_AK_TARGET static void RA_AK_NAME(ra_attn_values_g##G)(const uint16_t *v, int64_t kv_stride, int64_t n_kv,    \
                                                             const float *w, int64_t ws, int64_t hd, float *out) {   \
        if (n_kv <= 0) {                                                                                           \
            for (int64_t i = 0; i < G * hd; i++) out[i] = 0.0f;                                                    \
            return;                                                                                                \
        }                                                                                                          \
        const int64_t pf = ra_attn_prefetch_rows(hd) * kv_stride;                                                  \
        for (int64_t j0 = 0; j0 < n_kv; j0 += RA_ATTN_VALUES_BLOCK) {                                              \
            const int64_t j1 = n_kv - j0 < RA_ATTN_VALUES_BLOCK ? n_kv : j0 + RA_ATTN_VALUES_BLOCK;                \
            int64_t i0;                                                                                            \
            if (RA_AK_W * S <= hd) {                                                                               \
                RA_AK_NAME(ra_attn_values_part)(v, kv_stride, j0, j1, w, ws, hd, out, 0, pf, G, S, 1);               \
                i0 = RA_AK_W * S;                                                                                  \
            } else {                                                                                               \
                RA_AK_NAME(ra_attn_values_part)(v, kv_stride, j0, j1, w, ws, hd, out, 0, pf, G, 1, 1);               \
                i0 = RA_AK_W;                                                                                      \
            }                                                                                                      \
            for (; i0 + RA_AK_W * S <= hd; i0 += RA_AK_W * S)                                                      \
                RA_AK_NAME(ra_attn_values_part)(v, kv_stride, j0, j1, w, ws, hd, out, i0, pf, G, S, 0);              \
            for (; i0 < hd; i0 += RA_AK_W) RA_AK_NAME(ra_attn_values_part)(v, kv_stride, j0, j1, w, ws, hd, out, i0, pf, G, 1, 0); \
        }                                                                                                          \
    }

RA_AK_SCORES(1, 4)
RA_AK_SCORES(2, 4)
RA_AK_SCORES(3, 2)
RA_AK_SCORES(4, 2)
RA_AK_VALUES(1, 4)
RA_AK_VALUES(2, 4)
RA_AK_VALUES(3, 2)
RA_AK_VALUES(4, 2)

/// Scores for any group size: sub-groups of 4 heads (query rows), then the rest in one pass of 3 or in passes of 2
/// and 1. An 8-row kernel (one K vector, eight q loads per eight fmas, and values' eight broadcasts per V vector) ran
/// prompts 1.2-1.5x slower than two 4-row passes. A group of 3 (SmolLM2: 9 heads on 3 kv heads) in passes of 2 and 1
/// converted every K and V row twice: one pass of 3 took decode at 4096 cached positions from 44.3 to 50.7 tok/s on
/// the Zen 1 EPYC.
void RA_AK_NAME(ra_attn_scores)(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                                int64_t hd, float scale, float *scores, int64_t ss) {
    int64_t h = 0;
    for (; h + 4 <= group; h += 4) RA_AK_NAME(ra_attn_scores_g4)(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
    if (group - h == 3) { RA_AK_NAME(ra_attn_scores_g3)(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); return; }
    if (h + 2 <= group) { RA_AK_NAME(ra_attn_scores_g2)(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); h += 2; }
    if (h < group) RA_AK_NAME(ra_attn_scores_g1)(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
}

/// Weighted sums of V for any group size (out is overwritten).
void RA_AK_NAME(ra_attn_values)(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                                int64_t group, int64_t hd, float *out) {
    int64_t h = 0;
    for (; h + 4 <= group; h += 4) RA_AK_NAME(ra_attn_values_g4)(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
    if (group - h == 3) { RA_AK_NAME(ra_attn_values_g3)(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); return; }
    if (h + 2 <= group) { RA_AK_NAME(ra_attn_values_g2)(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); h += 2; }
    if (h < group) RA_AK_NAME(ra_attn_values_g1)(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
}

#endif
