// The AVX2/FMA/F16C kernels of attention (ops_attention.c): q·k scores and weighted sums of V rows for groups of
// query heads that share a kv head, a vector exp for the softmax, rounding to F16. Called only when the calling
// thread's kernel path has AVX2, FMA and F16C and head_dim % 8 == 0.
#include "kernels_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <math.h>

// K and V rows (hd halves, kv_stride apart) are read in order. The hardware prefetcher stops at every 4 KiB page (and
// in the position-major layout each row of a head is in a page of its own), so the kernels prefetch the whole row
// RA_ATTN_PREFETCH_ROWS positions ahead (4 KiB for head_dim 128 in the engine's head-major cache).
#define RA_ATTN_PREFETCH_ROWS 16

static inline __attribute__((always_inline)) void ra_attn_prefetch_row(const uint16_t *row, int64_t hd) {
    for (int64_t i = 0; i < hd; i += 32) _mm_prefetch((const char *)(row + i), _MM_HINT_T0);
}

/// Lanes [0, rem) set (0 < rem < 8): the tail of a row for maskload/maskstore.
__attribute__((target("avx2")))
static inline __m256i ra_tail_mask(int64_t rem) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2")))
static inline float ra_hsum256(__m256 v) {
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    return _mm_cvtss_f32(s4);
}

// The horizontal sums of 8 vectors in the lanes of one, each added in ra_hsum256's order ((a0 + a4) + (a2 + a6)) +
// ((a1 + a5) + (a3 + a7)), so a score has the same bits whichever way it is reduced; 14 shuffles and 7 adds instead of
// 8 × (3 shuffles, 3 adds).
__attribute__((target("avx2")))
static inline __m256 ra_hsum256x8(const __m256 v[8]) {
    __m256 b[4];
    for (int k = 0; k < 4; k++)   // [v_k's lo + hi | v_{k+4}'s lo + hi]
        b[k] = _mm256_add_ps(_mm256_permute2f128_ps(v[k], v[k + 4], 0x20), _mm256_permute2f128_ps(v[k], v[k + 4], 0x31));
    // c01 = [b0[0] + b0[2], b1[0] + b1[2], b0[1] + b0[3], b1[1] + b1[3]] per lane (v0, v1 | v4, v5); c23 the same for 2, 3
    const __m256 c01 = _mm256_add_ps(_mm256_unpacklo_ps(b[0], b[1]), _mm256_unpackhi_ps(b[0], b[1]));
    const __m256 c23 = _mm256_add_ps(_mm256_unpacklo_ps(b[2], b[3]), _mm256_unpackhi_ps(b[2], b[3]));
    return _mm256_add_ps(_mm256_shuffle_ps(c01, c23, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(c01, c23, _MM_SHUFFLE(3, 2, 3, 2)));
}

// Scores of G query heads against the R positions from j of one kv head: each K row is converted once and shared by
// the G heads (accumulators stay in registers; G and R are constants). A score is one chain of head_dim / 8 fmas, so
// one row at a time ran at the fma's latency (a single head of 256 dims: 32 dependent fmas a position); R rows side
// by side are R independent chains. Each (row, head) sums its products in the same order whatever G and R, so the
// bits do not depend on how heads and rows are grouped. head_dim % 8 == 0.
__attribute__((target("avx2,fma,f16c")))
static inline __attribute__((always_inline)) void ra_attn_scores_rows(const uint16_t *k, int64_t kv_stride, int64_t j,
                                                                     const float *q, int64_t hd, float scale, float *scores,
                                                                     int64_t ss, const int G, const int R) {
    const uint16_t *row = k + j * kv_stride;
    for (int r = 0; r < R; r++) ra_attn_prefetch_row(row + (RA_ATTN_PREFETCH_ROWS + r) * kv_stride, hd);
    __m256 acc[4][8];
    for (int r = 0; r < R; r++)
        for (int h = 0; h < G; h++) acc[r][h] = _mm256_setzero_ps();
    for (int64_t i = 0; i < hd; i += 8) {
        __m256 kv[4];
        for (int r = 0; r < R; r++) kv[r] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + r * kv_stride + i)));
        for (int h = 0; h < G; h++) {
            const __m256 qv = _mm256_loadu_ps(q + h * hd + i);
            for (int r = 0; r < R; r++) acc[r][h] = _mm256_fmadd_ps(kv[r], qv, acc[r][h]);
        }
    }
    if (G * R == 8) {
        // The 8 sums at once, lane h * R + r = (row r, head h), each in ra_hsum256's order.
        __m256 v[8];
        for (int h = 0; h < G; h++)
            for (int r = 0; r < R; r++) v[h * R + r] = acc[r][h];
        const __m256 sums = _mm256_mul_ps(ra_hsum256x8(v), _mm256_set1_ps(scale));
        if (R == 1) {
            float t[8];
            _mm256_storeu_ps(t, sums);
            for (int h = 0; h < G; h++) scores[h * ss + j] = t[h];
        } else if (R == 2) {
            for (int h = 0; h < G; h++) {
                const __m128 half = h < 2 ? _mm256_castps256_ps128(sums) : _mm256_extractf128_ps(sums, 1);
                if (h % 2 == 0) _mm_storel_pi((__m64 *)(void *)(scores + h * ss + j), half);
                else _mm_storeh_pi((__m64 *)(void *)(scores + h * ss + j), half);
            }
        } else {
            _mm_storeu_ps(scores + j, _mm256_castps256_ps128(sums));
            _mm_storeu_ps(scores + ss + j, _mm256_extractf128_ps(sums, 1));
        }
        return;
    }
    for (int h = 0; h < G; h++)
        for (int r = 0; r < R; r++) scores[h * ss + j + r] = ra_hsum256(acc[r][h]) * scale;
}

// Scores of G query heads against positions [0, n_kv): R rows at a time, then the rest one by one.
#define RA_ATTN_SCORES(G, R)                                                                                       \
    __attribute__((target("avx2,fma,f16c")))                                                                       \
    static void ra_attn_scores_g##G(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t hd, \
                                    float scale, float *scores, int64_t ss) {                                      \
        int64_t j = 0;                                                                                             \
        for (; j + R <= n_kv; j += R) ra_attn_scores_rows(k, kv_stride, j, q, hd, scale, scores, ss, G, R);        \
        for (; j < n_kv; j++) ra_attn_scores_rows(k, kv_stride, j, q, hd, scale, scores, ss, G, 1);                \
    }

// Positions [j0, j1) of out[h] = sum_j w[h][j] * V[j] for G heads, dimensions [i0, i0 + 8*S): G*S accumulators in
// registers, each V element converted once for the G heads; they start from out (zero at j0 = 0), so every output
// element is one chain of fmas over j in order however the positions are cut.
__attribute__((target("avx2,fma,f16c")))
static inline __attribute__((always_inline)) void ra_attn_values_part(const uint16_t *v, int64_t kv_stride, int64_t j0,
                                                                     int64_t j1, const float *w, int64_t ws, int64_t hd,
                                                                     float *out, int64_t i0, const int G, const int S) {
    __m256 acc[4][4];
    for (int h = 0; h < G; h++)
        for (int s = 0; s < S; s++) acc[h][s] = j0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(out + h * hd + i0 + 8 * s);
    for (int64_t j = j0; j < j1; j++) {
        const uint16_t *row = v + j * kv_stride + i0;
        if (i0 == 0) ra_attn_prefetch_row(row + RA_ATTN_PREFETCH_ROWS * kv_stride, hd);
        __m256 vv[4];
        for (int s = 0; s < S; s++) vv[s] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 8 * s)));
        for (int h = 0; h < G; h++) {
            const __m256 wb = _mm256_set1_ps(w[h * ws + j]);
            for (int s = 0; s < S; s++) acc[h][s] = _mm256_fmadd_ps(wb, vv[s], acc[h][s]);
        }
    }
    for (int h = 0; h < G; h++)
        for (int s = 0; s < S; s++) _mm256_storeu_ps(out + h * hd + i0 + 8 * s, acc[h][s]);
}

/// Positions a values pass takes at a time: their V rows (8 KiB at head_dim 128) stay in L1 while every slice of
/// dimensions passes over them. One pass per slice over all positions re-read each V row from L2 or beyond once per
/// slice: at 4096 cached positions the values were half of a prompt's attention.
#define RA_ATTN_VALUES_BLOCK 32

// out[h] = sum_j w[h][j] * V[j] for G heads: per block of positions, slices of 8*S dimensions whose G*S
// accumulators stay in registers, then the rest 8 at a time. head_dim % 8 == 0.
#define RA_ATTN_VALUES(G, S)                                                                                       \
    __attribute__((target("avx2,fma,f16c")))                                                                       \
    static void ra_attn_values_g##G(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w,            \
                                    int64_t ws, int64_t hd, float *out) {                                          \
        if (n_kv <= 0) {                                                                                           \
            for (int64_t i = 0; i < G * hd; i++) out[i] = 0.0f;                                                    \
            return;                                                                                                \
        }                                                                                                          \
        for (int64_t j0 = 0; j0 < n_kv; j0 += RA_ATTN_VALUES_BLOCK) {                                              \
            const int64_t j1 = n_kv - j0 < RA_ATTN_VALUES_BLOCK ? n_kv : j0 + RA_ATTN_VALUES_BLOCK;                \
            int64_t i0 = 0;                                                                                        \
            for (; i0 + 8 * S <= hd; i0 += 8 * S) ra_attn_values_part(v, kv_stride, j0, j1, w, ws, hd, out, i0, G, S); \
            for (; i0 < hd; i0 += 8) ra_attn_values_part(v, kv_stride, j0, j1, w, ws, hd, out, i0, G, 1);         \
        }                                                                                                          \
    }

RA_ATTN_SCORES(1, 4)
RA_ATTN_SCORES(2, 4)
RA_ATTN_SCORES(4, 2)
RA_ATTN_VALUES(1, 4)
RA_ATTN_VALUES(2, 4)
RA_ATTN_VALUES(4, 2)

/// Scores for any group size: sub-groups of 4, 2, 1 heads (query rows). An 8-row kernel (one K vector, eight q loads
/// per eight fmas, and values' eight broadcasts per V vector) ran prompts 1.2-1.5x slower than two 4-row passes.
void ra_attn_scores_avx2(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                                int64_t hd, float scale, float *scores, int64_t ss) {
    int64_t h = 0;
    for (; h + 4 <= group; h += 4) ra_attn_scores_g4(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
    if (h + 2 <= group) { ra_attn_scores_g2(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss); h += 2; }
    if (h < group) ra_attn_scores_g1(k, kv_stride, n_kv, q + h * hd, hd, scale, scores + h * ss, ss);
}

/// Weighted sums of V for any group size (out is overwritten).
void ra_attn_values_avx2(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                                int64_t group, int64_t hd, float *out) {
    int64_t h = 0;
    for (; h + 4 <= group; h += 4) ra_attn_values_g4(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
    if (h + 2 <= group) { ra_attn_values_g2(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd); h += 2; }
    if (h < group) ra_attn_values_g1(v, kv_stride, n_kv, w + h * ws, ws, hd, out + h * hd);
}

/// y[i] = x[i] · f rounded to F16 precision, for n floats (y may be x; f = 1 only rounds): the product in float,
/// then the rounding, as two passes would give.
__attribute__((target("avx2,f16c")))
void ra_scale_round_f16_avx2(const float *x, float *y, int64_t n, float f) {
    const __m256 fv = _mm256_set1_ps(f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(x + i), fv), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    if (i < n) {   // the last n % 8 (F16C rounds as ra_ops_f32_to_f16 does)
        const __m256i k = ra_tail_mask(n - i);
        const __m128i h = _mm256_cvtps_ph(_mm256_mul_ps(_mm256_maskload_ps(x + i, k), fv), _MM_FROUND_TO_NEAREST_INT);
        _mm256_maskstore_ps(y + i, k, _mm256_cvtph_ps(h));
    }
}

/// The largest of n floats (-inf for none), NaN ignored as by the scalar `x > mx ? x : mx`.
__attribute__((target("avx2")))
float ra_max_avx2(const float *x, int64_t n) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + i), m);   // (NaN in x: m is kept)
    if (i < n) {
        const __m256i k = ra_tail_mask(n - i);
        m = _mm256_max_ps(_mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(x + i, k), _mm256_castsi256_ps(k)), m);
    }
    float t[8], mx = -INFINITY;
    _mm256_storeu_ps(t, m);
    for (int k = 0; k < 8; k++) mx = t[k] > mx ? t[k] : mx;
    return mx;
}

// e^x for 8 lanes: x = k ln2 + r (|r| <= ln2/2, ln2 in two parts), e^r by a degree-6 polynomial, times 2^k built
// in two halves so that k down to -150 (subnormal results) and up to 128 (inf) come out right (|error| < 2 ulp,
// the NEON exp4 of ops_neon.c in AVX2).
__attribute__((target("avx2,fma")))
static inline __m256 ra_exp8(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)), _mm256_set1_ps(89.0f));
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i ki = _mm256_cvtps_epi32(k), k1 = _mm256_srai_epi32(ki, 1), k2 = _mm256_sub_epi32(ki, k1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/// SwiGLU's g[i] = silu(g[i]) * u[i] = g / (1 + e^-g) * u for i in [lo, hi) (ra_silu_mul on the x86 SIMD paths; the
/// NEON version's formula with this file's vector exp).
__attribute__((target("avx2,fma")))
void ra_silu_mul_avx2(float *g, const float *u, int64_t lo, int64_t hi) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        const __m256 e = ra_exp8(_mm256_xor_ps(x, sign));
        _mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
    }
    for (; i < hi; i++) g[i] = (g[i] / (1.0f + expf(-g[i]))) * u[i];
}

/// n floats to F16 (round to nearest even, as ra_ops_f32_to_f16 for every value but NaN payloads).
__attribute__((target("avx2,f16c")))
void ra_f32_to_f16_row_avx2(const float *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(void *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = ra_ops_f32_to_f16(x[i]);
}

/// x[i] = e^(x[i] - mx) for i in [0, n); returns the sum in double (as the scalar loop keeps it).
__attribute__((target("avx2,fma")))
double ra_exp_sub_avx2(float *x, int64_t n, float mx) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    const __m256 m = _mm256_set1_ps(mx);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = ra_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        _mm256_storeu_ps(x + i, e);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    if (i < n) {   // the last n % 8 in the same vector code (the masked lanes' e, maybe inf from a load of 0, are cleared)
        const __m256i k = ra_tail_mask(n - i);
        const __m256 e = _mm256_and_ps(ra_exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), m)), _mm256_castsi256_ps(k));
        _mm256_maskstore_ps(x + i, k, e);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    __m256d s = _mm256_add_pd(s0, s1);
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

#endif
