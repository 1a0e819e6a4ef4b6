// Private to the AVX2 kernel files (dot_avx2*.c, matmul_avx2*.c): target attributes, the small vector helpers,
// and the 32-element block types' helpers shared by their dots, rows, multi-row kernels and panels. Everything
// here is static inline, compiled with the target attributes, so including it needs no -march flags.
#ifndef RUNANYWHERE_AVX2_INTERNAL_H
#define RUNANYWHERE_AVX2_INTERNAL_H
#include "kernels_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <stddef.h>

#define RA_AVX2 __attribute__((target("avx2,fma,f16c")))
#define RA_AVX2_INLINE RA_AVX2 static inline __attribute__((always_inline))

RA_AVX2 static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

RA_AVX2 static inline float h2f(uint16_t h) { return _cvtsh_ss(h); }


RA_AVX2 static inline int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

// The sum of 32 int8 at y (an activation block's Σ y; |.| <= 32 · 128).
RA_AVX2 static inline int sum_i8x32(const int8_t *y) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)y);
    return hsum_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), v), _mm256_set1_epi16(1)));
}

// The 16 IQ4 levels (ra_iq4_levels) in both 128-bit lanes, for vpshufb: as signed bytes, or plus 128 as unsigned ones
// (1..241, for vpdpbusd, which multiplies unsigned bytes by signed ones).
RA_AVX2 static inline __m256i iq4_levels256(const int plus128) {
    const __m256i l = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)ra_iq4_levels));
    return plus128 ? _mm256_xor_si256(l, _mm256_set1_epi8((char)0x80)) : l;
}

// Signed int8 × signed int8 (x never -128), summed in groups of 4 into 8 int32 lanes.
RA_AVX2 static inline __m256i dot_s8(__m256i w, __m256i x) {
    const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// 32 nibbles of 16 bytes: low nibbles are elements 0..15, high nibbles 16..31.
// (broadcast load + variable shift: no shuffle-port work)
RA_AVX2 static inline __m256i nibbles32(const uint8_t *p) {
    const __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
    return _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_set_epi64x(4, 4, 0, 0)), _mm256_set1_epi8(15));
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

RA_AVX2 static inline __m256 ld_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

// The int32 sums of 4 vectors of 8 lanes: lane k = the sum of a, b, c, d (k = 0..3).
RA_AVX2 static inline __m128i hsum4_epi32(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

// ---------------------------------------------------------------------------------------------
// Block types of 32 elements with one scale per block: Q8_0, Q4_0 and Q5_0 (signed quants, Q8_0 activations), Q4_1
// and Q5_1 (unsigned quants and a min per block, Q8_1 activations). One order of the float sums for the row·vector
// dot, the multi-row kernel and the 8-row panels (matmul_avx2_b32.c): each block's int32 sum I is exact, and is
// added as c = fma(I, d_w · d_x, c) (then c = fma(m_w, s_x, c) for the types with a min) to chain c = block mod 4;
// the result is (c0 + c1) + (c2 + c3). The chains keep the dot's fmas independent; every kernel sums each
// activation row in this order, so a prompt batch gives bit for bit the logits of feeding its tokens one by one.
enum { B32_Q8_0, B32_Q4_0, B32_Q5_0, B32_Q4_1, B32_Q5_1 };

RA_AVX2_INLINE int b32_wbytes(const int t) {
    return t == B32_Q8_0 ? (int)sizeof(blk_q8_0) : t == B32_Q4_0 ? (int)sizeof(blk_q4_0) : t == B32_Q5_0 ? (int)sizeof(blk_q5_0)
         : t == B32_Q4_1 ? (int)sizeof(blk_q4_1) : (int)sizeof(blk_q5_1);
}
RA_AVX2_INLINE int b32_min(const int t) { return t == B32_Q4_1 || t == B32_Q5_1; }
// activation blocks: Q8_0 (d, qs) or Q8_1 (d, s, qs)
RA_AVX2_INLINE int b32_xbytes(const int t) { return b32_min(t) ? (int)sizeof(blk_q8_1) : (int)sizeof(blk_q8_0); }
RA_AVX2_INLINE int b32_xqs(const int t) { return b32_min(t) ? (int)offsetof(blk_q8_1, qs) : (int)offsetof(blk_q8_0, qs); }
// the half at byte offset o of a block, as float (d at 0 in every block; m and s at 2)
RA_AVX2_INLINE float b32_half(const uint8_t *blk, int o) {
    uint16_t h;
    memcpy(&h, blk + o, 2);
    return ra_f16_table[h];
}

// The scales of one activation row of nblk blocks as the 32-element kernels take them, converted once per product
// (ra_matmul_side; a kernel given none converts them itself): d[j] = block j's d, s[j] = its s for Q8_1 activations
// (the types with a min), else the sum of its 32 quants (the rows kernel takes o · Σy off the signed 4- and 5-bit
// types' unsigned sums; exact in float, |Σy| <= 4064). By F16C, not ra_f16_table (the same values): ra_matmul_jobs
// converts before any kernel has been resolved, and the table is only filled then.
RA_AVX2_INLINE void b32_xscales(const uint8_t *X, int64_t nblk, float *d, float *s, const int t) {
    for (int64_t j = 0; j < nblk; j++) {
        const uint8_t *blk = X + j * b32_xbytes(t);
        uint16_t h[2];
        memcpy(h, blk, sizeof h);
        d[j] = h2f(h[0]);
        if (b32_min(t)) {
            s[j] = h2f(h[1]);
        } else {
            s[j] = (float)sum_i8x32((const int8_t *)(const void *)(blk + b32_xqs(t)));
        }
    }
}

// The 32 quants of weight block blk in element order, unsigned (0..15, 0..31; Q8_0: its int8 quants).
RA_AVX2_INLINE __m256i b32_quants_raw(const uint8_t *blk, const int t) {
    const __m256i b4 = _mm256_set1_epi8(0x10);
    switch (t) {
    case B32_Q8_0: return _mm256_loadu_si256((const __m256i *)((const blk_q8_0 *)(const void *)blk)->qs);
    case B32_Q4_0: return nibbles32(((const blk_q4_0 *)(const void *)blk)->qs);
    case B32_Q5_0: {
        const blk_q5_0 *a = (const blk_q5_0 *)(const void *)blk;
        return _mm256_or_si256(nibbles32(a->qs), _mm256_and_si256(bits_to_bytes(a->qh), b4));
    }
    case B32_Q4_1: return nibbles32(((const blk_q4_1 *)(const void *)blk)->qs);
    default: {
        const blk_q5_1 *a = (const blk_q5_1 *)(const void *)blk;
        return _mm256_or_si256(nibbles32(a->qs), _mm256_and_si256(bits_to_bytes(a->qh), b4));
    }
    }
}
// The offset the signed 4- and 5-bit types take off their unsigned quants (0 for the others).
RA_AVX2_INLINE int b32_offset(const int t) { return t == B32_Q4_0 ? 8 : t == B32_Q5_0 ? 16 : 0; }

// The 32 quants of weight block blk in element order, as int8 (signed types: q - offset; Q4_1/Q5_1: 0..31).
RA_AVX2_INLINE __m256i b32_quants(const uint8_t *blk, const int t) {
    const __m256i q = b32_quants_raw(blk, t);
    return b32_offset(t) ? _mm256_sub_epi8(q, _mm256_set1_epi8((char)b32_offset(t))) : q;
}

// The int32 sums of 4 vectors of 16 int16 lanes each (pair sums of the 4-bit and 5-bit types, |lane| <= 2 · 31 · 128):
// lane k = the sum of a, b, c, d (k = 0..3). Sums of up to 8 elements stay in int16 (|.| <= 31744), then one vpmaddwd.
RA_AVX2_INLINE __m128i hsum4_epi16(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i s = _mm256_hadd_epi16(_mm256_hadd_epi16(a, b), _mm256_hadd_epi16(c, d));
    const __m256i t = _mm256_madd_epi16(s, _mm256_set1_epi16(1));
    return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// The halves at byte offset o of the blocks at p + stride · k, k = 0..3 (k past cnt: block cnt - 1 again), as floats
// (broadcast loads and blends).
RA_AVX2_INLINE __m128 b32_halves4(const uint8_t *p, int stride, int o, const int cnt) {
    __m128 h[4];
    for (int k = 0; k < 4; k++) h[k] = _mm_broadcast_ss(&ra_f16_table[*(const uint16_t *)(const void *)(p + (k < cnt ? k : cnt - 1) * stride + o)]);
    return _mm_blend_ps(_mm_blend_ps(h[0], h[1], 2), _mm_blend_ps(h[2], h[3], 8), 12);
}

// The exact int32 sums of blocks [0, cnt) (cnt <= 4) of a weight row (a) and an activation row (b), in lanes 0..cnt-1.
RA_AVX2_INLINE __m128i b32_isum4(const uint8_t *a, const uint8_t *b, const int cnt, const int t) {
    const int wb = b32_wbytes(t), xb = b32_xbytes(t), xq = b32_xqs(t);
    __m256i p[4];
    if (t == B32_Q8_0) {   // pair sums up to 32512: to int32 at once
        for (int k = 0; k < 4; k++)
            p[k] = k < cnt ? dot_s8(b32_quants(a + k * wb, t), _mm256_loadu_si256((const __m256i *)(b + k * xb + xq))) : _mm256_setzero_si256();
        return hsum4_epi32(p[0], p[1], p[2], p[3]);
    }
    for (int k = 0; k < 4; k++) {
        if (k >= cnt) { p[k] = _mm256_setzero_si256(); continue; }
        const __m256i q = b32_quants(a + k * wb, t), y = _mm256_loadu_si256((const __m256i *)(b + k * xb + xq));
        p[k] = b32_min(t) ? _mm256_maddubs_epi16(q, y) : _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(y, q));
    }
    return hsum4_epi16(p[0], p[1], p[2], p[3]);
}

// acc with lanes [0, cnt) taken from r (chains past cnt unchanged).
RA_AVX2_INLINE __m128 b32_chains(__m128 acc, __m128 r, const int cnt) {
    if (cnt == 4) return r;
    const __m128i lane = _mm_setr_epi32(0, 1, 2, 3);
    return _mm_blendv_ps(acc, r, _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32(cnt), lane)));
}

// Blocks [i, i + cnt) (cnt <= 4) of a row·vector dot into chains 0..cnt-1 of acc.
RA_AVX2_INLINE __m128 dot_b32_group(const uint8_t *a, const uint8_t *b, const int cnt, __m128 acc, const int t) {
    const int wb = b32_wbytes(t), xb = b32_xbytes(t);
    const __m128i isum = b32_isum4(a, b, cnt, t);
    __m128 r = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(b32_halves4(a, wb, 0, cnt), b32_halves4(b, xb, 0, cnt)), acc);
    if (b32_min(t)) r = _mm_fmadd_ps(b32_halves4(a, wb, 2, cnt), b32_halves4(b, xb, 2, cnt), r);
    return b32_chains(acc, r, cnt);
}

RA_AVX2_INLINE float dot_b32(int64_t n, const void *w, const void *x, const int t) {
    const uint8_t *W = w, *X = x;
    const int wb = b32_wbytes(t), xb = b32_xbytes(t);
    const int64_t nb = n / 32;
    __m128 acc = _mm_setzero_ps();   // lane c: chain c
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        ra_prefetch_ahead(W + i * wb, 4 * (size_t)wb);
        acc = dot_b32_group(W + i * wb, X + i * xb, 4, acc, t);
    }
    switch (nb - i) {
    case 1: acc = dot_b32_group(W + i * wb, X + i * xb, 1, acc, t); break;
    case 2: acc = dot_b32_group(W + i * wb, X + i * xb, 2, acc, t); break;
    case 3: acc = dot_b32_group(W + i * wb, X + i * xb, 3, acc, t); break;
    default: break;
    }
    // (c0 + c1) + (c2 + c3)
    const __m128 h = _mm_add_ps(acc, _mm_movehdup_ps(acc));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehl_ps(h, h)));
}

// Half h (elements 128h..128h+127) of a Q6_K block as 4 vectors of 32 quants 0..63 in element order.
// (Every step acts on each byte where it is, so the 8-row vectors of repacked rows, x8.c, go through it too.)
RA_AVX2_INLINE void q6_k_quants_v(__m256i l0, __m256i l1, __m256i qh, __m256i q[4]) {
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
    q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
    q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
    q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
}
RA_AVX2_INLINE void q6_k_quants(const blk_q6_k *a, int h, __m256i q[4]) {
    q6_k_quants_v(_mm256_loadu_si256((const __m256i *)(a->ql + 64 * h)), _mm256_loadu_si256((const __m256i *)(a->ql + 64 * h + 32)),
                  _mm256_loadu_si256((const __m256i *)(a->qh + 32 * h)), q);
}

// The K-quants with a scale per 16 elements (dot_avx2_k.c, x8.c, matmul_avx2_k.c).
enum { K16_Q6, K16_Q3, K16_Q2 };

// Runs c = 0..3 of half h of Q3_K (three = 1) or Q2_K quants as unsigned bytes (Q3_K 0..7, Q2_K 0..3): bits 2c, 2c + 1 of
// each byte of v (a row's qs[32h ..], or 8 repacked rows' quartets of it), Q3_K's third bit from bit 4h + c of the
// same byte position of hm (its hmask). Each step acts on each byte where it is.
RA_AVX2_INLINE void k16_low_quants_v(__m256i v, __m256i hm, const int h, const int three, __m256i q[4]) {
    const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(4);
    q[0] = _mm256_and_si256(v, m3);
    q[1] = _mm256_and_si256(_mm256_srli_epi16(v, 2), m3);
    q[2] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m3);
    q[3] = _mm256_and_si256(_mm256_srli_epi16(v, 6), m3);
    if (!three) return;
    // bit 4h + c moved to bit 2 (shifts of 16-bit lanes: the mask keeps each byte's own bit)
    if (h == 0) {
        q[0] = _mm256_or_si256(q[0], _mm256_and_si256(_mm256_slli_epi16(hm, 2), m4));
        q[1] = _mm256_or_si256(q[1], _mm256_and_si256(_mm256_slli_epi16(hm, 1), m4));
        q[2] = _mm256_or_si256(q[2], _mm256_and_si256(hm, m4));
        q[3] = _mm256_or_si256(q[3], _mm256_and_si256(_mm256_srli_epi16(hm, 1), m4));
    } else {
        q[0] = _mm256_or_si256(q[0], _mm256_and_si256(_mm256_srli_epi16(hm, 2), m4));
        q[1] = _mm256_or_si256(q[1], _mm256_and_si256(_mm256_srli_epi16(hm, 3), m4));
        q[2] = _mm256_or_si256(q[2], _mm256_and_si256(_mm256_srli_epi16(hm, 4), m4));
        q[3] = _mm256_or_si256(q[3], _mm256_and_si256(_mm256_srli_epi16(hm, 5), m4));
    }
}

// Runs c = 0..3 of 8 repacked Q2_K rows from a qs vector v (K16X8_QS): runs 0 and 2 as unsigned bytes 0..3, runs
// 1 and 3 as 4 times theirs (0..12, their field masked in place), five operations against k16_low_quants_v's seven.
// The caller takes the factor 4 off runs 1 and 3 once their sums are int32 (k16x8_group, x8.c).
RA_AVX2_INLINE void q2x8_quants_v(__m256i v, __m256i q[4]) {
    const __m256i m03 = _mm256_set1_epi8(3), m0c = _mm256_set1_epi8(12), v4 = _mm256_srli_epi16(v, 4);
    q[0] = _mm256_and_si256(v, m03);
    q[1] = _mm256_and_si256(v, m0c);
    q[2] = _mm256_and_si256(v4, m03);
    q[3] = _mm256_and_si256(v4, m0c);
}

// Runs c = 0..3 of half h of 8 repacked Q3_K rows as unsigned bytes 0..7 from a qs vector v (K16X8_QS) and the group's
// hmask vector hm in Q3X8_HM's bit order: y = fields 0 and 2 with their third bits at bits 2 and 6, z = fields 1 and 3
// the same, then each nibble. 14-15 operations against k16_low_quants_v's 18-19 on the file's order (x8_ab.sh 11 1024
// 512 on the Zen 1 EPYC: the repacked rows 1.33x -> 1.53x the file's). 16-bit shifts carry bits into the next byte only
// where the masks clear them.
RA_AVX2_INLINE void q3x8_quants_v(__m256i v, __m256i hm, const int h, __m256i q[4]) {
    const __m256i m33 = _mm256_set1_epi8(0x33), m44 = _mm256_set1_epi8(0x44), m0f = _mm256_set1_epi8(15);
    const __m256i y = _mm256_or_si256(_mm256_and_si256(v, m33), _mm256_and_si256(h ? _mm256_slli_epi16(hm, 2) : hm, m44));
    const __m256i z = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 2), m33),
                                      _mm256_and_si256(h ? _mm256_slli_epi16(hm, 1) : _mm256_srli_epi16(hm, 1), m44));
    q[0] = _mm256_and_si256(y, m0f);
    q[1] = _mm256_and_si256(z, m0f);
    q[2] = _mm256_and_si256(_mm256_srli_epi16(y, 4), m0f);
    q[3] = _mm256_and_si256(_mm256_srli_epi16(z, 4), m0f);
}

// ---------------------------------------------------------------------------------------------
// One weight row against up to 4 activation rows: the weight blocks are decoded once for all of
// them (prompt processing). The *_m bodies are instantiated for nx = 1..4 so their loops unroll.

#define RA_MULTI_WRAPPERS(name)                                                                        \
    RA_AVX2 void ra_avx2_##name(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os) { \
        switch (nx) {                                                                                  \
        case 1: name##_m(n, w, x, xs, out, os, 1); break;                                              \
        case 2: name##_m(n, w, x, xs, out, os, 2); break;                                              \
        case 3: name##_m(n, w, x, xs, out, os, 3); break;                                              \
        default: name##_m(n, w, x, xs, out, os, 4); break;                                             \
        }                                                                                              \
    }

// The kernels of the AVX2 table (dot_avx2.c) that live in rows_avx2_b32.c.
void ra_avx2_rows_q8_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q4_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q5_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q4_1(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q5_1(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);

// The kernels of the AVX2 table (dot_avx2.c) that live in dot_avx2_k.c.
float ra_avx2_dot_q4_k(int64_t n, const void *w, const void *x);
float ra_avx2_dot_q5_k(int64_t n, const void *w, const void *x);
float ra_avx2_dot_q6_k(int64_t n, const void *w, const void *x);
void ra_avx2_rows_q4_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q5_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q6_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_multi_q4_k(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
void ra_avx2_multi_q5_k(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
void ra_avx2_multi_q6_k(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_avx2_dot_q3_k(int64_t n, const void *w, const void *x);
float ra_avx2_dot_iq4_nl(int64_t n, const void *w, const void *x);
void ra_avx2_multi_iq4_nl(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
void ra_avx2_multi_iq4_xs(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
float ra_avx2_dot_iq4_xs(int64_t n, const void *w, const void *x);
void ra_avx2_rows_iq4_nl(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_iq4_xs(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
float ra_avx2_dot_q2_k(int64_t n, const void *w, const void *x);
void ra_avx2_rows_q3_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_rows_q2_k(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);
void ra_avx2_multi_q3_k(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);
void ra_avx2_multi_q2_k(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os);

#endif
#endif
