// AVX2 + FMA + F16C dot products. Compiled with target attributes, so the target needs no -march
// flags; dispatch.c only calls these after checking the CPU has the features.
#include "kernels_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define RA_AVX2 __attribute__((target("avx2,fma,f16c")))

RA_AVX2 static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

RA_AVX2 static inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

// Signed int8 × signed int8 (x never -128), summed in groups of 4 into 8 int32 lanes.
RA_AVX2 static inline __m256i dot_s8(__m256i w, __m256i x) {
    const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// Unsigned int8 (< 128) × signed int8, summed in groups of 4 into 8 int32 lanes.
RA_AVX2 static inline __m256i dot_u8(__m256i w, __m256i x) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1));
}

// 32 nibbles of 16 bytes: low nibbles are elements 0..15, high nibbles 16..31.
RA_AVX2 static inline __m256i nibbles32(const uint8_t *p) {
    const __m128i t = _mm_loadu_si128((const __m128i *)p);
    const __m256i v = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
    return _mm256_and_si256(v, _mm256_set1_epi8(15));
}

// Bit j of the 32-bit word -> 0xFF in byte j.
RA_AVX2 static inline __m256i bits_to_bytes(const uint8_t *qh4) {
    uint32_t qh;
    memcpy(&qh, qh4, 4);
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), shuf);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

RA_AVX2 static float dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = w, *b = x;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

RA_AVX2 static inline __m256 ld_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

RA_AVX2 static float dot_f16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(ld_f16(a + i), ld_f16(b + i), s0);
        s1 = _mm256_fmadd_ps(ld_f16(a + i + 8), ld_f16(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(ld_f16(a + i + 16), ld_f16(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(ld_f16(a + i + 24), ld_f16(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(ld_f16(a + i), ld_f16(b + i), s0);
    float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) s += h2f(a[i]) * h2f(b[i]);
    return s;
}

RA_AVX2 static inline __m256 ld_bf16(const uint16_t *p) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

RA_AVX2 static float dot_bf16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(ld_bf16(a + i), ld_bf16(b + i), s0);
        s1 = _mm256_fmadd_ps(ld_bf16(a + i + 8), ld_bf16(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(ld_bf16(a + i + 16), ld_bf16(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(ld_bf16(a + i + 24), ld_bf16(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(ld_bf16(a + i), ld_bf16(b + i), s0);
    float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) s += ra_bf2f(a[i]) * ra_bf2f(b[i]);
    return s;
}

RA_AVX2 static float dot_q8_0(int64_t n, const void *w, const void *x) {
    const blk_q8_0 *a = w, *b = x;
    const int64_t nb = n / 32;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m256i p0 = dot_s8(_mm256_loadu_si256((const __m256i *)a[i].qs), _mm256_loadu_si256((const __m256i *)b[i].qs));
        const __m256i p1 = dot_s8(_mm256_loadu_si256((const __m256i *)a[i + 1].qs), _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p0), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i + 1].d) * h2f(b[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1);
    }
    for (; i < nb; i++) {
        const __m256i p0 = dot_s8(_mm256_loadu_si256((const __m256i *)a[i].qs), _mm256_loadu_si256((const __m256i *)b[i].qs));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p0), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

RA_AVX2 static float dot_q4_0(int64_t n, const void *w, const void *x) {
    const blk_q4_0 *a = w;
    const blk_q8_0 *b = x;
    const int64_t nb = n / 32;
    const __m256i eight = _mm256_set1_epi8(8);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m256i q0 = _mm256_sub_epi8(nibbles32(a[i].qs), eight);
        const __m256i q1 = _mm256_sub_epi8(nibbles32(a[i + 1].qs), eight);
        const __m256i p0 = dot_s8(q0, _mm256_loadu_si256((const __m256i *)b[i].qs));
        const __m256i p1 = dot_s8(q1, _mm256_loadu_si256((const __m256i *)b[i + 1].qs));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p0), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i + 1].d) * h2f(b[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1);
    }
    for (; i < nb; i++) {
        const __m256i q0 = _mm256_sub_epi8(nibbles32(a[i].qs), eight);
        const __m256i p0 = dot_s8(q0, _mm256_loadu_si256((const __m256i *)b[i].qs));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p0), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

RA_AVX2 static float dot_q4_1(int64_t n, const void *w, const void *x) {
    const blk_q4_1 *a = w;
    const blk_q8_1 *b = x;
    __m256 acc = _mm256_setzero_ps();
    float sm = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i p = dot_u8(nibbles32(a[i].qs), _mm256_loadu_si256((const __m256i *)b[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p), acc);
        sm += h2f(a[i].m) * h2f(b[i].s);
    }
    return hsum_ps(acc) + sm;
}

RA_AVX2 static float dot_q5_0(int64_t n, const void *w, const void *x) {
    const blk_q5_0 *a = w;
    const blk_q8_0 *b = x;
    __m256 acc = _mm256_setzero_ps();
    const __m256i b4 = _mm256_set1_epi8(0x10), sixteen = _mm256_set1_epi8(16);
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i hb = _mm256_and_si256(bits_to_bytes(a[i].qh), b4);
        const __m256i q = _mm256_sub_epi8(_mm256_or_si256(nibbles32(a[i].qs), hb), sixteen);
        const __m256i p = dot_s8(q, _mm256_loadu_si256((const __m256i *)b[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum_ps(acc);
}

RA_AVX2 static float dot_q5_1(int64_t n, const void *w, const void *x) {
    const blk_q5_1 *a = w;
    const blk_q8_1 *b = x;
    __m256 acc = _mm256_setzero_ps();
    float sm = 0;
    const __m256i b4 = _mm256_set1_epi8(0x10);
    for (int64_t i = 0; i < n / 32; i++) {
        const __m256i hb = _mm256_and_si256(bits_to_bytes(a[i].qh), b4);
        const __m256i q = _mm256_or_si256(nibbles32(a[i].qs), hb);
        const __m256i p = dot_u8(q, _mm256_loadu_si256((const __m256i *)b[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(a[i].d) * h2f(b[i].d)), _mm256_cvtepi32_ps(p), acc);
        sm += h2f(a[i].m) * h2f(b[i].s);
    }
    return hsum_ps(acc) + sm;
}

// Sum over sub-blocks of min[j] * (bsums of its 32 elements), for Q4_K/Q5_K.
static inline int mins_dot(const uint8_t m[8], const int16_t *bsums) {
    int s = 0;
    for (int j = 0; j < 8; j++) s += m[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return s;
}

RA_AVX2 static float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256 acc = _mm256_setzero_ps();
    float accm = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        const float dy = b[i].d;
        accm += dy * h2f(a[i].dmin) * (float)mins_dot(m, b[i].bsums);
        __m256i si = _mm256_setzero_si256();
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g + 32));
            const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_set1_epi16(sc[2 * g]));
            const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), _mm256_set1_epi16(sc[2 * g + 1]));
            si = _mm256_add_epi32(si, _mm256_add_epi32(p0, p1));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * h2f(a[i].d)), _mm256_cvtepi32_ps(si), acc);
    }
    return hsum_ps(acc) - accm;
}

RA_AVX2 static float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1), two = _mm256_set1_epi8(2);
    __m256 acc = _mm256_setzero_ps();
    float accm = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        const float dy = b[i].d;
        accm += dy * h2f(a[i].dmin) * (float)mins_dot(m, b[i].bsums);
        __m256i hq = _mm256_loadu_si256((const __m256i *)a[i].qh);
        __m256i si = _mm256_setzero_si256();
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m256i hlo = _mm256_slli_epi16(_mm256_and_si256(hq, one), 4);
            const __m256i hhi = _mm256_slli_epi16(_mm256_and_si256(hq, two), 3);
            hq = _mm256_srli_epi16(hq, 2);
            const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), hlo);
            const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), hhi);
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g + 32));
            const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_set1_epi16(sc[2 * g]));
            const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), _mm256_set1_epi16(sc[2 * g + 1]));
            si = _mm256_add_epi32(si, _mm256_add_epi32(p0, p1));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * h2f(a[i].d)), _mm256_cvtepi32_ps(si), acc);
    }
    return hsum_ps(acc) - accm;
}

RA_AVX2 static float dot_q6_k(int64_t n, const void *w, const void *x) {
    const blk_q6_k *a = w;
    const blk_q8_k *b = x;
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    // picks int16 lane 0 of each 128-bit half's dword into the low half, lane 1 into the high half
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                          2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / QK_K; i++) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a[i].scales));
        // the "- 32" of every quant: 32 * sum_k sc[k] * bsums[k]
        const __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)b[i].bsums));
        __m256i si = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5));
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = a[i].ql + 64 * h;
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(a[i].qh + 32 * h));
            __m256i q[4];
            q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            const int8_t *y = b[i].qs + 128 * h;
            for (int k = 0; k < 4; k++) {
                const int c = 4 * h + k;   // scales 2c (first 16 elements) and 2c+1 (next 16)
                const __m256i s = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(c)), pick);
                const __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(y + 32 * k)));
                si = _mm256_add_epi32(si, _mm256_madd_epi16(p, s));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(b[i].d * h2f(a[i].d)), _mm256_cvtepi32_ps(si), acc);
    }
    return hsum_ps(acc);
}

const ra_dot_table ra_dots_avx2 = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q4_0] = dot_q4_0, [RA_DI_Q4_1] = dot_q4_1, [RA_DI_Q5_0] = dot_q5_0, [RA_DI_Q5_1] = dot_q5_1,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_K] = dot_q4_k, [RA_DI_Q5_K] = dot_q5_k, [RA_DI_Q6_K] = dot_q6_k,
    },
};

#endif
