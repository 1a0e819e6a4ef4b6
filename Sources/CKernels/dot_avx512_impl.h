// AVX-512 dot products, compiled twice: dot_avx512.c (F/BW/VL) and dot_avx512vnni.c (+VNNI), which
// define RA_VNNI (0/1), RA_TARGET (the target attribute) and RA_TABLE (the table's name) first.
// Private to CKernels; not a public header.
#include "kernels_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

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

// Signed int8 w × signed int8 x (x never -128): |w| × (x with w's sign).
RA_TARGET static inline __m512i dp_s8s8(__m512i acc, __m512i w, __m512i x) {
    const __m512i sx = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
    return dp_u8s8(acc, _mm512_abs_epi8(w), sx);
}

RA_TARGET static inline __m512i cat256(__m256i lo, __m256i hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// 32 nibbles of 16 bytes: low nibbles are elements 0..15, high nibbles 16..31.
RA_TARGET static inline __m256i nibbles32(const uint8_t *p) {
    const __m128i t = _mm_loadu_si128((const __m128i *)p);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(15));
}

// Scale vector of two blocks: lanes 0..7 = d0, lanes 8..15 = d1.
RA_TARGET static inline __m512 scale2(float d0, float d1) {
    return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(d0), _mm512_set1_ps(d1));
}

RA_TARGET static float dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = w, *b = x;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
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
        const __m512i w0 = cat256(_mm256_loadu_si256((const __m256i *)a[i].qs), _mm256_loadu_si256((const __m256i *)a[i + 1].qs));
        const __m512i x0 = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i w1 = cat256(_mm256_loadu_si256((const __m256i *)a[i + 2].qs), _mm256_loadu_si256((const __m256i *)a[i + 3].qs));
        const __m512i x1 = cat256(_mm256_loadu_si256((const __m256i *)b[i + 2].qs), _mm256_loadu_si256((const __m256i *)b[i + 3].qs));
        const __m512i p0 = dp_s8s8(_mm512_setzero_si512(), w0, x0);
        const __m512i p1 = dp_s8s8(_mm512_setzero_si512(), w1, x1);
        const __m512 d0 = scale2(h2f(a[i].d) * h2f(b[i].d), h2f(a[i + 1].d) * h2f(b[i + 1].d));
        const __m512 d1 = scale2(h2f(a[i + 2].d) * h2f(b[i + 2].d), h2f(a[i + 3].d) * h2f(b[i + 3].d));
        acc0 = _mm512_fmadd_ps(d0, _mm512_cvtepi32_ps(p0), acc0);
        acc1 = _mm512_fmadd_ps(d1, _mm512_cvtepi32_ps(p1), acc1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    for (; i < nb; i++) {
        const __m256i wv = _mm256_loadu_si256((const __m256i *)a[i].qs), xv = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m512i p = dp_s8s8(_mm512_setzero_si512(), _mm512_zextsi256_si512(wv), _mm512_zextsi256_si512(xv));
        s += (float)_mm512_mask_reduce_add_epi32(0x00FF, p) * (h2f(a[i].d) * h2f(b[i].d));
    }
    return s;
}

RA_TARGET static float dot_q4_0(int64_t n, const void *w, const void *x) {
    const blk_q4_0 *a = w;
    const blk_q8_0 *b = x;
    const int64_t nb = n / 32;
    const __m512i eight = _mm512_set1_epi8(8);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        const __m512i w0 = _mm512_sub_epi8(cat256(nibbles32(a[i].qs), nibbles32(a[i + 1].qs)), eight);
        const __m512i w1 = _mm512_sub_epi8(cat256(nibbles32(a[i + 2].qs), nibbles32(a[i + 3].qs)), eight);
        const __m512i x0 = cat256(_mm256_loadu_si256((const __m256i *)b[i].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        const __m512i x1 = cat256(_mm256_loadu_si256((const __m256i *)b[i + 2].qs), _mm256_loadu_si256((const __m256i *)b[i + 3].qs));
        const __m512i p0 = dp_s8s8(_mm512_setzero_si512(), w0, x0);
        const __m512i p1 = dp_s8s8(_mm512_setzero_si512(), w1, x1);
        const __m512 d0 = scale2(h2f(a[i].d) * h2f(b[i].d), h2f(a[i + 1].d) * h2f(b[i + 1].d));
        const __m512 d1 = scale2(h2f(a[i + 2].d) * h2f(b[i + 2].d), h2f(a[i + 3].d) * h2f(b[i + 3].d));
        acc0 = _mm512_fmadd_ps(d0, _mm512_cvtepi32_ps(p0), acc0);
        acc1 = _mm512_fmadd_ps(d1, _mm512_cvtepi32_ps(p1), acc1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    for (; i < nb; i++) {
        const __m256i wv = _mm256_sub_epi8(nibbles32(a[i].qs), _mm256_set1_epi8(8));
        const __m256i xv = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m512i p = dp_s8s8(_mm512_setzero_si512(), _mm512_zextsi256_si512(wv), _mm512_zextsi256_si512(xv));
        s += (float)_mm512_mask_reduce_add_epi32(0x00FF, p) * (h2f(a[i].d) * h2f(b[i].d));
    }
    return s;
}

static inline int mins_dot(const uint8_t m[8], const int16_t *bsums) {
    int s = 0;
    for (int j = 0; j < 8; j++) s += m[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return s;
}

// int16 lane l of the result = scale[base + l / 16] (Q4_K/Q5_K: 32 elements per scale)
RA_TARGET static inline __m512i idx_k4(int base) {
    return _mm512_mask_blend_epi16(0xFFFF0000u, _mm512_set1_epi16((short)base), _mm512_set1_epi16((short)(base + 1)));
}

RA_TARGET static float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i ix0 = idx_k4(0), ix1 = idx_k4(2), ix2 = idx_k4(4), ix3 = idx_k4(6);
    __m512 acc = _mm512_setzero_ps();
    float accm = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        const float dy = b[i].d;
        accm += dy * h2f(a[i].dmin) * (float)mins_dot(m, b[i].bsums);
        uint64_t sc64;
        memcpy(&sc64, sc, 8);
        const __m512i s16 = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc64)));
        const __m512i sv[4] = { _mm512_permutexvar_epi16(ix0, s16), _mm512_permutexvar_epi16(ix1, s16),
                                _mm512_permutexvar_epi16(ix2, s16), _mm512_permutexvar_epi16(ix3, s16) };
        __m512i si = _mm512_setzero_si512();
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m512i v = _mm512_and_si512(cat256(q, _mm256_srli_epi16(q, 4)), m4);
            const __m512i y = _mm512_loadu_si512((const void *)(b[i].qs + 64 * g));
            si = _mm512_add_epi32(si, _mm512_madd_epi16(_mm512_maddubs_epi16(v, y), sv[g]));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * h2f(a[i].d)), _mm512_cvtepi32_ps(si), acc);
    }
    return _mm512_reduce_add_ps(acc) - accm;
}

RA_TARGET static float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    const __m512i m4 = _mm512_set1_epi8(15), one = _mm512_set1_epi8(1);
    const __m512i ix0 = idx_k4(0), ix1 = idx_k4(2), ix2 = idx_k4(4), ix3 = idx_k4(6);
    __m512 acc = _mm512_setzero_ps();
    float accm = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        const float dy = b[i].d;
        accm += dy * h2f(a[i].dmin) * (float)mins_dot(m, b[i].bsums);
        uint64_t sc64;
        memcpy(&sc64, sc, 8);
        const __m512i s16 = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc64)));
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
            si = _mm512_add_epi32(si, _mm512_madd_epi16(_mm512_maddubs_epi16(v, y), sv[g]));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * h2f(a[i].d)), _mm512_cvtepi32_ps(si), acc);
    }
    return _mm512_reduce_add_ps(acc) - accm;
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
            si = _mm512_add_epi32(si, _mm512_madd_epi16(plo, _mm512_permutexvar_epi16(ix[2 * h], s16)));
            si = _mm512_add_epi32(si, _mm512_madd_epi16(phi, _mm512_permutexvar_epi16(ix[2 * h + 1], s16)));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(b[i].d * h2f(a[i].d)), _mm512_cvtepi32_ps(si), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

const ra_dot_table RA_TABLE = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_0] = dot_q4_0,
        [RA_DI_Q4_K] = dot_q4_k, [RA_DI_Q5_K] = dot_q5_k, [RA_DI_Q6_K] = dot_q6_k,
    },
};

#endif
