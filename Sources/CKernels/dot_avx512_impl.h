// AVX-512 dot products, compiled twice: dot_avx512.c (F/BW/VL) and dot_avx512vnni.c (+VNNI), which
// define RA_VNNI (0/1), RA_TARGET (the target attribute) and RA_TABLE (the table's name) first.
// Private to CKernels; not a public header.
#include "kernels_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <stddef.h>

RA_TARGET static inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

// Unsigned int8 × signed int8, four products per int32 lane, added to acc. The pair sums of
// maddubs cannot saturate for |u| <= 128, |s| <= 127, so both forms give the same integers.
RA_TARGET static inline __m512i dp_u8s8(__m512i acc, __m512i u, __m512i s) {
#if RA_VNNI
    return _mm512_dpbusd_epi32(acc, u, s);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
#endif
}

// acc + pairwise int16 products summed into int32 lanes (VNNI fuses the add).
RA_TARGET static inline __m512i dp_i16(__m512i acc, __m512i a, __m512i b) {
#if RA_VNNI
    return _mm512_dpwssd_epi32(acc, a, b);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
#endif
}

// Signed int8 w × signed int8 x (x never -128): |w| × (x with w's sign).
RA_TARGET static inline __m512i dp_s8s8(__m512i acc, __m512i w, __m512i x) {
    const __m512i sx = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
    return dp_u8s8(acc, _mm512_abs_epi8(w), sx);
}

RA_TARGET static inline __m512i cat256(__m256i lo, __m256i hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Scale vector of two blocks: lanes 0..7 = d_w0 * d_x0, lanes 8..15 = d_w1 * d_x1 (halves looked up
// in the table and broadcast straight from memory).
RA_TARGET static inline __m512 scale2(uint16_t w0, uint16_t x0, uint16_t w1, uint16_t x1) {
    const __m512 dw = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(ra_f16_table[w0]), _mm512_set1_ps(ra_f16_table[w1]));
    const __m512 dx = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(ra_f16_table[x0]), _mm512_set1_ps(ra_f16_table[x1]));
    return _mm512_mul_ps(dw, dx);
}

// Nibbles of two Q4_0-style blocks: [lo(p0), hi(p0), lo(p1), hi(p1)] as 64 bytes.
RA_TARGET static inline __m512i nibbles64(const uint8_t *p0, const uint8_t *p1) {
    const __m512i v = cat256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p0)),
                             _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p1)));
    return _mm512_and_si512(_mm512_srlv_epi64(v, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)), _mm512_set1_epi8(15));
}

RA_TARGET static float dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = w, *b = x;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        ra_prefetch_ahead(a + i, 256);
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

RA_TARGET static inline __m512 ld_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

RA_TARGET static float dot_f16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        ra_prefetch_ahead(a + i, 128);
        s0 = _mm512_fmadd_ps(ld_f16(a + i), ld_f16(b + i), s0);
        s1 = _mm512_fmadd_ps(ld_f16(a + i + 16), ld_f16(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(ld_f16(a + i + 32), ld_f16(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(ld_f16(a + i + 48), ld_f16(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(ld_f16(a + i), ld_f16(b + i), s0);
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512 va = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, a + i));
        const __m512 vb = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, b + i));
        s1 = _mm512_fmadd_ps(va, vb, s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

RA_TARGET static inline __m512 ld_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}

RA_TARGET static float dot_bf16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        ra_prefetch_ahead(a + i, 128);
        s0 = _mm512_fmadd_ps(ld_bf16(a + i), ld_bf16(b + i), s0);
        s1 = _mm512_fmadd_ps(ld_bf16(a + i + 16), ld_bf16(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(ld_bf16(a + i + 32), ld_bf16(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(ld_bf16(a + i + 48), ld_bf16(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(ld_bf16(a + i), ld_bf16(b + i), s0);
    float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    for (; i < n; i++) s += ra_bf2f(a[i]) * ra_bf2f(b[i]);
    return s;
}

RA_TARGET static float dot_q8_0(int64_t n, const void *w, const void *x) {
    const blk_q8_0 *a = w, *b = x;
    const int64_t nb = n / 32;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        ra_prefetch_ahead(a + i, 4 * sizeof(blk_q8_0));
        const __m512i w0 = cat256(_mm256_loadu_si256((const __m256i *)a[i].qs), _mm256_loadu_si256((const __m256i *)a[i + 1].qs));
        const __m512i x0 = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i w1 = cat256(_mm256_loadu_si256((const __m256i *)a[i + 2].qs), _mm256_loadu_si256((const __m256i *)a[i + 3].qs));
        const __m512i x1 = cat256(_mm256_loadu_si256((const __m256i *)b[i + 2].qs), _mm256_loadu_si256((const __m256i *)b[i + 3].qs));
        const __m512i p0 = dp_s8s8(_mm512_setzero_si512(), w0, x0);
        const __m512i p1 = dp_s8s8(_mm512_setzero_si512(), w1, x1);
        const __m512 d0 = scale2(a[i].d, b[i].d, a[i + 1].d, b[i + 1].d);
        const __m512 d1 = scale2(a[i + 2].d, b[i + 2].d, a[i + 3].d, b[i + 3].d);
        acc0 = _mm512_fmadd_ps(d0, _mm512_cvtepi32_ps(p0), acc0);
        acc1 = _mm512_fmadd_ps(d1, _mm512_cvtepi32_ps(p1), acc1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    for (; i < nb; i++) {
        const __m256i wv = _mm256_loadu_si256((const __m256i *)a[i].qs), xv = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m512i p = dp_s8s8(_mm512_setzero_si512(), _mm512_zextsi256_si512(wv), _mm512_zextsi256_si512(xv));
        s += (float)_mm512_mask_reduce_add_epi32(0x00FF, p) * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return s;
}

// Nibbles (0..15) × int8 minus 8 × sum(int8), four products per int32 lane: the Q4_0 offset.
RA_TARGET static inline __m512i dp_nib_off8(__m512i q, __m512i y) {
#if RA_VNNI
    return _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, y),
                            _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(8), y));
#else
    const __m512i p = _mm512_sub_epi16(_mm512_maddubs_epi16(q, y), _mm512_maddubs_epi16(_mm512_set1_epi8(8), y));
    return _mm512_madd_epi16(p, _mm512_set1_epi16(1));
#endif
}

RA_TARGET static float dot_q4_0(int64_t n, const void *w, const void *x) {
    const blk_q4_0 *a = w;
    const blk_q8_0 *b = x;
    const int64_t nb = n / 32;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        ra_prefetch_ahead(a + i, 4 * sizeof(blk_q4_0));
        const __m512i x0 = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i x1 = cat256(_mm256_loadu_si256((const __m256i *)b[i + 2].qs), _mm256_loadu_si256((const __m256i *)b[i + 3].qs));
        const __m512i p0 = dp_nib_off8(nibbles64(a[i].qs, a[i + 1].qs), x0);
        const __m512i p1 = dp_nib_off8(nibbles64(a[i + 2].qs, a[i + 3].qs), x1);
        acc0 = _mm512_fmadd_ps(scale2(a[i].d, b[i].d, a[i + 1].d, b[i + 1].d), _mm512_cvtepi32_ps(p0), acc0);
        acc1 = _mm512_fmadd_ps(scale2(a[i + 2].d, b[i + 2].d, a[i + 3].d, b[i + 3].d), _mm512_cvtepi32_ps(p1), acc1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    for (; i < nb; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++) sumi += ((a[i].qs[j] & 15) - 8) * b[i].qs[j] + ((a[i].qs[j] >> 4) - 8) * b[i].qs[j + 16];
        s += (float)sumi * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return s;
}

// Fifth bits of two Q5 blocks as 0x10 bytes, in the layout of nibbles64 (bit j of qh <-> element j).
RA_TARGET static inline __m512i fifth_bits64(const uint8_t *qh0, const uint8_t *qh1) {
    uint32_t h0, h1;
    memcpy(&h0, qh0, 4);
    memcpy(&h1, qh1, 4);
    return _mm512_maskz_mov_epi8((__mmask64)h0 | ((__mmask64)h1 << 32), _mm512_set1_epi8(0x10));
}

// Q4_1/Q5_0/Q5_1 take two blocks per step; an odd trailing block is done in scalar code.
RA_TARGET static float dot_q4_1(int64_t n, const void *w, const void *x) {
    const blk_q4_1 *a = w;
    const blk_q8_1 *b = x;
    const int64_t nb = n / 32;
    __m512 acc = _mm512_setzero_ps();
    float sm = 0;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        ra_prefetch_ahead(a + i, 2 * sizeof(blk_q4_1));
        const __m512i q = nibbles64(a[i].qs, a[i + 1].qs);
        const __m512i y = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i p = dp_u8s8(_mm512_setzero_si512(), q, y);
        acc = _mm512_fmadd_ps(scale2(a[i].d, b[i].d, a[i + 1].d, b[i + 1].d), _mm512_cvtepi32_ps(p), acc);
        sm += ra_f16_table[a[i].m] * ra_f16_table[b[i].s] + ra_f16_table[a[i + 1].m] * ra_f16_table[b[i + 1].s];
    }
    float s = _mm512_reduce_add_ps(acc) + sm;
    for (; i < nb; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++) sumi += (a[i].qs[j] & 15) * b[i].qs[j] + (a[i].qs[j] >> 4) * b[i].qs[j + 16];
        s += (float)sumi * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]) + ra_f16_table[a[i].m] * ra_f16_table[b[i].s];
    }
    return s;
}

RA_TARGET static float dot_q5_0(int64_t n, const void *w, const void *x) {
    const blk_q5_0 *a = w;
    const blk_q8_0 *b = x;
    const int64_t nb = n / 32;
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        ra_prefetch_ahead(a + i, 2 * sizeof(blk_q5_0));
        const __m512i q = _mm512_sub_epi8(_mm512_or_si512(nibbles64(a[i].qs, a[i + 1].qs), fifth_bits64(a[i].qh, a[i + 1].qh)),
                                          _mm512_set1_epi8(16));
        const __m512i y = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i p = dp_s8s8(_mm512_setzero_si512(), q, y);
        acc = _mm512_fmadd_ps(scale2(a[i].d, b[i].d, a[i + 1].d, b[i + 1].d), _mm512_cvtepi32_ps(p), acc);
    }
    float s = _mm512_reduce_add_ps(acc);
    for (; i < nb; i++) {
        uint32_t qh;
        memcpy(&qh, a[i].qh, 4);
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (((a[i].qs[j] & 15) | (int)(((qh >> j) & 1) << 4)) - 16) * b[i].qs[j];
            sumi += (((a[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4)) - 16) * b[i].qs[j + 16];
        }
        s += (float)sumi * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]);
    }
    return s;
}

RA_TARGET static float dot_q5_1(int64_t n, const void *w, const void *x) {
    const blk_q5_1 *a = w;
    const blk_q8_1 *b = x;
    const int64_t nb = n / 32;
    __m512 acc = _mm512_setzero_ps();
    float sm = 0;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        ra_prefetch_ahead(a + i, 2 * sizeof(blk_q5_1));
        const __m512i q = _mm512_or_si512(nibbles64(a[i].qs, a[i + 1].qs), fifth_bits64(a[i].qh, a[i + 1].qh));
        const __m512i y = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i p = dp_u8s8(_mm512_setzero_si512(), q, y);
        acc = _mm512_fmadd_ps(scale2(a[i].d, b[i].d, a[i + 1].d, b[i + 1].d), _mm512_cvtepi32_ps(p), acc);
        sm += ra_f16_table[a[i].m] * ra_f16_table[b[i].s] + ra_f16_table[a[i + 1].m] * ra_f16_table[b[i + 1].s];
    }
    float s = _mm512_reduce_add_ps(acc) + sm;
    for (; i < nb; i++) {
        uint32_t qh;
        memcpy(&qh, a[i].qh, 4);
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            sumi += ((a[i].qs[j] & 15) | (int)(((qh >> j) & 1) << 4)) * b[i].qs[j];
            sumi += ((a[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4)) * b[i].qs[j + 16];
        }
        s += (float)sumi * (ra_f16_table[a[i].d] * ra_f16_table[b[i].d]) + ra_f16_table[a[i].m] * ra_f16_table[b[i].s];
    }
    return s;
}

// int16 lane l of the result = scale[base + l / 16] (Q4_K/Q5_K: 32 elements per scale)
RA_TARGET static inline __m512i idx_k4(int base) {
    return _mm512_mask_blend_epi16(0xFFFF0000u, _mm512_set1_epi16((short)base), _mm512_set1_epi16((short)(base + 1)));
}

// Scales of a Q4_K super-block as int16 lanes for its four 64-element groups (sv[g]: scale 2g in lanes 0..15,
// 2g+1 in 16..31); returns its 8 mins as int16.
RA_TARGET static inline __m128i q4_k_scales(const uint8_t *scales, __m512i sv[4]) {
    uint32_t u[4];
    ra_unpack_scales_k4_words(scales, u);
    const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));
    const __m512i s16 = _mm512_zextsi256_si512(sm16);
    for (int g = 0; g < 4; g++) sv[g] = _mm512_permutexvar_epi16(idx_k4(2 * g), s16);
    return _mm256_extracti128_si256(sm16, 1);
}

RA_TARGET static float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i ix0 = idx_k4(0), ix1 = idx_k4(2), ix2 = idx_k4(4), ix3 = idx_k4(6);
    __m512 acc = _mm512_setzero_ps();
    __m128 accmv = _mm_setzero_ps();
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q4_k));
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));   // 8 scales, 8 mins
        const float dy = b[i].d;
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        accmv = _mm_fmadd_ps(_mm_set1_ps(dy * ra_f16_table[a[i].dmin]),
                             _mm_cvtepi32_ps(_mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), bs2)), accmv);
        const __m512i s16 = _mm512_zextsi256_si512(sm16);
        const __m512i sv[4] = { _mm512_permutexvar_epi16(ix0, s16), _mm512_permutexvar_epi16(ix1, s16),
                                _mm512_permutexvar_epi16(ix2, s16), _mm512_permutexvar_epi16(ix3, s16) };
        __m512i si = _mm512_setzero_si512();
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m512i v = _mm512_and_si512(cat256(q, _mm256_srli_epi16(q, 4)), m4);
            const __m512i y = _mm512_loadu_si512((const void *)(b[i].qs + 64 * g));
            si = dp_i16(si, _mm512_maddubs_epi16(v, y), sv[g]);
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * ra_f16_table[a[i].d]), _mm512_cvtepi32_ps(si), acc);
    }
    __m128 mv = _mm_add_ps(accmv, _mm_movehl_ps(accmv, accmv));
    mv = _mm_add_ss(mv, _mm_movehdup_ps(mv));
    return _mm512_reduce_add_ps(acc) - _mm_cvtss_f32(mv);
}

RA_TARGET static float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    const __m512i m4 = _mm512_set1_epi8(15), one = _mm512_set1_epi8(1);
    const __m512i ix0 = idx_k4(0), ix1 = idx_k4(2), ix2 = idx_k4(4), ix3 = idx_k4(6);
    float sacc = 0, smin = 0;   // as the AVX2 dot_q5_k: identical float order on every path
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q5_k));
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));   // 8 scales, 8 mins
        const float dy = b[i].d;
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        __m128i pm = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), bs2);
        pm = _mm_add_epi32(pm, _mm_unpackhi_epi64(pm, pm));
        pm = _mm_add_epi32(pm, _mm_shuffle_epi32(pm, 1));
        smin = __builtin_fmaf((float)_mm_cvtsi128_si32(pm), ra_f16_table[a[i].dmin] * dy, smin);
        const __m512i s16 = _mm512_zextsi256_si512(sm16);
        const __m512i sv[4] = { _mm512_permutexvar_epi16(ix0, s16), _mm512_permutexvar_epi16(ix1, s16),
                                _mm512_permutexvar_epi16(ix2, s16), _mm512_permutexvar_epi16(ix3, s16) };
        const __m256i qh = _mm256_loadu_si256((const __m256i *)a[i].qh);
        // [qh, qh >> 1]: bit 0 of each byte is the high bit of sub-block 2g (low half) / 2g+1 (high half)
        __m512i hq = cat256(qh, _mm256_srli_epi16(qh, 1));
        __m512i si = _mm512_setzero_si512();
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m512i hb = _mm512_slli_epi16(_mm512_and_si512(hq, one), 4);
            hq = _mm512_srli_epi16(hq, 2);
            const __m512i v = _mm512_or_si512(_mm512_and_si512(cat256(q, _mm256_srli_epi16(q, 4)), m4), hb);
            const __m512i y = _mm512_loadu_si512((const void *)(b[i].qs + 64 * g));
            si = dp_i16(si, _mm512_maddubs_epi16(v, y), sv[g]);
        }
        sacc = __builtin_fmaf((float)_mm512_reduce_add_epi32(si), ra_f16_table[a[i].d] * dy, sacc);
    }
    return sacc - smin;
}

// int16 lane l of the result = scale[base + l / 8] (Q6_K: 16 elements per scale)
RA_TARGET static inline __m512i idx_q6(int base) {
    uint16_t ix[32];
    for (int l = 0; l < 32; l++) ix[l] = (uint16_t)(base + l / 8);
    return _mm512_loadu_si512((const void *)ix);
}

RA_TARGET static float dot_q6_k(int64_t n, const void *w, const void *x) {
    const blk_q6_k *a = w;
    const blk_q8_k *b = x;
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    const __m512i ix[4] = { idx_q6(0), idx_q6(4), idx_q6(8), idx_q6(12) };
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q6_k));
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a[i].scales));
        const __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)b[i].bsums));
        const __m512i s16 = _mm512_zextsi256_si512(sc16);
        __m512i si = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5)));
        for (int h = 0; h < 2; h++) {
            const __m512i l = _mm512_loadu_si512((const void *)(a[i].ql + 64 * h));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(a[i].qh + 32 * h));
            const __m512i h2 = cat256(qh, _mm256_srli_epi16(qh, 2));
            const __m512i qlo = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(h2, 4), m30));
            const __m512i qhi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(h2, m30));
            const int8_t *y = b[i].qs + 128 * h;
            const __m512i plo = _mm512_maddubs_epi16(qlo, _mm512_loadu_si512((const void *)y));
            const __m512i phi = _mm512_maddubs_epi16(qhi, _mm512_loadu_si512((const void *)(y + 64)));
            si = dp_i16(si, plo, _mm512_permutexvar_epi16(ix[2 * h], s16));
            si = dp_i16(si, phi, _mm512_permutexvar_epi16(ix[2 * h + 1], s16));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(b[i].d * ra_f16_table[a[i].d]), _mm512_cvtepi32_ps(si), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

// ---------------------------------------------------------------------------------------------
// One weight row against up to 4 activation rows (prompt processing): each weight block is decoded
// once for all of them. The *_m bodies are instantiated for nx = 1..4 so their loops unroll.

#define RA_INLINE RA_TARGET static inline __attribute__((always_inline))
#define RA_MULTI_WRAPPERS(name)                                                                        \
    RA_TARGET static void name(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os) { \
        switch (nx) {                                                                                  \
        case 1: name##_m(n, w, x, xs, out, os, 1); break;                                              \
        case 2: name##_m(n, w, x, xs, out, os, 2); break;                                              \
        case 3: name##_m(n, w, x, xs, out, os, 3); break;                                              \
        default: name##_m(n, w, x, xs, out, os, 4); break;                                             \
        }                                                                                              \
    }

RA_INLINE void multi_q8_0_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    const blk_q8_0 *a = w;
    const blk_q8_0 *b[4];
    __m512 acc[4];
    for (int k = 0; k < nx; k++) { b[k] = (const blk_q8_0 *)((const uint8_t *)x + k * xs); acc[k] = _mm512_setzero_ps(); }
    const int64_t nb = n / 32;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m512i wv = cat256(_mm256_loadu_si256((const __m256i *)a[i].qs), _mm256_loadu_si256((const __m256i *)a[i + 1].qs));
        const __m512i aw = _mm512_abs_epi8(wv);
        const __mmask64 neg = _mm512_movepi8_mask(wv);
        const __m512 dw = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(ra_f16_table[a[i].d]), _mm512_set1_ps(ra_f16_table[a[i + 1].d]));
        for (int k = 0; k < nx; k++) {
            const __m512i y = cat256(_mm256_loadu_si256((const __m256i *)b[k][i].qs), _mm256_loadu_si256((const __m256i *)b[k][i + 1].qs));
            const __m512i p = dp_u8s8(_mm512_setzero_si512(), aw, _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y));
            const __m512 dx = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(ra_f16_table[b[k][i].d]), _mm512_set1_ps(ra_f16_table[b[k][i + 1].d]));
            acc[k] = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx), _mm512_cvtepi32_ps(p), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) {
        float s = _mm512_reduce_add_ps(acc[k]);
        for (int64_t j = i; j < nb; j++) {
            int sumi = 0;
            for (int l = 0; l < 32; l++) sumi += a[j].qs[l] * b[k][j].qs[l];
            s += (float)sumi * (ra_f16_table[a[j].d] * ra_f16_table[b[k][j].d]);
        }
        out[k * os] = s;
    }
}
RA_MULTI_WRAPPERS(multi_q8_0)

RA_INLINE void multi_q4_0_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    const blk_q4_0 *a = w;
    const blk_q8_0 *b[4];
    __m512 acc[4];
    for (int k = 0; k < nx; k++) { b[k] = (const blk_q8_0 *)((const uint8_t *)x + k * xs); acc[k] = _mm512_setzero_ps(); }
    const int64_t nb = n / 32;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m512i wv = _mm512_sub_epi8(nibbles64(a[i].qs, a[i + 1].qs), _mm512_set1_epi8(8));
        const __m512i aw = _mm512_abs_epi8(wv);
        const __mmask64 neg = _mm512_movepi8_mask(wv);
        const __m512 dw = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(ra_f16_table[a[i].d]), _mm512_set1_ps(ra_f16_table[a[i + 1].d]));
        for (int k = 0; k < nx; k++) {
            const __m512i y = cat256(_mm256_loadu_si256((const __m256i *)b[k][i].qs), _mm256_loadu_si256((const __m256i *)b[k][i + 1].qs));
            const __m512i p = dp_u8s8(_mm512_setzero_si512(), aw, _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y));
            const __m512 dx = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(ra_f16_table[b[k][i].d]), _mm512_set1_ps(ra_f16_table[b[k][i + 1].d]));
            acc[k] = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx), _mm512_cvtepi32_ps(p), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) {
        float s = _mm512_reduce_add_ps(acc[k]);
        for (int64_t j = i; j < nb; j++) {
            int sumi = 0;
            for (int l = 0; l < 16; l++) sumi += ((a[j].qs[l] & 15) - 8) * b[k][j].qs[l] + ((a[j].qs[l] >> 4) - 8) * b[k][j].qs[l + 16];
            s += (float)sumi * (ra_f16_table[a[j].d] * ra_f16_table[b[k][j].d]);
        }
        out[k * os] = s;
    }
}
RA_MULTI_WRAPPERS(multi_q4_0)

RA_INLINE void multi_q4_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    const blk_q4_k *a = w;
    const blk_q8_k *b[4];
    __m512 acc[4];
    __m128 accm[4];
    for (int k = 0; k < nx; k++) {
        b[k] = (const blk_q8_k *)((const uint8_t *)x + k * xs);
        acc[k] = _mm512_setzero_ps();
        accm[k] = _mm_setzero_ps();
    }
    const __m512i m4 = _mm512_set1_epi8(15);
    for (int64_t i = 0; i < n / QK_K; i++) {
        __m512i sv[4];
        const __m128i mins = q4_k_scales(a[i].scales, sv);
        const float dw = ra_f16_table[a[i].d], dmin = ra_f16_table[a[i].dmin];
        __m512i si[4];
        for (int k = 0; k < nx; k++) {
            const __m256i bs = _mm256_loadu_si256((const __m256i *)b[k][i].bsums);
            const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
            accm[k] = _mm_fmadd_ps(_mm_set1_ps(b[k][i].d * dmin), _mm_cvtepi32_ps(_mm_madd_epi16(mins, bs2)), accm[k]);
            si[k] = _mm512_setzero_si512();
        }
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m512i v = _mm512_and_si512(cat256(q, _mm256_srli_epi16(q, 4)), m4);
            for (int k = 0; k < nx; k++) {
                const __m512i y = _mm512_loadu_si512((const void *)(b[k][i].qs + 64 * g));
                si[k] = dp_i16(si[k], _mm512_maddubs_epi16(v, y), sv[g]);   // VNNI: one vpdpwssd
            }
        }
        for (int k = 0; k < nx; k++) acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(b[k][i].d * dw), _mm512_cvtepi32_ps(si[k]), acc[k]);
    }
    for (int k = 0; k < nx; k++) {
        __m128 mv = _mm_add_ps(accm[k], _mm_movehl_ps(accm[k], accm[k]));
        mv = _mm_add_ss(mv, _mm_movehdup_ps(mv));
        out[k * os] = _mm512_reduce_add_ps(acc[k]) - _mm_cvtss_f32(mv);
    }
}
RA_MULTI_WRAPPERS(multi_q4_k)


RA_INLINE void multi_q6_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    const blk_q6_k *a = w;
    const blk_q8_k *b[4];
    __m512 acc[4];
    for (int k = 0; k < nx; k++) { b[k] = (const blk_q8_k *)((const uint8_t *)x + k * xs); acc[k] = _mm512_setzero_ps(); }
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    const __m512i ix[4] = { idx_q6(0), idx_q6(4), idx_q6(8), idx_q6(12) };
    for (int64_t i = 0; i < n / QK_K; i++) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a[i].scales));
        const __m512i s16 = _mm512_zextsi256_si512(sc16);
        __m512i si[4];
        for (int k = 0; k < nx; k++) {
            const __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)b[k][i].bsums));
            si[k] = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5)));
        }
        for (int h = 0; h < 2; h++) {
            const __m512i l = _mm512_loadu_si512((const void *)(a[i].ql + 64 * h));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(a[i].qh + 32 * h));
            const __m512i h2 = cat256(qh, _mm256_srli_epi16(qh, 2));
            const __m512i qlo = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(h2, 4), m30));
            const __m512i qhi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(h2, m30));
            const __m512i slo = _mm512_permutexvar_epi16(ix[2 * h], s16), shi = _mm512_permutexvar_epi16(ix[2 * h + 1], s16);
            for (int k = 0; k < nx; k++) {
                const int8_t *y = b[k][i].qs + 128 * h;
                const __m512i plo = _mm512_maddubs_epi16(qlo, _mm512_loadu_si512((const void *)y));
                const __m512i phi = _mm512_maddubs_epi16(qhi, _mm512_loadu_si512((const void *)(y + 64)));
                si[k] = dp_i16(dp_i16(si[k], plo, slo), phi, shi);
            }
        }
        const float dw = ra_f16_table[a[i].d];
        for (int k = 0; k < nx; k++) acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(b[k][i].d * dw), _mm512_cvtepi32_ps(si[k]), acc[k]);
    }
    for (int k = 0; k < nx; k++) out[k * os] = _mm512_reduce_add_ps(acc[k]);
}
RA_MULTI_WRAPPERS(multi_q6_k)


#if RA_VNNI
// MARK: - Q4_K batches with VNNI: panels of 16 weight rows × 8 activation rows
//
// Each call repacks its weight rows, 16 at a time, into a panel in the thread's scratch: per super-block and
// group of 4 elements, one vector holds those 4 quants (0..15) of all 16 rows. A step then takes one such
// vector and, for each of 8 activation rows, one vpdpbusd against the row's 4 int8 activations broadcast: the
// 16 lanes are the 16 weight rows, so no horizontal sums are needed. Per sub-block of 32 elements the int32
// sums are converted and scaled by d·scale of each row in float; the mins meet the activation block sums in
// one vpdpwssd per pair of sub-blocks. A prompt multiplies every weight row with all its activation rows, so
// the repacking is paid once per call for nb rows (the batch kernel is only used for nb > 1). The Q6_K and
// Q8_0 batch kernels below use the same panels and steps.

// Weight rows per panel (the 16 lanes of a vector) and activation rows per step.
enum { PANEL_ROWS = 16, PANEL_GROUP = 8 };

// One super-block of a panel (64-byte aligned): q[e] byte 4r + t = quant of row r, element 4e + t; dsc[j][r] =
// d·scale of sub-block j of row r; dmin[r]; mins[p][r] = min of sub-block 2p (low half) and 2p+1 (high half).
typedef struct {
    uint8_t q[64][64];
    float dsc[8][16];
    float dmin[16];
    uint32_t mins[4][16];
} q4_k_panel;
_Static_assert(sizeof(q4_k_panel) % 64 == 0, "q4_k_panel keeps 64-byte alignment");

// Activation rows: ra_q4_k_xsum (kernels_internal.h).
_Static_assert(sizeof(q4_k_panel) <= RA_Q4_K_BATCH_PANEL_BYTES, "RA_Q4_K_BATCH_SCRATCH covers the panel kernel");

// Transposes a 16 × 16 matrix of 32-bit elements: t[j] lane i = r[i] lane j (4 × 4 blocks inside the 128-bit
// lanes by unpacks, then the lanes by shuffles).
RA_INLINE void transpose16x16_epi32(const __m512i r[16], __m512i t[16]) {
    __m512i a[16], b[16];
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {   // b[4i + m], 128-bit lane L: column 4L + m of rows 4i..4i+3
        b[4 * i] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
        b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
    }
    for (int m = 0; m < 4; m++) {
        const __m512i c0 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0x44), c1 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0x44);
        const __m512i d0 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0xEE), d1 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0xEE);
        t[m] = _mm512_shuffle_i32x4(c0, c1, 0x88);
        t[4 + m] = _mm512_shuffle_i32x4(c0, c1, 0xDD);
        t[8 + m] = _mm512_shuffle_i32x4(d0, d1, 0x88);
        t[12 + m] = _mm512_shuffle_i32x4(d0, d1, 0xDD);
    }
}

// The first 16 bytes of super-block i of 16 rows (rows past nrows zero), transposed: h[c] lane r = bytes
// 4c..4c+3 of row r's block.
RA_INLINE void block_heads16(const uint8_t *W, int64_t wrow, int64_t off, int nrows, __m512i h[4]) {
    uint32_t raw[16][4];
    for (int r = 0; r < PANEL_ROWS; r++) {
        if (r < nrows) memcpy(raw[r], W + r * wrow + off, 16);
        else memset(raw[r], 0, 16);
    }
    const __m512i z0 = _mm512_loadu_si512((const void *)raw[0]), z1 = _mm512_loadu_si512((const void *)raw[4]);
    const __m512i z2 = _mm512_loadu_si512((const void *)raw[8]), z3 = _mm512_loadu_si512((const void *)raw[12]);
    for (int c = 0; c < 4; c++) {
        // lanes 0..3: dword c of the 4 rows in the first vector, lanes 4..7: of the 4 rows in the second
        const __m512i idx = _mm512_set_epi32(28 + c, 24 + c, 20 + c, 16 + c, 12 + c, 8 + c, 4 + c, c,
                                             28 + c, 24 + c, 20 + c, 16 + c, 12 + c, 8 + c, 4 + c, c);
        const __m512i lo = _mm512_permutex2var_epi32(z0, idx, z1), hi = _mm512_permutex2var_epi32(z2, idx, z3);
        h[c] = _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);
    }
}

// Repacks rows [0, nrows) (nrows <= 16) of W into ns panel super-blocks; rows past nrows are zero.
RA_TARGET static void q4_k_pack_panel(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, q4_k_panel *p) {
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i k63 = _mm512_set1_epi32(63), k15 = _mm512_set1_epi32(15), k3 = _mm512_set1_epi32(3);
    for (int64_t i = 0; i < ns; i++) {
        q4_k_panel *pi = p + i;
        // d, dmin and the 12 bytes of 6-bit scales and mins of all 16 rows at once (as ra_unpack_scales_k4).
        __m512i h[4];
        block_heads16(W, wrow, i * (int64_t)sizeof(blk_q4_k), nrows, h);
        const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h[0]));
        _mm512_store_ps(pi->dmin, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h[0], 16))));
        const __m512i s0 = h[1], s1 = h[2], s2 = h[3];   // bytes 0..3, 4..7, 8..11 of the scales
        __m512i m[8];
        for (int j = 0; j < 4; j++) {
            const __m512i sc_lo = _mm512_and_si512(_mm512_srli_epi32(s0, 8 * j), k63);
            const __m512i sc_hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(s2, 8 * j), k15),
                                                  _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(s0, 8 * j + 6), k3), 4));
            m[j] = _mm512_and_si512(_mm512_srli_epi32(s1, 8 * j), k63);
            m[j + 4] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(s2, 8 * j + 4), k15),
                                       _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(s1, 8 * j + 6), k3), 4));
            _mm512_store_ps(pi->dsc[j], _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc_lo)));
            _mm512_store_ps(pi->dsc[j + 4], _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc_hi)));
        }
        for (int q = 0; q < 4; q++) _mm512_store_si512(pi->mins[q], _mm512_or_si512(m[2 * q], _mm512_slli_epi32(m[2 * q + 1], 16)));
        // Group g of a row (64 elements: low nibbles 64g..64g+31, high 64g+32..64g+63) is one vector of 16
        // element quartets; across the 16 rows that is a 16 × 16 matrix of quartets to transpose.
        for (int g = 0; g < 4; g++) {
            __m512i rows[16], cols[16];
            for (int r = 0; r < PANEL_ROWS; r++) {
                if (r >= nrows) { rows[r] = _mm512_setzero_si512(); continue; }
                const blk_q4_k *a = (const blk_q4_k *)(const void *)(W + r * wrow) + i;
                const __m256i q = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * g));
                rows[r] = _mm512_and_si512(cat256(q, _mm256_srli_epi16(q, 4)), m4);
            }
            transpose16x16_epi32(rows, cols);
            for (int e = 0; e < 16; e++) _mm512_store_si512(pi->q[16 * g + e], cols[e]);
        }
    }
}

// One panel × nx (1..8) activation rows xs bytes apart: out[k * os + r] for the rows in mask.
__attribute__((always_inline)) RA_TARGET static inline void q4_k_panel_m(int64_t ns, const q4_k_panel *p, const uint8_t *x, int64_t xs,
                                                                       const ra_q4_k_xsum *xsum, float *out, int64_t os, __mmask16 mask,
                                                                       const int nx) {
    __m512 acc[PANEL_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const q4_k_panel *pi = p + i;
        const int8_t *y[PANEL_GROUP];
        for (int k = 0; k < nx; k++) y[k] = ((const blk_q8_k *)(const void *)(x + k * xs))[i].qs;
        __m512 t[PANEL_GROUP];
        for (int k = 0; k < nx; k++) t[k] = _mm512_setzero_ps();
        for (int j = 0; j < 8; j++) {
            __m512i s[PANEL_GROUP];
            for (int k = 0; k < nx; k++) s[k] = _mm512_setzero_si512();
            for (int e = 0; e < 8; e++) {
                const __m512i wv = _mm512_load_si512((const void *)pi->q[8 * j + e]);
                for (int k = 0; k < nx; k++) {
                    int32_t y4;
                    memcpy(&y4, y[k] + 32 * j + 4 * e, 4);
                    s[k] = _mm512_dpbusd_epi32(s[k], wv, _mm512_set1_epi32(y4));
                }
            }
            const __m512 dsc = _mm512_load_ps(pi->dsc[j]);
            for (int k = 0; k < nx; k++) t[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[k]), dsc, t[k]);
        }
        const __m512 dmin = _mm512_load_ps(pi->dmin);
        for (int k = 0; k < nx; k++) {
            const ra_q4_k_xsum *xk = xsum + k * ns + i;
            __m512i mi = _mm512_setzero_si512();
            for (int q = 0; q < 4; q++) mi = _mm512_dpwssd_epi32(mi, _mm512_load_si512((const void *)pi->mins[q]), _mm512_set1_epi32((int)xk->bs[q]));
            t[k] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mi), dmin, t[k]);
            acc[k] = _mm512_fmadd_ps(t[k], _mm512_set1_ps(xk->d), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) _mm512_mask_storeu_ps(out + k * os, mask, acc[k]);
}

RA_TARGET static void q4_k_panel_run(int64_t ns, const q4_k_panel *p, const uint8_t *x, int64_t xs, const ra_q4_k_xsum *xsum,
                                     float *out, int64_t os, __mmask16 mask, int nx) {
    switch (nx) {
    case 8: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 8); break;
    case 7: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 7); break;
    case 6: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 6); break;
    case 5: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 5); break;
    case 4: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 4); break;
    case 3: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 3); break;
    case 2: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 2); break;
    default: q4_k_panel_m(ns, p, x, xs, xsum, out, os, mask, 1); break;
    }
}

int ra_matmul_q4_k_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q4_K_BATCH_SCRATCH(n, nb)) return 0;
    const int64_t wrow = ns * (int64_t)sizeof(blk_q4_k), xrow = ns * (int64_t)sizeof(blk_q8_k);
    const uint8_t *W = w, *X = x;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    q4_k_panel *panel = (q4_k_panel *)(void *)base;
    ra_q4_k_xsum *xsum = (ra_q4_k_xsum *)(void *)(base + ns * (int64_t)sizeof(q4_k_panel));
    ra_q4_k_xsums(X, xrow, ns, nb, xsum);
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL_ROWS ? r1 - p0 : PANEL_ROWS);
        q4_k_pack_panel(W + p0 * wrow, wrow, ns, nr, panel);
        const __mmask16 mask = (__mmask16)((1u << nr) - 1u);
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL_GROUP) {
            const int nx = (int)(nb - b0 < PANEL_GROUP ? nb - b0 : PANEL_GROUP);
            q4_k_panel_run(ns, panel, X + b0 * xrow, xrow, xsum + b0 * ns, out + b0 * out_stride + p0, out_stride, mask, nx);
        }
    }
    return 1;
}

// MARK: - Q6_K batches with VNNI: the same panels, with 16 sub-blocks of 16 elements and int8 scales
//
// The quants are kept unsigned (0..63, the offset 32 not taken off), so vpdpbusd applies as for Q4_K; the offset
// is 32 · Σ_j scale_j · (sum of the activations of sub-block j), from the Q8_K block sums by vpdpwssd.

// One super-block of a Q6_K panel: q as for Q4_K; dsc[j][r] = d·scale j of row r; d32[r] = 32·d; scp[p][r] = the
// scales of sub-blocks 2p (low half) and 2p+1 (high half) as int16.
typedef struct {
    uint8_t q[64][64];
    float dsc[16][16];
    float d32[16];
    uint32_t scp[8][16];
} q6_k_panel;
_Static_assert(sizeof(q6_k_panel) % 64 == 0, "q6_k_panel keeps 64-byte alignment");
_Static_assert(sizeof(q6_k_panel) <= RA_Q6_K_BATCH_PANEL_BYTES, "RA_Q6_K_BATCH_SCRATCH covers the panel");

RA_TARGET static void q6_k_pack_panel(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, q6_k_panel *p) {
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    for (int64_t i = 0; i < ns; i++) {
        q6_k_panel *pi = p + i;
        // d and the 16 int8 scales of all 16 rows at once.
        __m512i hd[4];
        block_heads16(W, wrow, i * (int64_t)sizeof(blk_q6_k) + (int64_t)offsetof(blk_q6_k, scales), nrows, hd);
        uint16_t dh[16];
        for (int r = 0; r < PANEL_ROWS; r++) dh[r] = r < nrows ? ((const blk_q6_k *)(const void *)(W + r * wrow))[i].d : 0;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh));
        _mm512_store_ps(pi->d32, _mm512_mul_ps(d, _mm512_set1_ps(32.0f)));
        __m512i sc[16];
        for (int j = 0; j < 16; j++) {   // scale j: byte j % 4 of dword j / 4, sign-extended
            sc[j] = _mm512_srai_epi32(_mm512_slli_epi32(hd[j / 4], 24 - 8 * (j % 4)), 24);
            _mm512_store_ps(pi->dsc[j], _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc[j])));
        }
        for (int q = 0; q < 8; q++)
            _mm512_store_si512(pi->scp[q], _mm512_or_si512(_mm512_and_si512(sc[2 * q], _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(sc[2 * q + 1], 16)));
        // Per half h (128 elements) two vectors of 64 elements in order: [ql low nibbles | 2 bits of qh] for
        // elements 128h..128h+63, [ql high nibbles | the next 2 bits] for 128h+64..128h+127.
        for (int h = 0; h < 2; h++) {
            __m512i lo[16], hi[16], cols[16];
            for (int r = 0; r < PANEL_ROWS; r++) {
                if (r >= nrows) { lo[r] = hi[r] = _mm512_setzero_si512(); continue; }
                const blk_q6_k *a = (const blk_q6_k *)(const void *)(W + r * wrow) + i;
                const __m512i l = _mm512_loadu_si512((const void *)(a->ql + 64 * h));
                const __m256i qh = _mm256_loadu_si256((const __m256i *)(a->qh + 32 * h));
                const __m512i h2 = cat256(qh, _mm256_srli_epi16(qh, 2));
                lo[r] = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(h2, 4), m30));
                hi[r] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(h2, m30));
            }
            transpose16x16_epi32(lo, cols);
            for (int e = 0; e < 16; e++) _mm512_store_si512(pi->q[32 * h + e], cols[e]);
            transpose16x16_epi32(hi, cols);
            for (int e = 0; e < 16; e++) _mm512_store_si512(pi->q[32 * h + 16 + e], cols[e]);
        }
    }
}

__attribute__((always_inline)) RA_TARGET static inline void q6_k_panel_m(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs,
                                                                       float *out, int64_t os, __mmask16 mask, const int nx) {
    __m512 acc[PANEL_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const q6_k_panel *pi = p + i;
        const blk_q8_k *y[PANEL_GROUP];
        for (int k = 0; k < nx; k++) y[k] = (const blk_q8_k *)(const void *)(x + k * xs) + i;
        __m512 t[PANEL_GROUP];
        for (int k = 0; k < nx; k++) t[k] = _mm512_setzero_ps();
        for (int j = 0; j < 16; j++) {
            __m512i s[PANEL_GROUP];
            for (int k = 0; k < nx; k++) s[k] = _mm512_setzero_si512();
            for (int e = 0; e < 4; e++) {
                const __m512i wv = _mm512_load_si512((const void *)pi->q[4 * j + e]);
                for (int k = 0; k < nx; k++) {
                    int32_t y4;
                    memcpy(&y4, y[k]->qs + 16 * j + 4 * e, 4);
                    s[k] = _mm512_dpbusd_epi32(s[k], wv, _mm512_set1_epi32(y4));
                }
            }
            const __m512 dsc = _mm512_load_ps(pi->dsc[j]);
            for (int k = 0; k < nx; k++) t[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[k]), dsc, t[k]);
        }
        const __m512 d32 = _mm512_load_ps(pi->d32);
        for (int k = 0; k < nx; k++) {
            __m512i so = _mm512_setzero_si512();
            for (int q = 0; q < 8; q++) {
                int32_t b2;
                memcpy(&b2, y[k]->bsums + 2 * q, 4);
                so = _mm512_dpwssd_epi32(so, _mm512_load_si512((const void *)pi->scp[q]), _mm512_set1_epi32(b2));
            }
            t[k] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(so), d32, t[k]);
            acc[k] = _mm512_fmadd_ps(t[k], _mm512_set1_ps(y[k]->d), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) _mm512_mask_storeu_ps(out + k * os, mask, acc[k]);
}

RA_TARGET static void q6_k_panel_run(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs, float *out, int64_t os,
                                     __mmask16 mask, int nx) {
    switch (nx) {
    case 8: q6_k_panel_m(ns, p, x, xs, out, os, mask, 8); break;
    case 7: q6_k_panel_m(ns, p, x, xs, out, os, mask, 7); break;
    case 6: q6_k_panel_m(ns, p, x, xs, out, os, mask, 6); break;
    case 5: q6_k_panel_m(ns, p, x, xs, out, os, mask, 5); break;
    case 4: q6_k_panel_m(ns, p, x, xs, out, os, mask, 4); break;
    case 3: q6_k_panel_m(ns, p, x, xs, out, os, mask, 3); break;
    case 2: q6_k_panel_m(ns, p, x, xs, out, os, mask, 2); break;
    default: q6_k_panel_m(ns, p, x, xs, out, os, mask, 1); break;
    }
}

int ra_matmul_q6_k_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q6_K_BATCH_SCRATCH(n)) return 0;
    const int64_t wrow = ns * (int64_t)sizeof(blk_q6_k), xrow = ns * (int64_t)sizeof(blk_q8_k);
    const uint8_t *W = w, *X = x;
    q6_k_panel *panel = (q6_k_panel *)(void *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL_ROWS ? r1 - p0 : PANEL_ROWS);
        q6_k_pack_panel(W + p0 * wrow, wrow, ns, nr, panel);
        const __mmask16 mask = (__mmask16)((1u << nr) - 1u);
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL_GROUP) {
            const int nx = (int)(nb - b0 < PANEL_GROUP ? nb - b0 : PANEL_GROUP);
            q6_k_panel_run(ns, panel, X + b0 * xrow, xrow, out + b0 * out_stride + p0, out_stride, mask, nx);
        }
    }
    return 1;
}

// MARK: - Q8_0 batches with VNNI: the same panels of 16 weight rows, one scale per block of 32
//
// Weights are stored as w + 128 (unsigned) so vpdpbusd takes the activations as they are; the extra 128·Σx of
// each activation block is the start value of its sum. Per block and activation row: 8 vpdpbusd, then the sum
// scaled by d_w (per row lane) · d_x in float.

typedef struct {
    uint8_t q[8][64];   // quartet e of the block for the 16 rows, + 128
    float dw[16];
} q8_0_panel;
_Static_assert(sizeof(q8_0_panel) <= RA_Q8_0_BATCH_PANEL_BYTES && sizeof(q8_0_panel) % 64 == 0, "q8_0_panel size");

// Per activation block: -128 · Σ qs and d.
typedef struct { int32_t bias; float d; } q8_0_xsum;

RA_TARGET static void q8_0_pack_panel(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, q8_0_panel *p) {
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int64_t j = 0; j < nblk; j += 2) {
        __m512i rows[16], cols[16];
        uint16_t dh[2][16];
        for (int r = 0; r < PANEL_ROWS; r++) {
            if (r >= nrows) {
                rows[r] = flip;
                dh[0][r] = dh[1][r] = 0;
                continue;
            }
            const blk_q8_0 *a = (const blk_q8_0 *)(const void *)(W + r * wrow) + j;
            rows[r] = _mm512_xor_si512(cat256(_mm256_loadu_si256((const __m256i *)a[0].qs), _mm256_loadu_si256((const __m256i *)a[1].qs)), flip);
            dh[0][r] = a[0].d;
            dh[1][r] = a[1].d;
        }
        transpose16x16_epi32(rows, cols);
        for (int e = 0; e < 8; e++) {
            _mm512_store_si512(p[j].q[e], cols[e]);
            _mm512_store_si512(p[j + 1].q[e], cols[8 + e]);
        }
        _mm512_store_ps(p[j].dw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh[0])));
        _mm512_store_ps(p[j + 1].dw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh[1])));
    }
}

RA_TARGET static void q8_0_xsums(const uint8_t *X, int64_t xrow, int64_t nblk, int64_t nb, q8_0_xsum *dst) {
    for (int64_t b = 0; b < nb; b++) {
        const blk_q8_0 *y = (const blk_q8_0 *)(const void *)(X + b * xrow);
        for (int64_t j = 0; j < nblk; j++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)y[j].qs);
            const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), v);   // pair sums, exact
            const __m256i s32 = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
            __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
            t = _mm_add_epi32(t, _mm_unpackhi_epi64(t, t));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 1));
            dst[b * nblk + j].bias = -128 * _mm_cvtsi128_si32(t);
            dst[b * nblk + j].d = ra_f16_table[y[j].d];
        }
    }
}

__attribute__((always_inline)) RA_TARGET static inline void q8_0_panel_m(int64_t nblk, const q8_0_panel *p, const uint8_t *x, int64_t xs,
                                                                       const q8_0_xsum *xsum, float *out, int64_t os, __mmask16 mask,
                                                                       const int nx) {
    __m512 acc[PANEL_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = _mm512_setzero_ps();
    for (int64_t j = 0; j < nblk; j++) {
        const q8_0_panel *pj = p + j;
        __m512i s[PANEL_GROUP];
        const int8_t *y[PANEL_GROUP];
        for (int k = 0; k < nx; k++) {
            s[k] = _mm512_set1_epi32(xsum[k * nblk + j].bias);
            y[k] = ((const blk_q8_0 *)(const void *)(x + k * xs))[j].qs;
        }
        for (int e = 0; e < 8; e++) {
            const __m512i wv = _mm512_load_si512((const void *)pj->q[e]);
            for (int k = 0; k < nx; k++) {
                int32_t y4;
                memcpy(&y4, y[k] + 4 * e, 4);
                s[k] = _mm512_dpbusd_epi32(s[k], wv, _mm512_set1_epi32(y4));
            }
        }
        const __m512 dw = _mm512_load_ps(pj->dw);
        for (int k = 0; k < nx; k++)
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[k]), _mm512_mul_ps(dw, _mm512_set1_ps(xsum[k * nblk + j].d)), acc[k]);
    }
    for (int k = 0; k < nx; k++) _mm512_mask_storeu_ps(out + k * os, mask, acc[k]);
}

RA_TARGET static void q8_0_panel_run(int64_t nblk, const q8_0_panel *p, const uint8_t *x, int64_t xs, const q8_0_xsum *xsum,
                                     float *out, int64_t os, __mmask16 mask, int nx) {
    switch (nx) {
    case 8: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 8); break;
    case 7: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 7); break;
    case 6: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 6); break;
    case 5: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 5); break;
    case 4: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 4); break;
    case 3: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 3); break;
    case 2: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 2); break;
    default: q8_0_panel_m(nblk, p, x, xs, xsum, out, os, mask, 1); break;
    }
}

int ra_matmul_q8_0_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    const int64_t nblk = n / 32;
    if (n % 64 != 0 || nb < 1 || scratch_bytes < RA_Q8_0_BATCH_SCRATCH(n, nb)) return 0;
    const int64_t wrow = nblk * (int64_t)sizeof(blk_q8_0), xrow = wrow;
    const uint8_t *W = w, *X = x;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    q8_0_panel *panel = (q8_0_panel *)(void *)base;
    q8_0_xsum *xsum = (q8_0_xsum *)(void *)(base + nblk * (int64_t)sizeof(q8_0_panel));
    q8_0_xsums(X, xrow, nblk, nb, xsum);
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL_ROWS ? r1 - p0 : PANEL_ROWS);
        q8_0_pack_panel(W + p0 * wrow, wrow, nblk, nr, panel);
        const __mmask16 mask = (__mmask16)((1u << nr) - 1u);
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL_GROUP) {
            const int nx = (int)(nb - b0 < PANEL_GROUP ? nb - b0 : PANEL_GROUP);
            q8_0_panel_run(nblk, panel, X + b0 * xrow, xrow, xsum + b0 * nblk, out + b0 * out_stride + p0, out_stride, mask, nx);
        }
    }
    return 1;
}
#endif

const ra_dot_table RA_TABLE = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_0] = dot_q4_0, [RA_DI_Q4_1] = dot_q4_1, [RA_DI_Q5_0] = dot_q5_0, [RA_DI_Q5_1] = dot_q5_1,
        [RA_DI_Q4_K] = dot_q4_k, [RA_DI_Q5_K] = dot_q5_k, [RA_DI_Q6_K] = dot_q6_k,
    },
    // Q5_K and F16 batches use the AVX2 multi kernels (as fast here; Q5_K's per-super-block reductions
    // cost more at 512 bits)
    .multi = { [RA_DI_Q8_0] = multi_q8_0, [RA_DI_Q4_0] = multi_q4_0, [RA_DI_Q4_K] = multi_q4_k, [RA_DI_Q6_K] = multi_q6_k },
};

#endif
