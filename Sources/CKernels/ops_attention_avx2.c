// The AVX2/FMA/F16C kernels of attention (ops_attention.c): q·k scores and weighted sums of V rows for groups of
// query heads that share a kv head, a vector exp for the softmax, rounding to F16. Called only when the calling
// thread's kernel path has AVX2, FMA and F16C and head_dim % 8 == 0.
#include "attention_x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <math.h>

/// Lanes [0, rem) set (0 < rem < 8): the tail of a row for maskload/maskstore.
__attribute__((target("avx2")))
static inline __m256i ra_tail_mask(int64_t rem) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The q·k and V kernels at 8 floats a vector (attention_kernels_impl.h): ra_attn_scores_avx2, ra_attn_values_avx2.
#define RA_AK_TARGET __attribute__((target("avx2,fma,f16c")))
#define RA_AK_VEC __m256
#define RA_AK_W 8
#define RA_AK_ZERO() _mm256_setzero_ps()
#define RA_AK_SET1(x) _mm256_set1_ps(x)
#define RA_AK_LOADU(p) _mm256_loadu_ps(p)
#define RA_AK_STOREU(p, v) _mm256_storeu_ps(p, v)
#define RA_AK_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define RA_AK_LOADH(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define RA_AK_FOLD(v) (v)
#define RA_AK_SUFFIX avx2
#include "attention_kernels_impl.h"

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
