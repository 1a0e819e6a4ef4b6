// AVX2 K-quant dots and decode rows kernels (decode) and multi-row kernels (short batches): Q4_K, Q5_K, Q6_K, Q3_K and Q2_K against
// Q8_K activations. Their float orders are the ones the batch panels (matmul_avx2_k.c) keep.
#include "avx2_internal.h"

#if defined(__x86_64__)

// *p in every dword lane, by a load: compilers otherwise forward a value just stored through a register and broadcast
// it there, on the shuffle port.
RA_AVX2_INLINE __m256i bcast_load32(const int32_t *p) {
    __m256i r;
    __asm__("vpbroadcastd %1, %0" : "=x"(r) : "m"(*p));
    return r;
}

// The sum of scale · quant · activation (I) of one Q4_K (five = 0) or Q5_K (five = 1) super-block against b, as 8
// int32 lanes: qs its quant nibbles, qh (Q5_K) its fifth bits, s03 and s47 its scales 0..3 and 4..7 in memory, each
// as a dword holding it in both int16 halves. A scale reaches its vector by a broadcast load, which uses a load port
// only, where a vpshufb of a register (one per 32 quants) took the shuffle port the unpacking and reductions need.
RA_AVX2_INLINE __m256i k4_sums(const uint8_t *qs, const uint8_t *qh, const blk_q8_k *b, const int32_t *s03, const int32_t *s47, const int five) {
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1), two = _mm256_set1_epi8(2);
    __m256i hq = five ? _mm256_loadu_si256((const __m256i *)qh) : _mm256_setzero_si256();
    __m256i si = _mm256_setzero_si256();
    for (int g = 0; g < 4; g++) {
        const int32_t *sp = g < 2 ? s03 + 2 * g : s47 + 2 * (g - 2);
        const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * g));
        __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        if (five) {
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hq, one), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(hq, two), 3));
            hq = _mm256_srli_epi16(hq, 2);
        }
        const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * g));
        const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * g + 32));
        const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), bcast_load32(sp));
        const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), bcast_load32(sp + 1));
        si = _mm256_add_epi32(si, _mm256_add_epi32(p0, p1));
    }
    return si;
}

// The 8 scales of sm16 (ra_k4_scales_mins widened to int16: scales in the low half) as k4_sums takes them, at sd[0..7].
RA_AVX2_INLINE void k4_scale_words(__m256i sm16, int32_t *sd) {
    const __m128i sc = _mm256_castsi256_si128(sm16);
    _mm_storeu_si128((__m128i *)sd, _mm_unpacklo_epi16(sc, sc));
    _mm_storeu_si128((__m128i *)(sd + 4), _mm_unpackhi_epi16(sc, sc));
}

// The exact int32 sums of two consecutive Q4_K (five = 0) or Q5_K super-blocks at w against b[0] and b[1], as floats:
// [I_0, I_1, M_0, M_1] (I: scale · quant · activation, M: min · activation block sum). Two at a time share the work
// around the sums: the scale unpack in one 256-bit pass, the min sums in one vpmaddwd (one vphaddw of the two rows of
// bsums lays their pair sums out as [m0..m3 of 0, of 1 | m4..m7 of 0, of 1]), and I and M of both in one reduction:
// ~10% fewer instructions a super-block than one at a time.
_Static_assert(offsetof(blk_q4_k, scales) == offsetof(blk_q5_k, scales), "k4_pair_sums reads the scales at one offset");
RA_AVX2_INLINE __m128 k4_pair_sums(const uint8_t *w, const blk_q8_k *b, const int five) {
    const int64_t bsz = five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k);
    const int64_t qso = five ? (int64_t)offsetof(blk_q5_k, qs) : (int64_t)offsetof(blk_q4_k, qs);
    const int64_t sco = offsetof(blk_q4_k, scales), qho = offsetof(blk_q5_k, qh);   // scales: the same offset in both
    // 8 scales and 8 mins of super-block 0 in the low 128 bits, of 1 in the high ones (bytes)
    const __m256i sm8 = ra_k4_scales_mins2(w + sco, w + bsz + sco);
    const __m256i sc = _mm256_unpacklo_epi8(sm8, _mm256_setzero_si256());   // [scales of 0 | of 1] as int16
    _Alignas(32) int32_t sd[16];   // [0: s0..s3 | 1: s0..s3], [0: s4..s7 | 1: s4..s7], each in both halves of a dword
    _mm256_store_si256((__m256i *)sd, _mm256_unpacklo_epi16(sc, sc));
    _mm256_store_si256((__m256i *)(sd + 8), _mm256_unpackhi_epi16(sc, sc));
    const __m256i mins = _mm256_permute4x64_epi64(_mm256_unpackhi_epi8(sm8, _mm256_setzero_si256()), 0xD8);
    const __m256i pm = _mm256_madd_epi16(mins, _mm256_hadd_epi16(_mm256_loadu_si256((const __m256i *)b[0].bsums),
                                                                 _mm256_loadu_si256((const __m256i *)b[1].bsums)));
    const __m256i siA = k4_sums(w + qso, w + qho, b, sd, sd + 8, five);
    const __m256i siB = k4_sums(w + bsz + qso, w + bsz + qho, b + 1, sd + 4, sd + 12, five);
    const __m256i t1 = _mm256_hadd_epi32(siA, siB);
    const __m128i t2 = _mm_add_epi32(_mm256_castsi256_si128(t1), _mm256_extracti128_si256(t1, 1));
    const __m128i m2 = _mm_add_epi32(_mm256_castsi256_si128(pm), _mm256_extracti128_si256(pm, 1));
    return _mm_cvtepi32_ps(_mm_hadd_epi32(t2, m2));
}

// Per super-block integer sums, scaled and accumulated in two scalars (scales, mins) with fma: the float order of
// ggml's repacked Q5_K kernels, identical on every path here; two super-blocks a pass (k4_pair_sums).
RA_AVX2_INLINE float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    float sacc = 0, smin = 0;
    const int64_t nsb = n / QK_K;
    int64_t i = 0;
    for (; i + 1 < nsb; i += 2) {
        ra_prefetch_ahead(a + i, 2 * sizeof(blk_q5_k));
        const __m128 f = k4_pair_sums((const uint8_t *)(a + i), b + i, 1);
        const float dyA = b[i].d, dyB = b[i + 1].d;
        smin = __builtin_fmaf(_mm_cvtss_f32(_mm_movehl_ps(f, f)), ra_f16_table[a[i].dmin] * dyA, smin);
        smin = __builtin_fmaf(_mm_cvtss_f32(_mm_permute_ps(f, 3)), ra_f16_table[a[i + 1].dmin] * dyB, smin);
        sacc = __builtin_fmaf(_mm_cvtss_f32(f), ra_f16_table[a[i].d] * dyA, sacc);
        sacc = __builtin_fmaf(_mm_cvtss_f32(_mm_movehdup_ps(f)), ra_f16_table[a[i + 1].d] * dyB, sacc);
    }
    if (i < nsb) {   // an odd last super-block
        ra_prefetch_ahead(a + i, sizeof(blk_q5_k));
        const __m256i sm16 = _mm256_cvtepu8_epi16(ra_k4_scales_mins(a[i].scales));   // 8 scales, 8 mins
        const float dy = b[i].d;
        // mins: sum_j m[j] * (bsums[2j] + bsums[2j+1])
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        __m128i pm = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), bs2);
        pm = _mm_add_epi32(pm, _mm_unpackhi_epi64(pm, pm));
        pm = _mm_add_epi32(pm, _mm_shuffle_epi32(pm, 1));
        smin = __builtin_fmaf((float)_mm_cvtsi128_si32(pm), ra_f16_table[a[i].dmin] * dy, smin);
        int32_t sd[8];
        k4_scale_words(sm16, sd);
        const __m256i si = k4_sums(a[i].qs, a[i].qh, b + i, sd, sd + 4, 1);
        sacc = __builtin_fmaf((float)hsum_epi32(si), ra_f16_table[a[i].d] * dy, sacc);
    }
    return sacc - smin;
}
RA_AVX2 float ra_avx2_dot_q5_k(int64_t n, const void *w, const void *x) { return dot_q5_k(n, w, x); }

// Q4_K against up to 4 activation rows (dot_q4_k is this with one row): per super-block each row's exact int32
// sums of scale · quant · activation (I) and of min · activation block sum (M), then in float
// acc = fma(I, d · d_x, acc) and acc = fnmadd(M, dmin · d_x, acc), super-block after super-block: the order of the
// 8-row panel kernel (ra_matmul_q4_k_avx2), whose lanes are weight rows. The 4 rows' sums sit side by side in one
// vector, so the float work is two fmas per super-block for all of them.
RA_AVX2_INLINE void q4_k_rows(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx, const int pf) {
    const blk_q4_k *a = w;
    const blk_q8_k *b[4];
    for (int k = 0; k < nx; k++) b[k] = (const blk_q8_k *)((const uint8_t *)x + k * xs);
    __m128 acc = _mm_setzero_ps();
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int64_t i = 0; i < n / QK_K; i++) {
        if (pf) ra_prefetch_ahead(a + i, sizeof(blk_q4_k));
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));
        const __m128i mins = _mm256_extracti128_si256(sm16, 1);
        const __m256i sc2 = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm16));
        __m256i si[4];
        __m128i pm[4];
        float dx[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++) {
            si[k] = _mm256_setzero_si256();
            pm[k] = _mm_setzero_si128();
        }
        for (int k = 0; k < nx; k++) {
            const __m256i bs = _mm256_loadu_si256((const __m256i *)b[k][i].bsums);
            pm[k] = _mm_madd_epi16(mins, _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
            dx[k] = b[k][i].d;
        }
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i slo = _mm256_shuffle_epi8(sc2, _mm256_set1_epi16((short)(0x0100 * (4 * g + 1) + 4 * g)));
            const __m256i shi = _mm256_shuffle_epi8(sc2, _mm256_set1_epi16((short)(0x0100 * (4 * g + 3) + 4 * g + 2)));
            for (int k = 0; k < nx; k++) {
                const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b[k][i].qs + 64 * g));
                const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b[k][i].qs + 64 * g + 32));
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), slo);
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), shi);
                si[k] = _mm256_add_epi32(si[k], _mm256_add_epi32(p0, p1));
            }
        }
        const __m128 d = _mm_loadu_ps(dx);
        const __m128i isum = hsum4_epi32(si[0], si[1], si[2], si[3]);
        const __m128i msum = _mm_hadd_epi32(_mm_hadd_epi32(pm[0], pm[1]), _mm_hadd_epi32(pm[2], pm[3]));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(_mm_broadcast_ss(&ra_f16_table[a[i].d]), d), acc);
        acc = _mm_fnmadd_ps(_mm_cvtepi32_ps(msum), _mm_mul_ps(_mm_broadcast_ss(&ra_f16_table[a[i].dmin]), d), acc);
    }
    float r[4];
    _mm_storeu_ps(r, acc);
    for (int k = 0; k < nx; k++) out[k * os] = r[k];
}
RA_AVX2_INLINE void multi_q4_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    q4_k_rows(n, w, x, xs, out, os, nx, 0);
}
RA_MULTI_WRAPPERS(multi_q4_k)

// One activation row (decode), in q4_k_rows' order: per super-block the exact int32 I and M, then the two fmas in
// scalar, super-block after super-block; two super-blocks a pass (k4_pair_sums; the 4-bit dot computes barely faster
// than a thread's share of the memory, so its instructions count: engine-notes.md, "Stop 25").
RA_AVX2_INLINE float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    float acc = 0;
    const int64_t nsb = n / QK_K;
    int64_t i = 0;
    for (; i + 1 < nsb; i += 2) {
        ra_prefetch_ahead(a + i, 2 * sizeof(blk_q4_k));
        const __m128 f = k4_pair_sums((const uint8_t *)(a + i), b + i, 0);   // [I_i, I_i+1, M_i, M_i+1]
        const float dyA = b[i].d, dyB = b[i + 1].d;
        acc = __builtin_fmaf(_mm_cvtss_f32(f), ra_f16_table[a[i].d] * dyA, acc);
        acc = __builtin_fmaf(-_mm_cvtss_f32(_mm_movehl_ps(f, f)), ra_f16_table[a[i].dmin] * dyA, acc);
        acc = __builtin_fmaf(_mm_cvtss_f32(_mm_movehdup_ps(f)), ra_f16_table[a[i + 1].d] * dyB, acc);
        acc = __builtin_fmaf(-_mm_cvtss_f32(_mm_permute_ps(f, 3)), ra_f16_table[a[i + 1].dmin] * dyB, acc);
    }
    if (i < nsb) {   // an odd last super-block
        ra_prefetch_ahead(a + i, sizeof(blk_q4_k));
        const __m256i sm16 = _mm256_cvtepu8_epi16(ra_k4_scales_mins(a[i].scales));   // 8 scales, 8 mins
        // mins: sum_j m[j] * (bsums[2j] + bsums[2j+1])
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i pm = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        int32_t sd[8];
        k4_scale_words(sm16, sd);
        const __m256i si = k4_sums(a[i].qs, NULL, b + i, sd, sd + 4, 0);
        // [I, M] in lanes 0 and 1
        __m128i t = _mm_hadd_epi32(_mm_add_epi32(_mm256_castsi256_si128(si), _mm256_extracti128_si256(si, 1)), pm);
        t = _mm_hadd_epi32(t, t);
        const __m128 f = _mm_cvtepi32_ps(t);
        const float dy = b[i].d;
        acc = __builtin_fmaf(_mm_cvtss_f32(f), ra_f16_table[a[i].d] * dy, acc);
        acc = __builtin_fmaf(-_mm_cvtss_f32(_mm_movehdup_ps(f)), ra_f16_table[a[i].dmin] * dy, acc);
    }
    return acc;
}
RA_AVX2 float ra_avx2_dot_q4_k(int64_t n, const void *w, const void *x) { return dot_q4_k(n, w, x); }

RA_AVX2_INLINE void multi_q5_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    const blk_q5_k *a = w;
    const blk_q8_k *b[4];
    // as dot_q5_k, with the four activation rows' scalar accumulators side by side in one vector
    __m128 sacc = _mm_setzero_ps(), smin = _mm_setzero_ps();
    for (int k = 0; k < nx; k++) {
        b[k] = (const blk_q8_k *)((const uint8_t *)x + k * xs);
    }
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1), two = _mm256_set1_epi8(2);
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));
        const __m128i mins = _mm256_extracti128_si256(sm16, 1);
        const __m256i sc2 = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm16));
        const float dw = ra_f16_table[a[i].d], dmin = ra_f16_table[a[i].dmin];
        float fd[4] = {0, 0, 0, 0}, fm[4] = {0, 0, 0, 0};
        __m128i pm[4];
        __m256i si[4];
        for (int k = 0; k < 4; k++) {
            pm[k] = _mm_setzero_si128();
            si[k] = _mm256_setzero_si256();
        }
        for (int k = 0; k < nx; k++) {
            const __m256i bs = _mm256_loadu_si256((const __m256i *)b[k][i].bsums);
            const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
            pm[k] = _mm_madd_epi16(mins, bs2);
            fd[k] = dw * b[k][i].d;
            fm[k] = dmin * b[k][i].d;
        }
        const __m128i msum = _mm_hadd_epi32(_mm_hadd_epi32(pm[0], pm[1]), _mm_hadd_epi32(pm[2], pm[3]));
        smin = _mm_fmadd_ps(_mm_cvtepi32_ps(msum), _mm_loadu_ps(fm), smin);
        __m256i hq = _mm256_loadu_si256((const __m256i *)a[i].qh);
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_slli_epi16(_mm256_and_si256(hq, one), 4));
            const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), _mm256_slli_epi16(_mm256_and_si256(hq, two), 3));
            hq = _mm256_srli_epi16(hq, 2);
            const __m256i slo = _mm256_shuffle_epi8(sc2, _mm256_set1_epi16((short)(0x0100 * (4 * g + 1) + 4 * g)));
            const __m256i shi = _mm256_shuffle_epi8(sc2, _mm256_set1_epi16((short)(0x0100 * (4 * g + 3) + 4 * g + 2)));
            for (int k = 0; k < nx; k++) {
                const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b[k][i].qs + 64 * g));
                const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b[k][i].qs + 64 * g + 32));
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), slo);
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), shi);
                si[k] = _mm256_add_epi32(si[k], _mm256_add_epi32(p0, p1));
            }
        }
        __m128i q4[4];
        for (int k = 0; k < 4; k++) q4[k] = _mm_add_epi32(_mm256_castsi256_si128(si[k]), _mm256_extracti128_si256(si[k], 1));
        const __m128i isum = _mm_hadd_epi32(_mm_hadd_epi32(q4[0], q4[1]), _mm_hadd_epi32(q4[2], q4[3]));
        sacc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_loadu_ps(fd), sacc);
    }
    float r[4];
    _mm_storeu_ps(r, _mm_sub_ps(sacc, smin));
    for (int k = 0; k < nx; k++) out[k * os] = r[k];
}
RA_MULTI_WRAPPERS(multi_q5_k)

// The K-quants with a scale per 16 elements: Q6_K, Q3_K and Q2_K. Their super-blocks have the same shape: per half h
// (128 elements) four runs of 32 quants (run c: elements 128h + 32c ..), scale k for elements 16k..16k+15 (so the
// activation block sum bsums[k] meets it), quants unsigned for vpmaddubsw (Q6_K 0..63, Q3_K 0..7, Q2_K 0..3) with the
// offset (32, 4) taken back as offset · Σ scale · bsums, Q2_K's 4-bit mins the same way into a sum of their own.

RA_AVX2_INLINE size_t k16_block_bytes(const int t) {
    return t == K16_Q6 ? sizeof(blk_q6_k) : t == K16_Q3 ? sizeof(blk_q3_k) : sizeof(blk_q2_k);
}

// The 16 scales of a super-block as int16 (Q2_K: its mins into *mins).
RA_AVX2_INLINE __m256i k16_scales(const uint8_t *blk, const int t, __m256i *mins) {
    if (t == K16_Q6) return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)((const blk_q6_k *)blk)->scales));
    if (t == K16_Q3) {
        uint32_t u[4];
        ra_unpack_scales_q3_k_words(((const blk_q3_k *)blk)->scales, u);
        return _mm256_cvtepi8_epi16(_mm_sub_epi8(_mm_loadu_si128((const __m128i *)u), _mm_set1_epi8(32)));
    }
    const __m128i s = _mm_loadu_si128((const __m128i *)((const blk_q2_k *)blk)->scales), f = _mm_set1_epi8(15);
    *mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), f));
    return _mm256_cvtepu8_epi16(_mm_and_si128(s, f));
}

// Half h of a super-block as 4 vectors of 32 unsigned quants in element order.
RA_AVX2_INLINE void k16_quants(const uint8_t *blk, const int t, const int h, __m256i q[4]) {
    if (t == K16_Q6) {
        q6_k_quants((const blk_q6_k *)blk, h, q);
        return;
    }
    const uint8_t *qs = t == K16_Q3 ? ((const blk_q3_k *)blk)->qs : ((const blk_q2_k *)blk)->qs;
    const __m256i hm = t == K16_Q3 ? _mm256_loadu_si256((const __m256i *)((const blk_q3_k *)blk)->hmask) : _mm256_setzero_si256();
    k16_low_quants_v(_mm256_loadu_si256((const __m256i *)(qs + 32 * h)), hm, h, t == K16_Q3, q);
}

// The offsets of a super-block against activation block sums bs: -offset · Σ scale · bsum (Q6_K 32, Q3_K 4; Q2_K
// none), the start of its int32 sum.
RA_AVX2_INLINE __m256i k16_offset(const __m256i sc16, const __m256i bs, const int t) {
    if (t == K16_Q2) return _mm256_setzero_si256();
    const __m256i corr = _mm256_madd_epi16(sc16, bs);
    return _mm256_sub_epi32(_mm256_setzero_si256(), t == K16_Q6 ? _mm256_slli_epi32(corr, 5) : _mm256_slli_epi32(corr, 2));
}

RA_AVX2_INLINE uint16_t k16_d(const uint8_t *blk, const int t) {
    return t == K16_Q6 ? ((const blk_q6_k *)blk)->d : t == K16_Q3 ? ((const blk_q3_k *)blk)->d : ((const blk_q2_k *)blk)->d;
}

// One of them against up to 4 activation rows (k16_dot is this with one row): per super-block each row's exact int32
// sum (the offset included; Q2_K also M, min · activation block sum), then acc = fma(sum, d · d_x, acc) (Q2_K then
// acc = fnmadd(M, dmin · d_x, acc)) in float, super-block after super-block: the order of the scalar dots and of the
// 8-row Q6_K panel kernel (ra_matmul_q6_k_avx2). The 4 rows' sums sit side by side in one vector for one fma.
RA_AVX2_INLINE void k16_rows(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx,
                             const int pf, const int t) {
    const size_t bb = k16_block_bytes(t);
    const blk_q8_k *b[4];
    for (int k = 0; k < nx; k++) b[k] = (const blk_q8_k *)((const uint8_t *)x + k * xs);
    __m128 acc = _mm_setzero_ps();
    // picks int16 lane 0 of each 128-bit half's dword into the low half, lane 1 into the high half
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                          2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    for (int64_t i = 0; i < n / QK_K; i++) {
        const uint8_t *blk = (const uint8_t *)w + i * bb;
        if (pf) ra_prefetch_ahead(blk, bb);
        __m256i m16 = _mm256_setzero_si256();
        const __m256i sc16 = k16_scales(blk, t, &m16);
        __m256i si[4], mi[4];
        float dx[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++) si[k] = mi[k] = _mm256_setzero_si256();
        for (int k = 0; k < nx; k++) {
            const __m256i bs = _mm256_loadu_si256((const __m256i *)b[k][i].bsums);
            si[k] = k16_offset(sc16, bs, t);
            if (t == K16_Q2) mi[k] = _mm256_madd_epi16(m16, bs);
            dx[k] = b[k][i].d;
        }
        for (int h = 0; h < 2; h++) {
            __m256i q[4];
            k16_quants(blk, t, h, q);
            for (int c = 0; c < 4; c++) {   // scales 2c' (first 16 elements) and 2c'+1 (next 16), c' = 4h + c
                const __m256i s = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(4 * h + c)), pick);
                for (int k = 0; k < nx; k++) {
                    const __m256i p = _mm256_maddubs_epi16(q[c], _mm256_loadu_si256((const __m256i *)(b[k][i].qs + 128 * h + 32 * c)));
                    si[k] = _mm256_add_epi32(si[k], _mm256_madd_epi16(p, s));
                }
            }
        }
        const __m128 vdx = _mm_loadu_ps(dx);
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(hsum4_epi32(si[0], si[1], si[2], si[3])),
                           _mm_mul_ps(_mm_broadcast_ss(&ra_f16_table[k16_d(blk, t)]), vdx), acc);
        if (t == K16_Q2)
            acc = _mm_fnmadd_ps(_mm_cvtepi32_ps(hsum4_epi32(mi[0], mi[1], mi[2], mi[3])),
                                _mm_mul_ps(_mm_broadcast_ss(&ra_f16_table[((const blk_q2_k *)blk)->dmin]), vdx), acc);
    }
    float r[4];
    _mm_storeu_ps(r, acc);
    for (int k = 0; k < nx; k++) out[k * os] = r[k];
}
RA_AVX2_INLINE void multi_q6_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    k16_rows(n, w, x, xs, out, os, nx, 0, K16_Q6);
}
RA_MULTI_WRAPPERS(multi_q6_k)
RA_AVX2_INLINE void multi_q3_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    k16_rows(n, w, x, xs, out, os, nx, 0, K16_Q3);
}
RA_MULTI_WRAPPERS(multi_q3_k)
RA_AVX2_INLINE void multi_q2_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    k16_rows(n, w, x, xs, out, os, nx, 0, K16_Q2);
}
RA_MULTI_WRAPPERS(multi_q2_k)

// One activation row (decode), in k16_rows' order: per super-block the int32 sum, then one scalar fma (Q2_K two).
RA_AVX2_INLINE float k16_dot(int64_t n, const void *w, const void *x, const int t) {
    const size_t bb = k16_block_bytes(t);
    const blk_q8_k *b = x;
    // picks int16 lane 0 of each 128-bit half's dword into the low half, lane 1 into the high half (+ 4k: dword k)
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                          2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    float acc = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        const uint8_t *blk = (const uint8_t *)w + i * bb;
        ra_prefetch_ahead(blk, bb);
        __m256i m16 = _mm256_setzero_si256();
        const __m256i sc16 = k16_scales(blk, t, &m16);
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        __m256i si = k16_offset(sc16, bs, t);
        for (int h = 0; h < 2; h++) {
            __m256i q[4];
            k16_quants(blk, t, h, q);
            const int8_t *y = b[i].qs + 128 * h;
            // the half's 8 scales in both 128-bit halves, so that one vpshufb picks each pair (clang turned the
            // vpermd + vpshufb per pair into 3-4 shuffles; 1 thread from memory ~1.14x on Q6_K, engine-notes.md)
            const __m256i th = h == 0 ? _mm256_permute4x64_epi64(sc16, 0x44) : _mm256_permute4x64_epi64(sc16, 0xEE);
            for (int k = 0; k < 4; k++) {
                const __m256i sc = _mm256_shuffle_epi8(th, _mm256_add_epi8(pick, _mm256_set1_epi8((char)(4 * k))));
                const __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(y + 32 * k)));
                si = _mm256_add_epi32(si, _mm256_madd_epi16(p, sc));
            }
        }
        acc = __builtin_fmaf((float)hsum_epi32(si), ra_f16_table[k16_d(blk, t)] * b[i].d, acc);
        if (t == K16_Q2)
            acc = __builtin_fmaf(-(float)hsum_epi32(_mm256_madd_epi16(m16, bs)), ra_f16_table[((const blk_q2_k *)blk)->dmin] * b[i].d, acc);
    }
    return acc;
}
RA_AVX2_INLINE float dot_q6_k(int64_t n, const void *w, const void *x) { return k16_dot(n, w, x, K16_Q6); }
RA_AVX2_INLINE float dot_q3_k(int64_t n, const void *w, const void *x) { return k16_dot(n, w, x, K16_Q3); }
RA_AVX2_INLINE float dot_q2_k(int64_t n, const void *w, const void *x) { return k16_dot(n, w, x, K16_Q2); }
RA_AVX2 float ra_avx2_dot_q6_k(int64_t n, const void *w, const void *x) { return dot_q6_k(n, w, x); }
RA_AVX2 float ra_avx2_dot_q3_k(int64_t n, const void *w, const void *x) { return dot_q3_k(n, w, x); }
RA_AVX2 float ra_avx2_dot_q2_k(int64_t n, const void *w, const void *x) { return dot_q2_k(n, w, x); }

// IQ4_NL and IQ4_XS: the 16 levels looked up by vpshufb on a block's nibbles (its low nibbles, elements 0-15, in the
// low half, its high nibbles in the high half), then signed × signed through vpsignb: |w| against x with w's sign in
// vpmaddubsw (a pair at most 2 · 127 · 127 = 32258; no level is 0 or -128). Per block (IQ4_XS: per super-block, the
// blocks' sums weighted by their scales) the exact int32 sum, then the scalar dot's fma.
RA_AVX2_INLINE __m256i iq4_levels(const uint8_t *qs, const __m256i lut) {
    const __m128i q = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(15)));
}

// IQ4_NL (k256 = 0, Q8_0 activations) or IQ4_XS (k256 = 1, Q8_K) against up to 4 activation rows (the dots are this
// with one row): each weight block's levels looked up once for all rows; per block (IQ4_XS: super-block) each row's
// exact int32 sum, then its fma in the scalar dot's order. IQ4_NL reduces 4 blocks' sums of a row at a time.
RA_AVX2_INLINE void iq4_rows(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx, const int pf,
                             const int k256) {
    const __m256i lut = iq4_levels256(0), ones = _mm256_set1_epi16(1);
    float acc[4] = { 0, 0, 0, 0 };
    if (k256) {
        const blk_iq4_xs *a = w;
        for (int64_t i = 0; i < n / QK_K; i++) {
            if (pf) ra_prefetch_ahead(a + i, sizeof(blk_iq4_xs));
            __m256i si[4];
            for (int k = 0; k < nx; k++) si[k] = _mm256_setzero_si256();
            for (int j = 0; j < 8; j++) {
                const __m256i v = iq4_levels(a[i].qs + 16 * j, lut), av = _mm256_sign_epi8(v, v);
                const __m256i sc = _mm256_set1_epi16((short)ra_iq4_xs_scale(&a[i], j));
                for (int k = 0; k < nx; k++) {
                    const blk_q8_k *b = (const blk_q8_k *)(const void *)((const uint8_t *)x + k * xs) + i;
                    const __m256i p = _mm256_maddubs_epi16(av, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(b->qs + 32 * j)), v));
                    si[k] = _mm256_add_epi32(si[k], _mm256_madd_epi16(p, sc));
                }
            }
            const float dw = ra_f16_table[a[i].d];
            for (int k = 0; k < nx; k++) {
                const blk_q8_k *b = (const blk_q8_k *)(const void *)((const uint8_t *)x + k * xs) + i;
                acc[k] = __builtin_fmaf((float)hsum_epi32(si[k]), dw * b->d, acc[k]);
            }
        }
    } else {
        const blk_iq4_nl *a = w;
        const int64_t nb = n / 32;
        for (int64_t i = 0; i < nb; i += 4) {
            const int m = nb - i < 4 ? (int)(nb - i) : 4;
            __m256i s[4][4];   // [row k][block c]
            for (int c = 0; c < 4; c++) {
                if (c >= m) { for (int k = 0; k < nx; k++) s[k][c] = _mm256_setzero_si256(); continue; }
                if (pf) ra_prefetch_ahead(a + i + c, sizeof(blk_iq4_nl));
                const __m256i v = iq4_levels(a[i + c].qs, lut), av = _mm256_sign_epi8(v, v);
                for (int k = 0; k < nx; k++) {
                    const blk_q8_0 *b = (const blk_q8_0 *)(const void *)((const uint8_t *)x + k * xs) + i + c;
                    s[k][c] = _mm256_madd_epi16(_mm256_maddubs_epi16(av, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)b->qs), v)), ones);
                }
            }
            for (int k = 0; k < nx; k++) {
                int32_t sum[4];
                _mm_storeu_si128((__m128i *)sum, hsum4_epi32(s[k][0], s[k][1], s[k][2], s[k][3]));
                for (int c = 0; c < m; c++) {
                    const blk_q8_0 *b = (const blk_q8_0 *)(const void *)((const uint8_t *)x + k * xs) + i + c;
                    acc[k] = __builtin_fmaf((float)sum[c], ra_f16_table[a[i + c].d] * ra_f16_table[b->d], acc[k]);
                }
            }
        }
    }
    for (int k = 0; k < nx; k++) out[k * os] = acc[k];
}
RA_AVX2_INLINE void multi_iq4_nl_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    iq4_rows(n, w, x, xs, out, os, nx, 0, 0);
}
RA_MULTI_WRAPPERS(multi_iq4_nl)
RA_AVX2_INLINE void multi_iq4_xs_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    iq4_rows(n, w, x, xs, out, os, nx, 0, 1);
}
RA_MULTI_WRAPPERS(multi_iq4_xs)
RA_AVX2_INLINE float dot_iq4_nl(int64_t n, const void *w, const void *x) {
    float r;
    iq4_rows(n, w, x, 0, &r, 0, 1, 1, 0);
    return r;
}
RA_AVX2_INLINE float dot_iq4_xs(int64_t n, const void *w, const void *x) {
    float r;
    iq4_rows(n, w, x, 0, &r, 0, 1, 1, 1);
    return r;
}
RA_AVX2 float ra_avx2_dot_iq4_nl(int64_t n, const void *w, const void *x) { return dot_iq4_nl(n, w, x); }
RA_AVX2 float ra_avx2_dot_iq4_xs(int64_t n, const void *w, const void *x) { return dot_iq4_xs(n, w, x); }

// Decode rows (one activation row against a run of weight rows): the dots above row after row, bit for bit, each
// row also prefetching one line RA_PREFETCH_FAR ahead as the 32-element rows kernels do. The dots' own prefetches
// run only 4 KiB ahead, so on 4 KiB pages each page's TLB walk otherwise stalls the stream when its first lines are
// needed (Qwen3-0.6B-shaped Q4_K_M/Q5_K_M from the mapping, 1 thread: ~1.05-1.12x; engine-notes.md, "K-quant decode
// from memory"). One weight row at a time streams faster from memory than interleaving rows (4-row passes were
// slower there, engine-notes.md).
#define RA_K_ROWS(name, dot)                                                                                           \
    RA_AVX2 void name(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) { \
        (void)side;                                                                                                    \
        const uint8_t *W = w;                                                                                          \
        for (int64_t r = 0; r < rows; r++) {                                                                           \
            ra_prefetch_far(W + r * wrow);                                                                             \
            out[r] = dot(n, W + r * wrow, x);                                                                          \
        }                                                                                                              \
    }
RA_K_ROWS(ra_avx2_rows_q4_k, dot_q4_k)
RA_K_ROWS(ra_avx2_rows_q5_k, dot_q5_k)
RA_K_ROWS(ra_avx2_rows_q6_k, dot_q6_k)
RA_K_ROWS(ra_avx2_rows_q3_k, dot_q3_k)
RA_K_ROWS(ra_avx2_rows_q2_k, dot_q2_k)
RA_K_ROWS(ra_avx2_rows_iq4_nl, dot_iq4_nl)
RA_K_ROWS(ra_avx2_rows_iq4_xs, dot_iq4_xs)

#endif
