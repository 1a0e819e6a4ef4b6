// AVX2 + FMA + F16C kernels for decode and short batches: the float dots, the 32-element block types' dots and
// multi-row kernels, the path's table, and activation quantisation. The decode rows kernels of those types are in
// rows_avx2_b32.c, the K-quant dots in dot_avx2_k.c, the batch panels in matmul_avx2_k.c and matmul_avx2_b32.c.
// Compiled with target attributes, so the target needs no -march flags; dispatch.c only calls these after checking
// the CPU has the features.
#include "avx2_internal.h"

#if defined(__x86_64__)

RA_AVX2 static float dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = w, *b = x;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        ra_prefetch_ahead(a + i, 128);
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


RA_AVX2 static float dot_f16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        ra_prefetch_ahead(a + i, 64);
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
        ra_prefetch_ahead(a + i, 64);
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

RA_AVX2 static float dot_q8_0(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q8_0); }
RA_AVX2 static float dot_q4_0(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q4_0); }
RA_AVX2 static float dot_q5_0(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q5_0); }
RA_AVX2 static float dot_q4_1(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q4_1); }
RA_AVX2 static float dot_q5_1(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q5_1); }

// Q8_0, Q4_0, Q5_0, Q4_1 and Q5_1 against up to 4 activation rows in dot_b32's order: per block the rows' int32 sums
// side by side in one vector (lanes: activation rows), added to the block's chain with one fma (two with a min).
RA_AVX2_INLINE void multi_b32_block(const uint8_t *a, const uint8_t *const xr[4], int64_t i, __m128 *acc, const int nx, const int t) {
    const int xb = b32_xbytes(t), xq = b32_xqs(t);
    const __m256i q = b32_quants(a, t);
    const __m256i aq = b32_min(t) ? q : _mm256_sign_epi8(q, q);
    __m256i p[4];
    float dx[4] = {0, 0, 0, 0}, sx[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) p[k] = _mm256_setzero_si256();
    for (int k = 0; k < nx; k++) {
        const uint8_t *b = xr[k] + i * xb;
        const __m256i y = _mm256_loadu_si256((const __m256i *)(b + xq));
        p[k] = _mm256_madd_epi16(_mm256_maddubs_epi16(aq, b32_min(t) ? y : _mm256_sign_epi8(y, q)), _mm256_set1_epi16(1));
        dx[k] = b32_half(b, 0);
        if (b32_min(t)) sx[k] = b32_half(b, 2);
    }
    const __m128 d = _mm_mul_ps(_mm_set1_ps(b32_half(a, 0)), _mm_setr_ps(dx[0], dx[1], dx[2], dx[3]));
    *acc = _mm_fmadd_ps(_mm_cvtepi32_ps(hsum4_epi32(p[0], p[1], p[2], p[3])), d, *acc);
    if (b32_min(t)) *acc = _mm_fmadd_ps(_mm_set1_ps(b32_half(a, 2)), _mm_setr_ps(sx[0], sx[1], sx[2], sx[3]), *acc);
}

RA_AVX2_INLINE void multi_b32(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx, const int t) {
    const uint8_t *W = w;
    const int wb = b32_wbytes(t);
    const uint8_t *xr[4];
    for (int k = 0; k < nx; k++) xr[k] = (const uint8_t *)x + k * xs;
    __m128 acc[4];   // chains of blocks 0, 1, 2, 3 mod 4; lanes: activation rows
    for (int c = 0; c < 4; c++) acc[c] = _mm_setzero_ps();
    const int64_t nblk = n / 32;
    int64_t i = 0;
    for (; i + 4 <= nblk; i += 4)
        for (int c = 0; c < 4; c++) multi_b32_block(W + (i + c) * wb, xr, i + c, &acc[c], nx, t);
    for (int c = 0; i < nblk; i++, c++) multi_b32_block(W + i * wb, xr, i, &acc[c], nx, t);
    float r[4];
    _mm_storeu_ps(r, _mm_add_ps(_mm_add_ps(acc[0], acc[1]), _mm_add_ps(acc[2], acc[3])));
    for (int k = 0; k < nx; k++) out[k * os] = r[k];
}
#define RA_MULTI_B32(name, t)                                                                                   \
    RA_AVX2_INLINE void name##_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) { \
        multi_b32(n, w, x, xs, out, os, nx, t);                                                                 \
    }                                                                                                           \
    RA_MULTI_WRAPPERS(name)
RA_MULTI_B32(multi_q8_0, B32_Q8_0)
RA_MULTI_B32(multi_q4_0, B32_Q4_0)
RA_MULTI_B32(multi_q5_0, B32_Q5_0)
RA_MULTI_B32(multi_q4_1, B32_Q4_1)
RA_MULTI_B32(multi_q5_1, B32_Q5_1)

// F16 against 1 or 2 activation rows at once, in exactly dot_f16's order (four accumulators over 32-element
// stripes, 8-element steps into the first, the same reduction and tail), so that a prompt batch gives bit for
// bit the logits of feeding its tokens one by one. (With one accumulator per row, as before, the sums differed
// from dot_f16's in the last bits; the next layer's F16 activation rounding turned that into logit differences
// of up to 1e-3 relative on the tiny test models.)
RA_AVX2_INLINE void multi_f16_pair(int64_t n, const uint16_t *a, const uint16_t *b0, const uint16_t *b1, float *o0, float *o1, const int two) {
    __m256 s[2][4];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 4; j++) s[k][j] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; j++) {
            const __m256 wv = ld_f16(a + i + 8 * j);
            s[0][j] = _mm256_fmadd_ps(wv, ld_f16(b0 + i + 8 * j), s[0][j]);
            if (two) s[1][j] = _mm256_fmadd_ps(wv, ld_f16(b1 + i + 8 * j), s[1][j]);
        }
    for (; i + 8 <= n; i += 8) {
        const __m256 wv = ld_f16(a + i);
        s[0][0] = _mm256_fmadd_ps(wv, ld_f16(b0 + i), s[0][0]);
        if (two) s[1][0] = _mm256_fmadd_ps(wv, ld_f16(b1 + i), s[1][0]);
    }
    for (int k = 0; k < 1 + two; k++) {
        const uint16_t *b = k ? b1 : b0;
        float t = hsum_ps(_mm256_add_ps(_mm256_add_ps(s[k][0], s[k][1]), _mm256_add_ps(s[k][2], s[k][3])));
        for (int64_t j = i; j < n; j++) t += h2f(a[j]) * h2f(b[j]);
        *(k ? o1 : o0) = t;
    }
}

RA_AVX2_INLINE void multi_f16_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    const uint16_t *a = w;
    for (int k = 0; k < nx; k += 2) {
        const uint16_t *b0 = (const uint16_t *)((const uint8_t *)x + k * xs);
        if (k + 1 < nx)
            multi_f16_pair(n, a, b0, (const uint16_t *)((const uint8_t *)x + (k + 1) * xs), out + k * os, out + (k + 1) * os, 1);
        else
            multi_f16_pair(n, a, b0, b0, out + k * os, out + k * os, 0);
    }
}
RA_MULTI_WRAPPERS(multi_f16)

const ra_dot_table ra_dots_avx2 = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q4_0] = dot_q4_0, [RA_DI_Q4_1] = dot_q4_1, [RA_DI_Q5_0] = dot_q5_0, [RA_DI_Q5_1] = dot_q5_1,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_K] = ra_avx2_dot_q4_k, [RA_DI_Q5_K] = ra_avx2_dot_q5_k, [RA_DI_Q6_K] = ra_avx2_dot_q6_k,
        [RA_DI_Q2_K] = ra_avx2_dot_q2_k, [RA_DI_Q3_K] = ra_avx2_dot_q3_k, [RA_DI_IQ4_NL] = ra_avx2_dot_iq4_nl, [RA_DI_IQ4_XS] = ra_avx2_dot_iq4_xs,
    },
    .multi = {
        [RA_DI_F16] = ra_avx2_multi_f16, [RA_DI_Q4_0] = ra_avx2_multi_q4_0, [RA_DI_Q4_1] = ra_avx2_multi_q4_1, [RA_DI_Q5_0] = ra_avx2_multi_q5_0,
        [RA_DI_Q5_1] = ra_avx2_multi_q5_1, [RA_DI_Q8_0] = ra_avx2_multi_q8_0,
        [RA_DI_Q4_K] = ra_avx2_multi_q4_k, [RA_DI_Q5_K] = ra_avx2_multi_q5_k, [RA_DI_Q6_K] = ra_avx2_multi_q6_k,
        [RA_DI_Q2_K] = ra_avx2_multi_q2_k, [RA_DI_Q3_K] = ra_avx2_multi_q3_k, [RA_DI_IQ4_NL] = ra_avx2_multi_iq4_nl,
        [RA_DI_IQ4_XS] = ra_avx2_multi_iq4_xs,
    },
    .rows = {
        [RA_DI_Q4_0] = ra_avx2_rows_q4_0, [RA_DI_Q4_1] = ra_avx2_rows_q4_1, [RA_DI_Q5_0] = ra_avx2_rows_q5_0, [RA_DI_Q5_1] = ra_avx2_rows_q5_1,
        [RA_DI_Q8_0] = ra_avx2_rows_q8_0, [RA_DI_Q4_K] = ra_avx2_rows_q4_k, [RA_DI_Q5_K] = ra_avx2_rows_q5_k, [RA_DI_Q6_K] = ra_avx2_rows_q6_k,
        [RA_DI_Q2_K] = ra_avx2_rows_q2_k, [RA_DI_Q3_K] = ra_avx2_rows_q3_k, [RA_DI_IQ4_NL] = ra_avx2_rows_iq4_nl, [RA_DI_IQ4_XS] = ra_avx2_rows_iq4_xs,
    },
};

// MARK: - Activation quantization (Q8_0, Q8_1)

// One block of 32 as quants.c's ra_quant_q8_block, the same bytes (bench/kernels/check.c, with NaN, infinities and
// subnormals): amax over |x| (NaN ignored: vmaxps keeps the accumulator), d = amax / 127, q = x · (127 / amax) rounded to nearest even by vcvtps2dq (exact for |q| <= 127, as the
// scalar magic-number rounding); returns the sum of the quants.
RA_AVX2_INLINE int q8_block(const float *x, int8_t *q, float *d_out) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4], m = _mm256_setzero_ps();
    for (int i = 0; i < 4; i++) {
        v[i] = _mm256_loadu_ps(x + 8 * i);
        m = _mm256_max_ps(_mm256_andnot_ps(sign, v[i]), m);
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.f / amax : 0.0f);
    __m256i iq[4];
    for (int i = 0; i < 4; i++) {
        // a NaN product (a NaN element, or an infinite one times the 0 an infinite amax gives) quantizes to 0 as
        // in the scalar code; vcvtps2dq would give INT_MIN, packed to -128
        const __m256 p = _mm256_mul_ps(v[i], id);
        iq[i] = _mm256_cvtps_epi32(_mm256_and_ps(p, _mm256_cmp_ps(p, p, _CMP_ORD_Q)));
    }
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(iq[0], iq[1]), _mm256_packs_epi32(iq[2], iq[3]));
    _mm256_storeu_si256((__m256i *)(void *)q, _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    *d_out = amax / 127.f;
    return hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(iq[0], iq[1]), _mm256_add_epi32(iq[2], iq[3])));
}

// A float to half through F16C, rounding to nearest even: the bits of quants.c's ra_fp32_to_fp16 (a NaN keeps its top
// payload bits and becomes quiet, overflow gives infinity, subnormal halves round at 2^-24), one instruction instead of
// a call into the scalar conversion (1.5–2.5% of a SmolLM2 prompt's cycles).
RA_AVX2_INLINE uint16_t half_of(float f) {
    return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 0);
}

// One Q8_K block (256 floats) as quants.c's quantize_q8_k, the same bytes for every input: the first element of
// largest magnitude (NaN never wins), q = ra_nearest_int(x · (-127 / max)) by the same bit trick (magic add, mask,
// subtract), kept below 128 and cut to its low byte as the scalar cast does, block sums of 16, d = 1 / iscale.
RA_AVX2_INLINE void q8_k_block(const float *x, blk_q8_k *y) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_setzero_ps();
    for (int j = 0; j < QK_K; j += 8) m = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    if (!(amax > 0.0f)) {
        y->d = 0.0f;
        memset(y->qs, 0, sizeof y->qs);
        memset(y->bsums, 0, sizeof y->bsums);
        return;
    }
    float max = 0.0f;
    const __m256 va = _mm256_set1_ps(amax);
    for (int j = 0; j < QK_K; j += 8) {
        const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), va, _CMP_EQ_OQ));
        if (hit) {
            max = x[j + __builtin_ctz((unsigned)hit)];
            break;
        }
    }
    const float iscale = -127.f / max;
    const __m256 vs = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.f);
    const __m256i mant = _mm256_set1_epi32(0x007fffff), off = _mm256_set1_epi32(0x00400000), top = _mm256_set1_epi32(127);
    const __m256i byte = _mm256_set1_epi32(0xFF), one8 = _mm256_set1_epi8(1), one16 = _mm256_set1_epi16(1);
    for (int j = 0; j < QK_K; j += 32) {
        __m256i v[4];
        for (int k = 0; k < 4; k++) {
            // The product rounded on its own before the magic add, as the scalar quantizer rounds it: gcc would
            // otherwise fuse the two into one fma (its default -ffp-contract=fast), which rounds once and gave 2
            // bytes of check.c's data another value; clang does not fuse across the intrinsics.
            __m256 p = _mm256_mul_ps(vs, _mm256_loadu_ps(x + j + 8 * k));
            __asm__("" : "+x"(p));
            const __m256 t = _mm256_add_ps(p, magic);
            // the low byte, 0..255, which the unsigned packs keep as it is
            v[k] = _mm256_and_si256(_mm256_min_epi32(_mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(t), mant), off), top), byte);
        }
        const __m256i b = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3])),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)(void *)(y->qs + j), b);
        // sums of 4, then of 16: lane 0 of each 128-bit half
        __m256i t = _mm256_madd_epi16(_mm256_maddubs_epi16(one8, b), one16);
        t = _mm256_hadd_epi32(t, t);
        t = _mm256_hadd_epi32(t, t);
        y->bsums[j / 16] = (int16_t)_mm256_extract_epi32(t, 0);
        y->bsums[j / 16 + 1] = (int16_t)_mm256_extract_epi32(t, 4);
    }
    y->d = 1.0f / iscale;
}

RA_AVX2 int ra_quantize_row_avx2(int type, const float *x, void *dst, int64_t n) {
    if (type == RA_Q8_K) {
        if (n % QK_K != 0) return 0;
        blk_q8_k *y = dst;
        for (int64_t i = 0; i < n / QK_K; i++) q8_k_block(x + QK_K * i, y + i);
        return 1;
    }
    if (n % 32 != 0) return 0;
    if (type == RA_Q8_0) {
        blk_q8_0 *y = dst;
        for (int64_t i = 0; i < n / 32; i++) {
            float d;
            q8_block(x + 32 * i, y[i].qs, &d);
            y[i].d = half_of(d);
        }
        return 1;
    }
    if (type == RA_Q8_1) {
        blk_q8_1 *y = dst;
        for (int64_t i = 0; i < n / 32; i++) {
            float d;
            const int sum = q8_block(x + 32 * i, y[i].qs, &d);
            y[i].d = half_of(d);
            y[i].s = half_of(d * (float)sum);
        }
        return 1;
    }
    return 0;
}

#endif
