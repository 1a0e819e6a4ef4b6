// The AVX-512 kernels of attention (ops_attention.c) for the avx512 and avx512-vnni paths: q·k scores and weighted
// sums of V rows as in ops_attention_avx2.c, 16 floats a vector. Called only when the calling thread's kernel path is
// one of those two and head_dim % 16 == 0; the softmax steps stay the AVX2 ones.
//
// A score is one chain of head_dim / 16 fmas whose 16 lanes are folded to 8 (lane i + lane i + 8) and then summed in
// ra_hsum256's order, so on these paths too a score has the same bits however heads and positions are grouped (a
// prompt equals token-by-token decoding); the bits differ from the AVX2 path's, whose chains hold 8 lanes.
#include "attention_x86.h"

#if defined(__x86_64__)

#define RA_AK_TARGET __attribute__((target("avx512f,avx512vl,avx2,fma,f16c")))
#define RA_AK_VEC __m512
#define RA_AK_W 16
#define RA_AK_ZERO() _mm512_setzero_ps()
#define RA_AK_SET1(x) _mm512_set1_ps(x)
#define RA_AK_LOADU(p) _mm512_loadu_ps(p)
#define RA_AK_STOREU(p, v) _mm512_storeu_ps(p, v)
#define RA_AK_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define RA_AK_LOADH(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define RA_AK_FOLD(v) ra_fold512(v)
#define RA_AK_SUFFIX avx512

// 16 lanes to 8: lane i + lane i + 8.
RA_AK_TARGET static inline __attribute__((always_inline)) __m256 ra_fold512(__m512 v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

#include "attention_kernels_impl.h"

#endif
