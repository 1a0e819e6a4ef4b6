// Shared by the x86 attention kernels (ops_attention_avx2.c, ops_attention_avx512.c): the K/V row prefetch, the
// horizontal sums of the scores in one order, their stores, and the positions a values pass takes at a time.
#ifndef RA_ATTENTION_X86_H
#define RA_ATTENTION_X86_H

#include "kernels_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

// K and V rows (hd halves, kv_stride apart) are read in order. The hardware prefetcher stops at every 4 KiB page (and
// in the position-major layout each row of a head is in a page of its own), so the kernels prefetch the whole row
// ra_attn_prefetch_rows(hd) positions ahead: at least RA_ATTN_PREFETCH_ROWS, and at least 4 KiB of rows in the
// engine's head-major cache (16 rows for head_dim 128 and 256, 32 for 64).
#define RA_ATTN_PREFETCH_ROWS 16

static inline int64_t ra_attn_prefetch_rows(int64_t hd) {
    const int64_t rows = hd > 0 ? 4096 / (hd * 2) : RA_ATTN_PREFETCH_ROWS;
    return rows > RA_ATTN_PREFETCH_ROWS ? rows : RA_ATTN_PREFETCH_ROWS;
}

static inline __attribute__((always_inline)) void ra_attn_prefetch_row(const uint16_t *row, int64_t hd) {
    for (int64_t i = 0; i < hd; i += 32) _mm_prefetch((const char *)(row + i), _MM_HINT_T0);
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

// scores[h * ss + j + r] = scale × the horizontal sum of acc[r][h] for G heads and R positions, each sum in
// ra_hsum256's order: 8 at once for 4 heads × 2 positions, 2 × 4 or 3 × 2 (the kernels' main runs), else one by one.
__attribute__((target("avx2")))
static inline __attribute__((always_inline)) void ra_attn_store_scores(__m256 acc[4][4], float scale, float *scores,
                                                                      int64_t ss, int64_t j, const int G, const int R) {
    if ((G * R == 8 || G * R == 6) && R > 1) {
        // The 8 (or 6) sums at once, lane h * R + r = (row r, head h), each in ra_hsum256's order.
        __m256 v[8];
        for (int h = 0; h < G; h++)
            for (int r = 0; r < R; r++) v[h * R + r] = acc[r][h];
        for (int l = G * R; l < 8; l++) v[l] = _mm256_setzero_ps();
        const __m256 sums = _mm256_mul_ps(ra_hsum256x8(v), _mm256_set1_ps(scale));
        if (R == 2) {
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

/// Positions a values pass takes at a time: their V rows (8 KiB at head_dim 128) stay in L1 while every slice of
/// dimensions passes over them. One pass per slice over all positions re-read each V row from L2 or beyond once per
/// slice: at 4096 cached positions the values were half of a prompt's attention.
#define RA_ATTN_VALUES_BLOCK 32

#endif
#endif
