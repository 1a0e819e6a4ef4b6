// AVX2 decode rows kernels of the K-quant types (Q4_K, Q5_K and Q6_K against one Q8_K activation row): the .rows
// entries of the AVX2 table (dot_avx2.c), in the float order of the dots of dot_avx2_k.c.
#include "avx2_internal.h"

#if defined(__x86_64__)

// One activation row against a range of weight rows, in the order of dot_q4_k, dot_q5_k and dot_q6_k bit for bit:
// per weight row and super-block the same exact int32 sums, then the same float fmas super-block after super-block
// (the chains of K_ROWS weight rows side by side in the lanes of one vector). A pass takes K_ROWS weight rows: per
// super-block the activation's block sums (and their pair sums) and d are loaded once for all of them, the rows'
// int32 sums are reduced together (one hsum4_epi32 instead of one reduction each) and their scales d (and dmin) come
// from one F16C conversion; each row's 6-bit scales are unpacked with vector operations. The weights are prefetched
// RA_PREFETCH_DISTANCE ahead of every row of the pass (the rows are contiguous, so this covers the next passes), and
// each row's start also RA_PREFETCH_FAR ahead, as the 32-element rows kernel does, so that the page walk of the next
// pages overlaps the streaming (2 threads, qwen3-0.6b-shaped Q4_K_M, bench/kernels/stream.sh: 11.7-13.6 -> 13.5-15.1
// GB/s in interleaved rounds).
enum { K_ROWS = 4 };

// The first 4 bytes at offset o of the super-blocks at p + k · wrow, k = 0..3 (k past cnt: row cnt - 1 again), as
// the 8 halves they hold, converted to floats: h0 h1 of row 0, h0 h1 of row 1, ...
RA_AVX2_INLINE __m256 k_rows_halves(const uint8_t *p, int64_t wrow, int o, const int cnt) {
    uint32_t u[4];
    for (int k = 0; k < 4; k++) memcpy(&u[k], p + (k < cnt ? k : cnt - 1) * wrow + o, 4);
    return _mm256_cvtph_ps(_mm_setr_epi32((int)u[0], (int)u[1], (int)u[2], (int)u[3]));
}

// The 12 bytes of 6-bit scales and mins of a Q4_K/Q5_K super-block (s: 16 readable bytes) as 16 bytes, 8 scales then
// 8 mins: ra_unpack_scales_k4_words with the four words in the lanes of one vector.
RA_AVX2_INLINE __m128i k4_scales_mins(const uint8_t *s) {
    const __m128i v = _mm_loadu_si128((const __m128i *)s);                 // words a, b, c (and 4 bytes past them)
    const __m128i x = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));       // a, c, b, c
    const __m128i y = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));       // a, a, b, b
    const __m128i lo = _mm_and_si128(_mm_srlv_epi32(x, _mm_setr_epi32(0, 0, 0, 4)),
                                     _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m128i hi = _mm_and_si128(_mm_srlv_epi32(y, _mm_setr_epi32(0, 6, 0, 6)), _mm_setr_epi32(0, 0x03030303, 0, 0x03030303));
    return _mm_or_si128(lo, _mm_slli_epi32(hi, 4));
}

// Lanes [0, cnt) of v to out.
RA_AVX2_INLINE void k_rows_store(float *out, __m128 v, const int cnt) {
    if (cnt == 4) { _mm_storeu_ps(out, v); return; }
    float r[4];
    _mm_storeu_ps(r, v);
    for (int k = 0; k < cnt; k++) out[k] = r[k];
}

// Weight rows [0, cnt) (cnt <= K_ROWS) of Q4_K (five = 0) or Q5_K (five = 1) against the activation row b.
RA_AVX2_INLINE void rows_k4_pass(int64_t ns, const uint8_t *a0, int64_t wrow, const blk_q8_k *b, float *out, const int cnt, const int five) {
    const int64_t bb = five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k);
    const int so = five ? (int)offsetof(blk_q5_k, scales) : (int)offsetof(blk_q4_k, scales);
    const int qo = five ? (int)offsetof(blk_q5_k, qs) : (int)offsetof(blk_q4_k, qs);
    const __m256i m4 = _mm256_set1_epi8(15);
    // Q4_K: one chain acc = fma(I, d·d_x, acc), acc = fma(-M, dmin·d_x, acc); Q5_K: two, sacc with I and smin with M
    __m128 acc = _mm_setzero_ps(), accm = _mm_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *blk = a0 + i * bb;
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        __m256i si[4];
        __m128i pm[4];
        for (int k = 0; k < 4; k++) {
            si[k] = _mm256_setzero_si256();
            pm[k] = _mm_setzero_si128();
        }
        // unrolled, so that the rows' sums stay in registers (rolled, clang kept them on the stack: ~20% more cycles)
#pragma GCC unroll 4
        for (int k = 0; k < cnt; k++) {
            const uint8_t *a = blk + k * wrow;
            ra_prefetch_ahead(a, (size_t)bb);
            const __m256i sm16 = _mm256_cvtepu8_epi16(k4_scales_mins(a + so));   // 8 scales, 8 mins
            pm[k] = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), bs2);
            const __m256i sc2 = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm16));
            const __m256i hq = five ? _mm256_loadu_si256((const __m256i *)((const blk_q5_k *)(const void *)a)->qh) : _mm256_setzero_si256();
            for (int g = 0; g < 4; g++) {
                const __m256i q = _mm256_loadu_si256((const __m256i *)(a + qo + 32 * g));
                __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                if (five) {   // bit 2g of each qh byte to bit 4 of the low quants, bit 2g + 1 to bit 4 of the high ones
                    const __m256i b4 = _mm256_set1_epi8(0x10);
                    const __m256i hl = g < 2 ? _mm256_slli_epi16(hq, 4 - 2 * g) : g == 2 ? hq : _mm256_srli_epi16(hq, 2);
                    const __m256i hh = g < 2 ? _mm256_slli_epi16(hq, 3 - 2 * g) : _mm256_srli_epi16(hq, 2 * g - 3);
                    lo = _mm256_or_si256(lo, _mm256_and_si256(hl, b4));
                    hi = _mm256_or_si256(hi, _mm256_and_si256(hh, b4));
                }
                const __m256i slo = _mm256_shuffle_epi8(sc2, _mm256_set1_epi16((short)(0x0100 * (4 * g + 1) + 4 * g)));
                const __m256i shi = _mm256_shuffle_epi8(sc2, _mm256_set1_epi16((short)(0x0100 * (4 * g + 3) + 4 * g + 2)));
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g))), slo);
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g + 32))), shi);
                si[k] = _mm256_add_epi32(si[k], _mm256_add_epi32(p0, p1));
            }
        }
        const __m128 isum = _mm_cvtepi32_ps(hsum4_epi32(si[0], si[1], si[2], si[3]));
        const __m128 msum = _mm_cvtepi32_ps(_mm_hadd_epi32(_mm_hadd_epi32(pm[0], pm[1]), _mm_hadd_epi32(pm[2], pm[3])));
        const __m256 dm = k_rows_halves(blk, wrow, 0, cnt);   // d0 dmin0 d1 dmin1 ...
        const __m256 dy = _mm256_broadcast_ss(&b[i].d);
        const __m256 sd = _mm256_permutevar8x32_ps(_mm256_mul_ps(dm, dy), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
        if (five) {
            accm = _mm_fmadd_ps(msum, _mm256_extractf128_ps(sd, 1), accm);
            acc = _mm_fmadd_ps(isum, _mm256_castps256_ps128(sd), acc);
        } else {
            acc = _mm_fmadd_ps(isum, _mm256_castps256_ps128(sd), acc);
            acc = _mm_fnmadd_ps(msum, _mm256_extractf128_ps(sd, 1), acc);
        }
    }
    k_rows_store(out, five ? _mm_sub_ps(acc, accm) : acc, cnt);
}

// Weight rows [0, cnt) of Q6_K against the activation row b.
RA_AVX2_INLINE void rows_q6_k_pass(int64_t ns, const uint8_t *a0, int64_t wrow, const blk_q8_k *b, float *out, const int cnt) {
    const int64_t bb = (int64_t)sizeof(blk_q6_k);
    // within each 128-bit half: the int16 lane 2c in the low half, 2c + 1 in the high half (c = 0..3)
    __m256i pick[4];
    for (int c = 0; c < 4; c++)
        pick[c] = _mm256_setr_epi8(4 * c, 4 * c + 1, 4 * c, 4 * c + 1, 4 * c, 4 * c + 1, 4 * c, 4 * c + 1,
                                   4 * c, 4 * c + 1, 4 * c, 4 * c + 1, 4 * c, 4 * c + 1, 4 * c, 4 * c + 1,
                                   4 * c + 2, 4 * c + 3, 4 * c + 2, 4 * c + 3, 4 * c + 2, 4 * c + 3, 4 * c + 2, 4 * c + 3,
                                   4 * c + 2, 4 * c + 3, 4 * c + 2, 4 * c + 3, 4 * c + 2, 4 * c + 3, 4 * c + 2, 4 * c + 3);
    __m128 acc = _mm_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *blk = a0 + i * bb;
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        __m256i si[4];
        for (int k = 0; k < 4; k++) si[k] = _mm256_setzero_si256();
        for (int k = 0; k < cnt; k++) {
            const blk_q6_k *a = (const blk_q6_k *)(const void *)(blk + k * wrow);
            ra_prefetch_ahead(a, (size_t)bb);
            const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a->scales));
            // the "- 32" of every quant: 32 * sum_k sc[k] * bsums[k]
            si[k] = _mm256_sub_epi32(si[k], _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5));
            for (int h = 0; h < 2; h++) {
                __m256i q[4];
                q6_k_quants(a, h, q);
                // scales 8h..8h+7 in both halves
                const __m256i sch = h ? _mm256_permute4x64_epi64(sc16, 0xEE) : _mm256_permute4x64_epi64(sc16, 0x44);
                for (int c = 0; c < 4; c++) {
                    const __m256i p = _mm256_maddubs_epi16(q[c], _mm256_loadu_si256((const __m256i *)(b[i].qs + 128 * h + 32 * c)));
                    si[k] = _mm256_add_epi32(si[k], _mm256_madd_epi16(p, _mm256_shuffle_epi8(sch, pick[c])));
                }
            }
        }
        const __m128 isum = _mm_cvtepi32_ps(hsum4_epi32(si[0], si[1], si[2], si[3]));
        // d is the high half of the word at offset 206 (the last two scales, then d: no byte past the block)
        const __m256 h = k_rows_halves(blk, wrow, (int)offsetof(blk_q6_k, d) - 2, cnt);
        const __m128 d = _mm256_castps256_ps128(_mm256_permutevar8x32_ps(h, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)));
        acc = _mm_fmadd_ps(isum, _mm_mul_ps(d, _mm_broadcast_ss(&b[i].d)), acc);
    }
    k_rows_store(out, acc, cnt);
}

RA_AVX2_INLINE void rows_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out, const int t) {
    const uint8_t *W = w;
    const blk_q8_k *b = x;
    const int64_t ns = n / QK_K;
    int64_t r = 0;
    for (; r + K_ROWS <= rows; r += K_ROWS) {
        for (int k = 0; k < K_ROWS; k++) ra_prefetch_far(W + (r + k) * wrow);
        if (t == 6) rows_q6_k_pass(ns, W + r * wrow, wrow, b, out + r, K_ROWS);
        else rows_k4_pass(ns, W + r * wrow, wrow, b, out + r, K_ROWS, t == 5);
    }
    switch (rows - r) {
    case 1: if (t == 6) rows_q6_k_pass(ns, W + r * wrow, wrow, b, out + r, 1); else rows_k4_pass(ns, W + r * wrow, wrow, b, out + r, 1, t == 5); break;
    case 2: if (t == 6) rows_q6_k_pass(ns, W + r * wrow, wrow, b, out + r, 2); else rows_k4_pass(ns, W + r * wrow, wrow, b, out + r, 2, t == 5); break;
    case 3: if (t == 6) rows_q6_k_pass(ns, W + r * wrow, wrow, b, out + r, 3); else rows_k4_pass(ns, W + r * wrow, wrow, b, out + r, 3, t == 5); break;
    default: break;
    }
}
RA_AVX2 void ra_avx2_rows_q4_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    (void)side;
    rows_k(n, w, wrow, rows, x, out, 4);
}
RA_AVX2 void ra_avx2_rows_q5_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    (void)side;
    rows_k(n, w, wrow, rows, x, out, 5);
}
RA_AVX2 void ra_avx2_rows_q6_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    (void)side;
    rows_k(n, w, wrow, rows, x, out, 6);
}

#endif
