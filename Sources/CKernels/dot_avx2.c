// AVX2 + FMA + F16C dot products. Compiled with target attributes, so the target needs no -march
// flags; dispatch.c only calls these after checking the CPU has the features.
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

RA_AVX2 static inline __m256 ld_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

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

// The int32 sums of 4 vectors of 8 lanes: lane k = the sum of a, b, c, d (k = 0..3).
RA_AVX2 static inline __m128i hsum4_epi32(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

// ---------------------------------------------------------------------------------------------
// Block types of 32 elements with one scale per block: Q8_0, Q4_0 and Q5_0 (signed quants, Q8_0 activations), Q4_1
// and Q5_1 (unsigned quants and a min per block, Q8_1 activations). One order of the float sums for the row·vector
// dot, the multi-row kernel and the 8-row panels (dot_avx2_b32 below): each block's int32 sum I is exact, and is
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

// Decode over many weight rows, in dot_b32's order bit for bit. The activation row's scales (d, and s of Q8_1) become
// floats once per call; a group of 4 weight blocks gets its scales from one F16C conversion of 4 words (d and m of
// each block) instead of 8 table look-ups. (A row·vector dot spent about as many instructions on its scales as on
// its quants: SmolLM2's 576-column Q4_1 rows, bench/results/engine-notes.md.)
// Rows of up to 512 blocks (16384 columns) take the rows kernel (its per-call tables: ~35 KB of stack); longer ones
// loop over dot_b32.
enum { B32_ROWS_MAX_BLOCKS = 512 };

// The halves at offsets 0 (d) and 2 (m, for the types with a min; part of the block's quants otherwise) of blocks
// k = 0..3 at a + k · wb as floats d0 m0 d1 m1 d2 m2 d3 m3 (k past cnt: block cnt - 1 again).
RA_AVX2_INLINE __m256 b32_wscales_dm(const uint8_t *a, const int wb, const int cnt) {
    uint32_t u[4];
    for (int k = 0; k < 4; k++) memcpy(&u[k], a + (k < cnt ? k : cnt - 1) * wb, 4);
    const __m128i v = _mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(_mm_cvtsi32_si128((int)u[0]), (int)u[1], 1), (int)u[2], 2), (int)u[3], 3);
    return _mm256_cvtph_ps(v);
}

// Lanes 0..3: d of the 4 blocks; lanes 4..7: m (b32_wscales_dm's halves, rearranged).
RA_AVX2_INLINE __m256 b32_wscales4(const uint8_t *a, const int wb, const int cnt) {
    return _mm256_permutevar8x32_ps(b32_wscales_dm(a, wb, cnt), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

// The int32 sums of blocks [0, cnt) of weight row a with the activation blocks at b, the signed 4- and 5-bit types
// from their unsigned quants: sum (q - o) · y = sum q · y - o · sum y, with o · sum y of each activation block in off
// (the same exact integers as b32_isum4, two sign operations and a subtraction fewer per block).
RA_AVX2_INLINE __m128i rows_b32_isum4(const uint8_t *a, const uint8_t *b, const int32_t *off, const int cnt, const int t) {
    if (!b32_offset(t)) return b32_isum4(a, b, cnt, t);
    const int wb = b32_wbytes(t), xb = b32_xbytes(t), xq = b32_xqs(t);
    __m256i p[4];
    for (int k = 0; k < 4; k++)
        p[k] = k < cnt ? _mm256_maddubs_epi16(b32_quants_raw(a + k * wb, t), _mm256_loadu_si256((const __m256i *)(b + k * xb + xq)))
                       : _mm256_setzero_si256();
    return _mm_sub_epi32(hsum4_epi16(p[0], p[1], p[2], p[3]), _mm_loadu_si128((const __m128i *)off));
}

RA_AVX2_INLINE __m128 rows_b32_group(const uint8_t *a, const uint8_t *b, const float *dx, const float *sx, const int32_t *off,
                                     const int cnt, __m128 acc, const int t) {
    const __m256 sc = b32_wscales4(a, b32_wbytes(t), cnt);
    const __m128i isum = rows_b32_isum4(a, b, off, cnt, t);
    __m128 r = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(_mm256_castps256_ps128(sc), _mm_loadu_ps(dx)), acc);
    if (b32_min(t)) r = _mm_fmadd_ps(_mm256_extractf128_ps(sc, 1), _mm_loadu_ps(sx), r);
    return b32_chains(acc, r, cnt);
}

// Q4_0 and Q4_1 by pairs of blocks: the 16 bytes of quants of blocks k and k+1 in one vector give the low nibbles of
// both (elements 0..15 of each) with one and, the high ones (16..31) with one shift and one and, against an activation
// copy laid out to match (per group of 4 blocks, 8 floats of scales in the lane order below). Each int16 lane adds 4
// products (<= 4 · 15 · 128), so a block's sum is exact before vpmaddwd. Lanes of the 256-bit chains: blocks 0, 0, 2, 2
// | 1, 1, 3, 3 of the group (the duplicates are the same fmas on the same values, so the 4 chains are dot_b32's).
typedef struct { uint8_t y[128]; float dx[8], sx[8]; int32_t off[8]; } b32_pair_group;

RA_AVX2_INLINE int b32_paired(const int t) { return t == B32_Q4_0 || t == B32_Q4_1; }

// Group g of the activation row (blocks 4g..4g+3) in the layout of rows_b32_pairs.
RA_AVX2_INLINE void b32_pair_pack(const uint8_t *X, const float *dx, const float *sx, const int32_t *off, b32_pair_group *g, const int t) {
    const int xb = b32_xbytes(t), xq = b32_xqs(t);
    for (int p = 0; p < 2; p++) {
        const uint8_t *y0 = X + (2 * p) * xb + xq, *y1 = X + (2 * p + 1) * xb + xq;
        memcpy(g->y + 64 * p, y0, 16);
        memcpy(g->y + 64 * p + 16, y1, 16);
        memcpy(g->y + 64 * p + 32, y0 + 16, 16);
        memcpy(g->y + 64 * p + 48, y1 + 16, 16);
    }
    static const int lane_block[8] = {0, 0, 2, 2, 1, 1, 3, 3};
    for (int l = 0; l < 8; l++) {
        g->dx[l] = dx[lane_block[l]];
        g->sx[l] = sx[lane_block[l]];
        g->off[l] = off[lane_block[l]];
    }
}

RA_AVX2_INLINE __m256 rows_b32_pairs(const uint8_t *a, const b32_pair_group *g, __m256 acc, const int t) {
    const int wb = b32_wbytes(t), qo = t == B32_Q4_1 ? (int)offsetof(blk_q4_1, qs) : (int)offsetof(blk_q4_0, qs);
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256i s[2];
    for (int p = 0; p < 2; p++) {
        const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a + 2 * p * wb + qo))),
                                                  _mm_loadu_si128((const __m128i *)(a + (2 * p + 1) * wb + qo)), 1);
        const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        s[p] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(g->y + 64 * p))),
                                _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(g->y + 64 * p + 32))));
    }
    const __m256i m = _mm256_madd_epi16(_mm256_hadd_epi16(s[0], s[1]), _mm256_set1_epi16(1));
    __m256i isum = _mm256_add_epi32(m, _mm256_shuffle_epi32(m, 0xB1));
    if (b32_offset(t)) isum = _mm256_sub_epi32(isum, _mm256_loadu_si256((const __m256i *)g->off));
    const __m256 sc = b32_wscales_dm(a, wb, 4);   // d0 m0 d1 m1 d2 m2 d3 m3
    const __m256 d = _mm256_permutevar8x32_ps(sc, _mm256_setr_epi32(0, 0, 4, 4, 2, 2, 6, 6));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_loadu_ps(g->dx)), acc);
    if (b32_min(t)) acc = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(sc, _mm256_setr_epi32(1, 1, 5, 5, 3, 3, 7, 7)), _mm256_loadu_ps(g->sx), acc);
    return acc;
}

RA_AVX2_INLINE void rows_b32(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out, const int t) {
    const uint8_t *W = w, *X = x;
    const int wb = b32_wbytes(t), xb = b32_xbytes(t);
    const int64_t nblk = n / 32;
    if (nblk > B32_ROWS_MAX_BLOCKS) {
        for (int64_t r = 0; r < rows; r++) out[r] = dot_b32(n, W + r * wrow, x, t);
        return;
    }
    float dx[B32_ROWS_MAX_BLOCKS + 4], sx[B32_ROWS_MAX_BLOCKS + 4];
    int32_t off[B32_ROWS_MAX_BLOCKS + 4];
    for (int64_t i = 0; i < nblk + 4; i++) {
        dx[i] = i < nblk ? b32_half(X + i * xb, 0) : 0.0f;
        sx[i] = i < nblk && b32_min(t) ? b32_half(X + i * xb, 2) : 0.0f;
        off[i] = 0;
        if (i < nblk && b32_offset(t)) {
            const __m256i y = _mm256_loadu_si256((const __m256i *)(X + i * xb + b32_xqs(t)));
            off[i] = b32_offset(t) * hsum_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), y), _mm256_set1_epi16(1)));
        }
    }
    b32_pair_group pg[b32_paired(t) ? B32_ROWS_MAX_BLOCKS / 4 : 1];
    if (b32_paired(t))
        for (int64_t i = 0; i + 4 <= nblk; i += 4) b32_pair_pack(X + i * xb, dx + i, sx + i, off + i, &pg[i / 4], t);
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t *a = W + r * wrow;
        __m128 acc = _mm_setzero_ps();   // lane c: chain c
        int64_t i = 0;
        if (b32_paired(t)) {
            __m256 acc8 = _mm256_setzero_ps();
            for (; i + 4 <= nblk; i += 4) {
                ra_prefetch_ahead(a + i * wb, 4 * (size_t)wb);
                acc8 = rows_b32_pairs(a + i * wb, &pg[i / 4], acc8, t);
            }
            acc = _mm256_castps256_ps128(_mm256_permutevar8x32_ps(acc8, _mm256_setr_epi32(0, 4, 2, 6, 0, 4, 2, 6)));
        }
        for (; i + 4 <= nblk; i += 4) {
            ra_prefetch_ahead(a + i * wb, 4 * (size_t)wb);
            acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, off + i, 4, acc, t);
        }
        switch (nblk - i) {
        case 1: acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, off + i, 1, acc, t); break;
        case 2: acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, off + i, 2, acc, t); break;
        case 3: acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, off + i, 3, acc, t); break;
        default: break;
        }
        const __m128 h = _mm_add_ps(acc, _mm_movehdup_ps(acc));
        out[r] = _mm_cvtss_f32(_mm_add_ss(h, _mm_movehl_ps(h, h)));
    }
}
RA_AVX2 static void rows_q8_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out) { rows_b32(n, w, wrow, rows, x, out, B32_Q8_0); }
RA_AVX2 static void rows_q4_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out) { rows_b32(n, w, wrow, rows, x, out, B32_Q4_0); }
RA_AVX2 static void rows_q5_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out) { rows_b32(n, w, wrow, rows, x, out, B32_Q5_0); }
RA_AVX2 static void rows_q4_1(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out) { rows_b32(n, w, wrow, rows, x, out, B32_Q4_1); }
RA_AVX2 static void rows_q5_1(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, float *out) { rows_b32(n, w, wrow, rows, x, out, B32_Q5_1); }

RA_AVX2 static float dot_q8_0(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q8_0); }
RA_AVX2 static float dot_q4_0(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q4_0); }
RA_AVX2 static float dot_q5_0(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q5_0); }
RA_AVX2 static float dot_q4_1(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q4_1); }
RA_AVX2 static float dot_q5_1(int64_t n, const void *w, const void *x) { return dot_b32(n, w, x, B32_Q5_1); }

RA_AVX2 static float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1), two = _mm256_set1_epi8(2);
    // Per super-block integer sums, scaled and accumulated in two scalars (scales, mins) with fma: the
    // float order of ggml's repacked Q5_K kernels, identical on every path here.
    float sacc = 0, smin = 0;
    __m256i pick[8];
    for (int j = 0; j < 8; j++) pick[j] = _mm256_set1_epi16((short)(0x0100 * (2 * j + 1) + 2 * j));
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q5_k));
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));   // 8 scales, 8 mins
        const float dy = b[i].d;
        // mins: sum_j m[j] * (bsums[2j] + bsums[2j+1])
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i bs2 = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        __m128i pm = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), bs2);
        pm = _mm_add_epi32(pm, _mm_unpackhi_epi64(pm, pm));
        pm = _mm_add_epi32(pm, _mm_shuffle_epi32(pm, 1));
        smin = __builtin_fmaf((float)_mm_cvtsi128_si32(pm), ra_f16_table[a[i].dmin] * dy, smin);
        const __m256i sc2 = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm16));   // scales in both halves
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
            const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_shuffle_epi8(sc2, pick[2 * g]));
            const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), _mm256_shuffle_epi8(sc2, pick[2 * g + 1]));
            si = _mm256_add_epi32(si, _mm256_add_epi32(p0, p1));
        }
        sacc = __builtin_fmaf((float)hsum_epi32(si), ra_f16_table[a[i].d] * dy, sacc);
    }
    return sacc - smin;
}

// ---------------------------------------------------------------------------------------------
// One weight row against up to 4 activation rows: the weight blocks are decoded once for all of
// them (prompt processing). The *_m bodies are instantiated for nx = 1..4 so their loops unroll.

#define RA_MULTI_WRAPPERS(name)                                                                        \
    RA_AVX2 static void name(int64_t n, const void *w, const void *x, int64_t xs, int nx, float *out, int64_t os) { \
        switch (nx) {                                                                                  \
        case 1: name##_m(n, w, x, xs, out, os, 1); break;                                              \
        case 2: name##_m(n, w, x, xs, out, os, 2); break;                                              \
        case 3: name##_m(n, w, x, xs, out, os, 3); break;                                              \
        default: name##_m(n, w, x, xs, out, os, 4); break;                                             \
        }                                                                                              \
    }

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

// One activation row (decode), in q4_k_rows' order: per super-block I and M reduced together in one vector, then the
// two fmas in scalar.
RA_AVX2 static float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256i pick[8];
    for (int j = 0; j < 8; j++) pick[j] = _mm256_set1_epi16((short)(0x0100 * (2 * j + 1) + 2 * j));
    float acc = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q4_k));
        uint32_t u[4];
        ra_unpack_scales_k4_words(a[i].scales, u);
        const __m256i sm16 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));   // 8 scales, 8 mins
        // mins: sum_j m[j] * (bsums[2j] + bsums[2j+1])
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m128i pm = _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        const __m256i sc2 = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm16));   // scales in both halves
        __m256i si = _mm256_setzero_si256();
        for (int g = 0; g < 4; g++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(a[i].qs + 32 * g));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b[i].qs + 64 * g + 32));
            const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_shuffle_epi8(sc2, pick[2 * g]));
            const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), _mm256_shuffle_epi8(sc2, pick[2 * g + 1]));
            si = _mm256_add_epi32(si, _mm256_add_epi32(p0, p1));
        }
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

// Half h (elements 128h..128h+127) of a Q6_K block as 4 vectors of 32 quants 0..63 in element order.
RA_AVX2_INLINE void q6_k_quants(const blk_q6_k *a, int h, __m256i q[4]) {
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    const __m256i l0 = _mm256_loadu_si256((const __m256i *)(a->ql + 64 * h));
    const __m256i l1 = _mm256_loadu_si256((const __m256i *)(a->ql + 64 * h + 32));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(a->qh + 32 * h));
    q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
    q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
    q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
    q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
}

// Q6_K against up to 4 activation rows (dot_q6_k is this with one row): per super-block each row's exact int32 sum
// (the offset 32 included), then acc = fma(sum, d · d_x, acc) in float, super-block after super-block: the order of
// the 8-row panel kernel (ra_matmul_q6_k_avx2). The 4 rows' sums sit side by side in one vector for one fma.
RA_AVX2_INLINE void q6_k_rows(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx, const int pf) {
    const blk_q6_k *a = w;
    const blk_q8_k *b[4];
    for (int k = 0; k < nx; k++) b[k] = (const blk_q8_k *)((const uint8_t *)x + k * xs);
    __m128 acc = _mm_setzero_ps();
    // picks int16 lane 0 of each 128-bit half's dword into the low half, lane 1 into the high half
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                          2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    for (int64_t i = 0; i < n / QK_K; i++) {
        if (pf) ra_prefetch_ahead(a + i, sizeof(blk_q6_k));
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a[i].scales));
        __m256i si[4];
        float dx[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++) si[k] = _mm256_setzero_si256();
        for (int k = 0; k < nx; k++) {
            // the "- 32" of every quant: 32 * sum_k sc[k] * bsums[k]
            const __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)b[k][i].bsums));
            si[k] = _mm256_sub_epi32(si[k], _mm256_slli_epi32(corr, 5));
            dx[k] = b[k][i].d;
        }
        for (int h = 0; h < 2; h++) {
            __m256i q[4];
            q6_k_quants(a + i, h, q);
            for (int c = 0; c < 4; c++) {   // scales 2c' (first 16 elements) and 2c'+1 (next 16), c' = 4h + c
                const __m256i s = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(4 * h + c)), pick);
                for (int k = 0; k < nx; k++) {
                    const __m256i p = _mm256_maddubs_epi16(q[c], _mm256_loadu_si256((const __m256i *)(b[k][i].qs + 128 * h + 32 * c)));
                    si[k] = _mm256_add_epi32(si[k], _mm256_madd_epi16(p, s));
                }
            }
        }
        const __m128 d = _mm_mul_ps(_mm_broadcast_ss(&ra_f16_table[a[i].d]), _mm_loadu_ps(dx));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(hsum4_epi32(si[0], si[1], si[2], si[3])), d, acc);
    }
    float r[4];
    _mm_storeu_ps(r, acc);
    for (int k = 0; k < nx; k++) out[k * os] = r[k];
}
RA_AVX2_INLINE void multi_q6_k_m(int64_t n, const void *w, const void *x, int64_t xs, float *out, int64_t os, const int nx) {
    q6_k_rows(n, w, x, xs, out, os, nx, 0);
}
RA_MULTI_WRAPPERS(multi_q6_k)

// One activation row (decode), in q6_k_rows' order: per super-block the int32 sum, then one scalar fma.
RA_AVX2 static float dot_q6_k(int64_t n, const void *w, const void *x) {
    const blk_q6_k *a = w;
    const blk_q8_k *b = x;
    // picks int16 lane 0 of each 128-bit half's dword into the low half, lane 1 into the high half
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                          2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    float acc = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        ra_prefetch_ahead(a + i, sizeof(blk_q6_k));
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a[i].scales));
        // the "- 32" of every quant: 32 * sum_k sc[k] * bsums[k]
        const __m256i corr = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)b[i].bsums));
        __m256i si = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5));
        for (int h = 0; h < 2; h++) {
            __m256i q[4];
            q6_k_quants(a + i, h, q);
            const int8_t *y = b[i].qs + 128 * h;
            for (int k = 0; k < 4; k++) {
                const __m256i sc = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(4 * h + k)), pick);
                const __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(y + 32 * k)));
                si = _mm256_add_epi32(si, _mm256_madd_epi16(p, sc));
            }
        }
        acc = __builtin_fmaf((float)hsum_epi32(si), ra_f16_table[a[i].d] * b[i].d, acc);
    }
    return acc;
}

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

// MARK: - Q4_K and Q5_K batches: panels of 8 weight rows × 4 activation rows
//
// The 256-bit counterpart of the VNNI panels (dot_avx512_impl.h). Each call repacks its weight rows, 8 at a time,
// into a panel in the thread's scratch: per super-block and group of 4 elements (a quartet), one vector holds
// those 4 quants (0..15) of all 8 rows, so the 8 int32 lanes are the 8 weight rows and no horizontal sums are
// needed. A step takes one such vector and, for each of 4 activation rows, one vpmaddubsw against the row's
// 4 int8 activations broadcast. The int16 pair sums (at most 2 · 15 · 128 = 3840) of the 8 quartets of a
// sub-block are added in int16 (at most 30720, no saturation), then one vpmaddwd against the sub-block's scale
// of each row (an int16 pair per lane) brings them to int32; the super-block's integer sum is scaled by d in
// float. The mins meet the activation block sums in one vpmaddwd per pair of sub-blocks. Per quartet and
// activation row that is one broadcast load, one vpmaddubsw and one vpaddw; 4 activation rows per step keep
// the 4 accumulators of each kind (float, int32, int16) and the weight vector within the 16 registers.
// Q5_K's panels are the same with the 5th bit in each quant (0..31): half a sub-block per vpmaddwd.

enum { PANEL8_ROWS = 8, PANEL8_GROUP = 4 };

// One super-block of a panel (32-byte aligned): q[e] byte 4r + t = quant of row r, element 4e + t; sc[j][r] =
// scale of sub-block j of row r in both int16 halves; mins[p][r] = min of sub-block 2p (low half) and 2p+1
// (high half); d[r], dmin[r].
typedef struct {
    uint8_t q[64][32];
    uint32_t sc[8][8];
    uint32_t mins[4][8];
    float d[8], dmin[8];
} q4_k_panel8;
_Static_assert(sizeof(q4_k_panel8) % 32 == 0, "q4_k_panel8 keeps 32-byte alignment");
_Static_assert(sizeof(q4_k_panel8) <= RA_Q4_K_BATCH_PANEL_BYTES, "RA_Q4_K_BATCH_SCRATCH covers the AVX2 panel kernel");
// Activation rows: ra_q4_k_xsum (kernels_internal.h), shared with the VNNI kernel.

// Transposes an 8 × 8 matrix of 32-bit elements: t[j] lane i = r[i] lane j (4 × 4 blocks inside the 128-bit
// lanes by unpacks, then the lanes by permutes).
RA_AVX2_INLINE void transpose8x8_epi32(const __m256i r[8], __m256i t[8]) {
    __m256i a[8], b[8];
    for (int i = 0; i < 4; i++) {
        a[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {   // b[4i + m], 128-bit lane L: column 4L + m of rows 4i..4i+3
        b[4 * i] = _mm256_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 1] = _mm256_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 2] = _mm256_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
        b[4 * i + 3] = _mm256_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
    }
    for (int m = 0; m < 4; m++) {
        t[m] = _mm256_permute2x128_si256(b[m], b[4 + m], 0x20);
        t[4 + m] = _mm256_permute2x128_si256(b[m], b[4 + m], 0x31);
    }
}

// The first 16 bytes at offset off of 8 rows (rows past nrows zero), transposed: h[c] lane r = bytes 4c..4c+3
// of row r.
RA_AVX2_INLINE void block_heads8(const uint8_t *W, int64_t wrow, int64_t off, int nrows, __m256i h[4]) {
    __m128i raw[8];
    for (int r = 0; r < PANEL8_ROWS; r++)
        raw[r] = r < nrows ? _mm_loadu_si128((const __m128i *)(W + r * wrow + off)) : _mm_setzero_si128();
    __m256i v[4];   // rows r (low lane) and r + 4 (high lane)
    for (int r = 0; r < 4; r++) v[r] = _mm256_inserti128_si256(_mm256_castsi128_si256(raw[r]), raw[r + 4], 1);
    const __m256i a0 = _mm256_unpacklo_epi32(v[0], v[1]), a1 = _mm256_unpackhi_epi32(v[0], v[1]);
    const __m256i a2 = _mm256_unpacklo_epi32(v[2], v[3]), a3 = _mm256_unpackhi_epi32(v[2], v[3]);
    h[0] = _mm256_unpacklo_epi64(a0, a2);
    h[1] = _mm256_unpackhi_epi64(a0, a2);
    h[2] = _mm256_unpacklo_epi64(a1, a3);
    h[3] = _mm256_unpackhi_epi64(a1, a3);
    // lane order of h[c] is rows 0, 1, 2, 3 | 4, 5, 6, 7
}

// Prefetch for a panel's packing, which is the first touch of the weights in a batch and waits on memory without it:
// the blocks it will read about RA_PREFETCH_DISTANCE bytes later, block i + ahead of the 8 rows, or past the row's
// end the same block of the next panel's rows (the chunk of rows goes on there; a prefetch past the matrix is harmless).
RA_AVX2_INLINE void panel8_prefetch(const uint8_t *W, int64_t wrow, int64_t nblk, int64_t i, int64_t bb) {
    const int64_t ahead = (RA_PREFETCH_DISTANCE + PANEL8_ROWS * bb - 1) / (PANEL8_ROWS * bb);
    const int64_t j = i + ahead;
    const uintptr_t base = (uintptr_t)W + (uintptr_t)(j < nblk ? j * bb : PANEL8_ROWS * wrow + (j - nblk) * bb);
#ifndef RA_NO_PREFETCH
    for (int r = 0; r < PANEL8_ROWS; r++)
        for (int64_t o = 0; o < bb; o += 64) __builtin_prefetch((const void *)(base + (uintptr_t)(r * wrow + o)), 0, 3);
#else
    (void)base;
#endif
}

// Repacks rows [0, nrows) (nrows <= 8) of W into ns panel super-blocks; rows past nrows are zero. five: the rows are
// Q5_K (the same head of d, dmin and 12 bytes of scales and mins; the 5th bit of each quant from qh, as dot_q5_k
// takes it: bit 2g of a qh byte for the low nibbles of group g, bit 2g + 1 for the high ones), else Q4_K.
RA_AVX2_INLINE void k4_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel, const int five) {
    q4_k_panel8 *p = panel;
    const int64_t bb = five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k);
    const int64_t qs = five ? (int64_t)offsetof(blk_q5_k, qs) : (int64_t)offsetof(blk_q4_k, qs);
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1), lo16 = _mm256_set1_epi32(0xFFFF);
    const __m256i k63 = _mm256_set1_epi32(63), k15 = _mm256_set1_epi32(15), k3 = _mm256_set1_epi32(3);
    for (int64_t i = 0; i < ns; i++) {
        q4_k_panel8 *pi = p + i;
        panel8_prefetch(W, wrow, ns, i, bb);
        // d, dmin and the 12 bytes of 6-bit scales and mins of all 8 rows at once (as ra_unpack_scales_k4).
        __m256i h[4];
        block_heads8(W, wrow, i * bb, nrows, h);
        // halves: packus (in-lane) gives d of rows 0..3, dmin 0..3 | d 4..7, dmin 4..7; the permute puts d first
        const __m256i dd = _mm256_permute4x64_epi64(_mm256_packus_epi32(_mm256_and_si256(h[0], lo16), _mm256_srli_epi32(h[0], 16)), 0xD8);
        _mm256_store_ps(pi->d, _mm256_cvtph_ps(_mm256_castsi256_si128(dd)));
        _mm256_store_ps(pi->dmin, _mm256_cvtph_ps(_mm256_extracti128_si256(dd, 1)));
        const __m256i s0 = h[1], s1 = h[2], s2 = h[3];   // bytes 0..3, 4..7, 8..11 of the scales
        __m256i m[8];
        for (int j = 0; j < 4; j++) {
            const __m256i sc_lo = _mm256_and_si256(_mm256_srli_epi32(s0, 8 * j), k63);
            const __m256i sc_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(s2, 8 * j), k15),
                                                  _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(s0, 8 * j + 6), k3), 4));
            m[j] = _mm256_and_si256(_mm256_srli_epi32(s1, 8 * j), k63);
            m[j + 4] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(s2, 8 * j + 4), k15),
                                       _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(s1, 8 * j + 6), k3), 4));
            _mm256_store_si256((__m256i *)pi->sc[j], _mm256_or_si256(sc_lo, _mm256_slli_epi32(sc_lo, 16)));
            _mm256_store_si256((__m256i *)pi->sc[j + 4], _mm256_or_si256(sc_hi, _mm256_slli_epi32(sc_hi, 16)));
        }
        for (int q = 0; q < 4; q++) _mm256_store_si256((__m256i *)pi->mins[q], _mm256_or_si256(m[2 * q], _mm256_slli_epi32(m[2 * q + 1], 16)));
        // 32 bytes of qs of a row are 64 elements: low nibbles 64g..64g+31, high 64g+32..64g+63, one vector of 8
        // quartets each; across the 8 rows that is an 8 × 8 matrix of quartets to transpose.
        for (int g = 0; g < 4; g++) {
            __m256i lo[8], hi[8], cols[8];
            for (int r = 0; r < PANEL8_ROWS; r++) {
                if (r >= nrows) { lo[r] = hi[r] = _mm256_setzero_si256(); continue; }
                const uint8_t *a = W + r * wrow + i * bb;
                const __m256i q = _mm256_loadu_si256((const __m256i *)(a + qs + 32 * g));
                lo[r] = _mm256_and_si256(q, m4);
                hi[r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                if (five) {
                    const __m256i qh = _mm256_loadu_si256((const __m256i *)((const blk_q5_k *)(const void *)a)->qh);
                    lo[r] = _mm256_or_si256(lo[r], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), one), 4));
                    hi[r] = _mm256_or_si256(hi[r], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g + 1), one), 4));
                }
            }
            transpose8x8_epi32(lo, cols);
            for (int e = 0; e < 8; e++) _mm256_store_si256((__m256i *)pi->q[16 * g + e], cols[e]);
            transpose8x8_epi32(hi, cols);
            for (int e = 0; e < 8; e++) _mm256_store_si256((__m256i *)pi->q[16 * g + 8 + e], cols[e]);
        }
    }
}

RA_AVX2 static void q4_k_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    k4_pack_panel8(W, wrow, ns, nrows, panel, 0);
}
RA_AVX2 static void q5_k_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    k4_pack_panel8(W, wrow, ns, nrows, panel, 1);
}

// Lanes [0, nr) of v to out (a partial panel at the end of the row range).
RA_AVX2_INLINE void store_rows8(float *out, __m256 v, int nr) {
    if (nr == PANEL8_ROWS) { _mm256_storeu_ps(out, v); return; }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane), v);
}

// 4 int8 activations broadcast to every lane.
RA_AVX2_INLINE __m256i bcast4(const int8_t *y) {
    int32_t v;
    memcpy(&v, y, 4);
    return _mm256_set1_epi32(v);
}

// Repacks weight rows [0, nrows) (nrows <= 8) of W, nblk blocks each, into a panel; runs a panel against nx (1..4)
// activation rows xs bytes apart, with side data (per activation row, computed once per call), into out[k * os + r]
// for rows r < nr.
typedef void (*panel8_pack_fn)(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel);
typedef void (*panel8_run_fn)(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row,
                              float *out, int64_t os, int nr, int nx);

// Rows [r0, r1) × nb activation rows: each panel of 8 weight rows is packed once and run against every group of
// 4 activation rows. side: side_row bytes per activation row (or NULL).
RA_AVX2 static void panel8_matmul(const uint8_t *W, int64_t wrow, int64_t nblk, const uint8_t *X, int64_t xrow, int64_t nb,
                                  const uint8_t *side, int64_t side_row, float *out, int64_t os, int64_t r0, int64_t r1,
                                  void *panel, panel8_pack_fn pack, panel8_run_fn run) {
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL8_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL8_ROWS ? r1 - p0 : PANEL8_ROWS);
        pack(W + p0 * wrow, wrow, nblk, nr, panel);
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL8_GROUP) {
            const int nx = (int)(nb - b0 < PANEL8_GROUP ? nb - b0 : PANEL8_GROUP);
            run(nblk, panel, X + b0 * xrow, xrow, side ? side + b0 * side_row : NULL, side_row, out + b0 * os + p0, os, nr, nx);
        }
    }
}

// One panel × nx (1..4) activation rows xs bytes apart: out[k * os + r] for rows r < nr. five (Q5_K): quants 0..31,
// so a pair sum reaches 2 · 31 · 128 = 7936 and 4 quartets (half a sub-block) are added in int16 before each
// vpmaddwd; the float order is dot_q5_k's (two accumulators, scales and mins, subtracted at the end).
RA_AVX2_INLINE void k4_panel8_m(int64_t ns, const q4_k_panel8 *p, const uint8_t *x, int64_t xs, const ra_q4_k_xsum *xsum,
                                float *out, int64_t os, int nr, const int nx, const int five) {
    const int run = five ? 4 : 8;   // quartets added in int16
    __m256 acc[PANEL8_GROUP], accm[PANEL8_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = accm[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const q4_k_panel8 *pi = p + i;
        const int8_t *y[PANEL8_GROUP];
        __m256i si[PANEL8_GROUP];
        for (int k = 0; k < nx; k++) {
            y[k] = ((const blk_q8_k *)(const void *)(x + k * xs))[i].qs;
            si[k] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 8; j++) {
            const __m256i sc = _mm256_load_si256((const __m256i *)pi->sc[j]);
            for (int e0 = 0; e0 < 8; e0 += run) {
                __m256i s[PANEL8_GROUP];
                for (int k = 0; k < nx; k++) s[k] = _mm256_setzero_si256();
                for (int e = e0; e < e0 + run; e++) {
                    const __m256i wv = _mm256_load_si256((const __m256i *)pi->q[8 * j + e]);
                    for (int k = 0; k < nx; k++) s[k] = _mm256_add_epi16(s[k], _mm256_maddubs_epi16(wv, bcast4(y[k] + 32 * j + 4 * e)));
                    // Keeps the sums in registers step by step: gcc otherwise reassociates the integer adds, computes
                    // all 32 products of a sub-block first and spills them (gcc 12: 1.55 -> 1.8 GB/s at nb = 32; clang
                    // compiles both forms alike).
                    for (int k = 0; k < nx; k++) __asm__("" : "+x"(s[k]));
                }
                for (int k = 0; k < nx; k++) si[k] = _mm256_add_epi32(si[k], _mm256_madd_epi16(s[k], sc));
            }
        }
        const __m256 d = _mm256_load_ps(pi->d), dmin = _mm256_load_ps(pi->dmin);
        for (int k = 0; k < nx; k++) {
            const ra_q4_k_xsum *xk = xsum + k * ns + i;
            __m256i mi = _mm256_madd_epi16(_mm256_load_si256((const __m256i *)pi->mins[0]), _mm256_set1_epi32((int)xk->bs[0]));
            for (int q = 1; q < 4; q++)
                mi = _mm256_add_epi32(mi, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)pi->mins[q]), _mm256_set1_epi32((int)xk->bs[q])));
            const __m256 dx = _mm256_set1_ps(xk->d);
            // in float exactly as the type's dot: acc = fma(I, d · d_x, acc), then Q4_K acc = fnmadd(M, dmin · d_x, acc),
            // Q5_K accm = fma(M, dmin · d_x, accm)
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si[k]), _mm256_mul_ps(d, dx), acc[k]);
            if (five) accm[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_mul_ps(dmin, dx), accm[k]);
            else acc[k] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_mul_ps(dmin, dx), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) store_rows8(out + k * os, five ? _mm256_sub_ps(acc[k], accm[k]) : acc[k], nr);
}

RA_AVX2_INLINE void k4_panel8_run(int64_t ns, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side,
                                  float *out, int64_t os, int nr, int nx, const int five) {
    const q4_k_panel8 *p = panel;
    const ra_q4_k_xsum *xsum = (const ra_q4_k_xsum *)(const void *)side;   // ns sums per activation row
    switch (nx) {
    case 4: k4_panel8_m(ns, p, x, xs, xsum, out, os, nr, 4, five); break;
    case 3: k4_panel8_m(ns, p, x, xs, xsum, out, os, nr, 3, five); break;
    case 2: k4_panel8_m(ns, p, x, xs, xsum, out, os, nr, 2, five); break;
    default: k4_panel8_m(ns, p, x, xs, xsum, out, os, nr, 1, five); break;
    }
}

RA_AVX2 static int k4_matmul(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                             int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, panel8_pack_fn pack, panel8_run_fn run,
                             const int five) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q4_K_BATCH_SCRATCH(n, nb)) return 0;
    const int64_t wrow = ns * (five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k)), xrow = ns * (int64_t)sizeof(blk_q8_k);
    const uint8_t *W = w, *X = x;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    q4_k_panel8 *panel = (q4_k_panel8 *)(void *)base;
    ra_q4_k_xsum *xsum = (ra_q4_k_xsum *)(void *)(base + ns * (int64_t)sizeof(q4_k_panel8));
    ra_q4_k_xsums(X, xrow, ns, nb, xsum);
    panel8_matmul(W, wrow, ns, X, xrow, nb, (const uint8_t *)xsum, ns * (int64_t)sizeof(ra_q4_k_xsum), out, out_stride, r0, r1,
                  panel, pack, run);
    return 1;
}

RA_AVX2 static void q4_k_panel8_run(int64_t ns, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row,
                                    float *out, int64_t os, int nr, int nx) {
    (void)side_row;
    k4_panel8_run(ns, panel, x, xs, side, out, os, nr, nx, 0);
}
RA_AVX2 static void q5_k_panel8_run(int64_t ns, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row,
                                    float *out, int64_t os, int nr, int nx) {
    (void)side_row;
    k4_panel8_run(ns, panel, x, xs, side, out, os, nr, nx, 1);
}

int ra_matmul_q4_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q4_k_pack_panel8, q4_k_panel8_run, 0);
}

int ra_matmul_q5_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q5_k_pack_panel8, q5_k_panel8_run, 1);
}

// MARK: - Batches of the 32-element block types: the same panels of 8 weight rows, one scale per block
//
// Per block, 8 vectors of quartets (the quants as b32_quants gives them, int8) and the 8 rows' d (and m). vpmaddubsw
// needs an unsigned operand: for the signed types the step takes |w| and gives each broadcast activation the sign of
// the weight it meets (|w| · sign(w)·x, exact since Q8_0 activations are never -128); Q4_1/Q5_1 quants are unsigned
// already. A Q8_0 pair sum reaches 2 · 128 · 127 = 32512, so each goes to int32 at once (vpmaddwd with ones); the
// others are added in int16 first (Q4_0, Q5_0, Q4_1: 8 quartets, at most 8 · 2 · 16 · 127 = 32512; Q5_1: 4
// quartets, 4 · 2 · 31 · 127 = 31496). The block's int32 sum goes to its chain as in dot_b32. 4 activation rows per
// step, as for Q4_K.

typedef struct {
    int8_t q[8][32];   // q[e] byte 4r + t = quant of row r, element 4e + t
    float dw[8], m[8];
} b32_panel8;
_Static_assert(sizeof(b32_panel8) % 32 == 0 && sizeof(b32_panel8) <= RA_Q8_0_BATCH_PANEL_BYTES, "b32_panel8 size");

// Q4_0 and Q4_1 panels of 8 full rows without the per-row unpacking and 8×8 transpose: a block's 16 bytes of nibbles
// are 4 dwords, dword e holding elements 4e..4e+3 in its low nibbles and 4e+16..4e+19 in its high ones, so a 4×4
// transpose of dwords (rows r and r + 4 in the two 128-bit lanes) gives quartets e and e + 4 of all 8 rows at once.
// The scales come as halves through one gather and F16C (exact, as the table lookups of the generic pack).
RA_AVX2_INLINE void b32_pack_panel8_q4(const uint8_t *W, int64_t wrow, int64_t nblk, void *panel, const int t) {
    b32_panel8 *p = panel;
    const int wb = b32_wbytes(t), qs = t == B32_Q4_1 ? 4 : 2;
    const __m256i low = _mm256_set1_epi8(0x0F), off = _mm256_set1_epi8(t == B32_Q4_0 ? 8 : 0);
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)wrow));
    // per 128-bit lane: the low halves of its 4 dwords (d), then the high ones (m)
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                           0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    for (int64_t j = 0; j < nblk; j++) {
        const uint8_t *a = W + j * wb;
        __m256i v[4];
        for (int r = 0; r < 4; r++)
            v[r] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(a + r * wrow + qs))),
                                           _mm_loadu_si128((const __m128i *)(const void *)(a + (r + 4) * wrow + qs)), 1);
        const __m256i t0 = _mm256_unpacklo_epi32(v[0], v[1]), t1 = _mm256_unpackhi_epi32(v[0], v[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(v[2], v[3]), t3 = _mm256_unpackhi_epi32(v[2], v[3]);
        const __m256i d4[4] = { _mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                                _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3) };
        for (int e = 0; e < 4; e++) {
            _mm256_store_si256((__m256i *)p[j].q[e], _mm256_sub_epi8(_mm256_and_si256(d4[e], low), off));
            _mm256_store_si256((__m256i *)p[j].q[e + 4], _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(d4[e], 4), low), off));
        }
        const __m256i dm = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(_mm256_i32gather_epi32((const int *)(const void *)a, idx, 1), split),
                                                    0xD8);   // lanes 0, 2 | 1, 3: 8 d halves, then 8 m halves
        _mm256_store_ps(p[j].dw, _mm256_cvtph_ps(_mm256_castsi256_si128(dm)));
        _mm256_store_ps(p[j].m, t == B32_Q4_1 ? _mm256_cvtph_ps(_mm256_extracti128_si256(dm, 1)) : _mm256_setzero_ps());
    }
}

RA_AVX2_INLINE void b32_pack_panel8(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel, const int t) {
    b32_panel8 *p = panel;
    const int wb = b32_wbytes(t);
    if ((t == B32_Q4_0 || t == B32_Q4_1) && nrows == PANEL8_ROWS && wrow <= INT32_MAX / 8) {
        b32_pack_panel8_q4(W, wrow, nblk, panel, t);
        return;
    }
    for (int64_t j = 0; j < nblk; j++) {
        __m256i rows[8], cols[8];
        float d[8], m[8];
        for (int r = 0; r < PANEL8_ROWS; r++) {
            if (r >= nrows) {
                rows[r] = _mm256_setzero_si256();
                d[r] = m[r] = 0;
                continue;
            }
            const uint8_t *a = W + r * wrow + j * wb;
            rows[r] = b32_quants(a, t);
            d[r] = b32_half(a, 0);
            m[r] = b32_min(t) ? b32_half(a, 2) : 0.0f;
        }
        transpose8x8_epi32(rows, cols);
        for (int e = 0; e < 8; e++) _mm256_store_si256((__m256i *)p[j].q[e], cols[e]);
        _mm256_store_ps(p[j].dw, _mm256_loadu_ps(d));
        _mm256_store_ps(p[j].m, _mm256_loadu_ps(m));
    }
}

// One panel × nx (1..4) activation rows xs bytes apart (side: per row nblk d then nblk s, as floats).
RA_AVX2_INLINE void b32_panel8_m(int64_t nblk, const b32_panel8 *p, const uint8_t *x, int64_t xs, const float *side,
                                 float *out, int64_t os, int nr, const int nx, const int t) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int xb = b32_xbytes(t), xq = b32_xqs(t);
    const int run = t == B32_Q8_0 ? 1 : t == B32_Q5_1 ? 4 : 8;   // quartets added in int16
    __m256 acc[PANEL8_GROUP][4];   // dot_b32's 4 chains (block j into chain j mod 4) per activation row
    for (int k = 0; k < nx; k++)
        for (int c = 0; c < 4; c++) acc[k][c] = _mm256_setzero_ps();
    for (int64_t j = 0; j < nblk; j++) {
        const int c = (int)(j & 3);
        const b32_panel8 *pj = p + j;
        __m256i s[PANEL8_GROUP];
        const int8_t *y[PANEL8_GROUP];
        for (int k = 0; k < nx; k++) {
            s[k] = _mm256_setzero_si256();
            y[k] = (const int8_t *)(x + k * xs + j * xb + xq);
        }
        for (int e0 = 0; e0 < 8; e0 += run) {
            __m256i s16[PANEL8_GROUP];
            for (int k = 0; k < nx; k++) s16[k] = _mm256_setzero_si256();
            for (int e = e0; e < e0 + run; e++) {
                const __m256i wv = _mm256_load_si256((const __m256i *)pj->q[e]);
                const __m256i aw = b32_min(t) ? wv : _mm256_sign_epi8(wv, wv);
                for (int k = 0; k < nx; k++) {
                    const __m256i yv = b32_min(t) ? bcast4(y[k] + 4 * e) : _mm256_sign_epi8(bcast4(y[k] + 4 * e), wv);
                    s16[k] = _mm256_add_epi16(s16[k], _mm256_maddubs_epi16(aw, yv));
                }
                // (keeps gcc from reassociating the int16 adds and spilling the products, as in q4_k_panel8_m)
                for (int k = 0; k < nx; k++) __asm__("" : "+x"(s16[k]));
            }
            for (int k = 0; k < nx; k++) s[k] = _mm256_add_epi32(s[k], _mm256_madd_epi16(s16[k], ones));
        }
        const __m256 dw = _mm256_load_ps(pj->dw);
        for (int k = 0; k < nx; k++) {
            const float *sk = side + 2 * k * nblk;
            acc[k][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[k]), _mm256_mul_ps(dw, _mm256_broadcast_ss(sk + j)), acc[k][c]);
            if (b32_min(t)) acc[k][c] = _mm256_fmadd_ps(_mm256_load_ps(pj->m), _mm256_broadcast_ss(sk + nblk + j), acc[k][c]);
        }
    }
    for (int k = 0; k < nx; k++)
        store_rows8(out + k * os, _mm256_add_ps(_mm256_add_ps(acc[k][0], acc[k][1]), _mm256_add_ps(acc[k][2], acc[k][3])), nr);
}

RA_AVX2_INLINE void b32_panel8_run(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side,
                                   float *out, int64_t os, int nr, int nx, const int t) {
    const b32_panel8 *p = panel;
    const float *sd = (const float *)(const void *)side;
    switch (nx) {
    case 4: b32_panel8_m(nblk, p, x, xs, sd, out, os, nr, 4, t); break;
    case 3: b32_panel8_m(nblk, p, x, xs, sd, out, os, nr, 3, t); break;
    case 2: b32_panel8_m(nblk, p, x, xs, sd, out, os, nr, 2, t); break;
    default: b32_panel8_m(nblk, p, x, xs, sd, out, os, nr, 1, t); break;
    }
}

// The activation scales of nb rows as the panels take them: per row nblk d then nblk s (Q8_0: s = 0), as floats.
// F16C, not ra_f16_table (the same values): ra_matmul_jobs calls this before any kernel has been resolved, and the
// table is only filled then (a first prompt in a process multiplied with zero scales).
RA_AVX2_INLINE void b32_side(const uint8_t *X, int64_t nblk, int64_t nb, float *side, const int t) {
    const int64_t xrow = nblk * b32_xbytes(t);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t j = 0; j < nblk; j++) {
            const uint8_t *blk = X + b * xrow + j * b32_xbytes(t);
            uint16_t h[2];
            memcpy(h, blk, sizeof h);
            side[2 * b * nblk + j] = h2f(h[0]);
            side[2 * b * nblk + nblk + j] = b32_min(t) ? h2f(h[1]) : 0.0f;
        }
}

// side: the scales of the nb activation rows (b32_side), or NULL to compute them here into the scratch.
RA_AVX2 static int b32_matmul(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, panel8_pack_fn pack, panel8_run_fn run,
                              const int t) {
    const int64_t nblk = n / 32;
    if (n % 32 != 0 || nb < 1 || scratch_bytes < RA_Q8_0_BATCH_SCRATCH(n, nb)) return 0;
    const int64_t wrow = nblk * b32_wbytes(t), xrow = nblk * b32_xbytes(t);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    b32_panel8 *panel = (b32_panel8 *)(void *)base;
    if (!side) {
        float *own = (float *)(void *)(base + nblk * (int64_t)sizeof(b32_panel8));
        b32_side(x, nblk, nb, own, t);
        side = own;
    }
    panel8_matmul(w, wrow, nblk, x, xrow, nb, (const uint8_t *)side, 2 * nblk * (int64_t)sizeof(float), out, out_stride, r0, r1,
                  panel, pack, run);
    return 1;
}

#define RA_B32_BATCH(name, t)                                                                                          \
    RA_AVX2 static void name##_pack(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {            \
        b32_pack_panel8(W, wrow, nblk, nrows, panel, t);                                                               \
    }                                                                                                                  \
    RA_AVX2 static void name##_run(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side,  \
                                   int64_t side_row, float *out, int64_t os, int nr, int nx) {                         \
        (void)side_row;                                                                                                \
        b32_panel8_run(nblk, panel, x, xs, side, out, os, nr, nx, t);                                                  \
    }                                                                                                                  \
    int ra_matmul_##name##_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,    \
                                int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {                     \
        return b32_matmul(w, n, x, NULL, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack, name##_run, t); \
    }                                                                                                                  \
    RA_AVX2 static int name##_side_matmul(const void *w, int64_t n, const void *x, const float *side, int64_t nb,      \
                                          float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch,    \
                                          int64_t scratch_bytes) {                                                     \
        return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack, name##_run, t); \
    }
RA_B32_BATCH(q8_0, B32_Q8_0)
RA_B32_BATCH(q4_0, B32_Q4_0)
RA_B32_BATCH(q5_0, B32_Q5_0)
RA_B32_BATCH(q4_1, B32_Q4_1)
RA_B32_BATCH(q5_1, B32_Q5_1)

static int b32_kind(int weight_type) {
    switch (weight_type) {
    case RA_Q8_0: return B32_Q8_0;
    case RA_Q4_0: return B32_Q4_0;
    case RA_Q5_0: return B32_Q5_0;
    case RA_Q4_1: return B32_Q4_1;
    case RA_Q5_1: return B32_Q5_1;
    default: return -1;
    }
}

RA_AVX2 void ra_b32_side_avx2(int weight_type, const void *x, int64_t n, int64_t nb, float *side) {
    switch (b32_kind(weight_type)) {
    case B32_Q4_1: case B32_Q5_1: b32_side(x, n / 32, nb, side, B32_Q4_1); break;
    case B32_Q8_0: case B32_Q4_0: case B32_Q5_0: b32_side(x, n / 32, nb, side, B32_Q8_0); break;
    default: break;
    }
}

RA_AVX2 int ra_matmul_b32_side_avx2(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                            float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    switch (b32_kind(weight_type)) {
    case B32_Q8_0: return q8_0_side_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q4_0: return q4_0_side_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q5_0: return q5_0_side_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q4_1: return q4_1_side_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q5_1: return q5_1_side_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    default: return 0;
    }
}

// MARK: - Q6_K batches: the same panels of 8 weight rows, 16 sub-blocks of 16 elements with int8 scales
//
// The quants are kept unsigned (0..63, the offset 32 not taken off), so vpmaddubsw applies as for Q4_K; the offset
// is 32 · Σ_j scale_j · (sum of the activations of sub-block j), from the Q8_K block sums by vpmaddwd. A pair sum
// reaches 2 · 63 · 128 = 16128, so two quartets (half a sub-block) are added in int16 before vpmaddwd with the
// sub-block's scale takes them to int32.

// One super-block of a panel: q[e] as for Q4_K (quants 0..63); sc[j][r] = scale j of row r (int16, both halves);
// scp[p][r] = the scales of sub-blocks 2p (low half) and 2p+1 (high half); d[r].
typedef struct {
    uint8_t q[64][32];
    uint32_t sc[16][8];
    uint32_t scp[8][8];
    float d[8];
} q6_k_panel8;
_Static_assert(sizeof(q6_k_panel8) % 32 == 0 && sizeof(q6_k_panel8) <= RA_Q6_K_BATCH_PANEL_BYTES, "q6_k_panel8 size");

RA_AVX2 static void q6_k_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    q6_k_panel8 *p = panel;
    const __m256i lo16 = _mm256_set1_epi32(0xFFFF);
    for (int64_t i = 0; i < ns; i++) {
        q6_k_panel8 *pi = p + i;
        panel8_prefetch(W, wrow, ns, i, (int64_t)sizeof(blk_q6_k));
        // the 16 int8 scales of all 8 rows at once; d row by row
        __m256i hd[4];
        block_heads8(W, wrow, i * (int64_t)sizeof(blk_q6_k) + (int64_t)offsetof(blk_q6_k, scales), nrows, hd);
        for (int r = 0; r < PANEL8_ROWS; r++) pi->d[r] = r < nrows ? ra_f16_table[((const blk_q6_k *)(const void *)(W + r * wrow))[i].d] : 0.0f;
        __m256i sc[16];
        for (int j = 0; j < 16; j++) {   // scale j: byte j % 4 of dword j / 4, sign-extended
            sc[j] = _mm256_and_si256(_mm256_srai_epi32(_mm256_slli_epi32(hd[j / 4], 24 - 8 * (j % 4)), 24), lo16);
            _mm256_store_si256((__m256i *)pi->sc[j], _mm256_or_si256(sc[j], _mm256_slli_epi32(sc[j], 16)));
        }
        for (int q = 0; q < 8; q++) _mm256_store_si256((__m256i *)pi->scp[q], _mm256_or_si256(sc[2 * q], _mm256_slli_epi32(sc[2 * q + 1], 16)));
        // Per half h (128 elements) four vectors of 32 elements in order, as dot_q6_k builds them; across the 8
        // rows each is an 8 × 8 matrix of quartets to transpose.
        for (int h = 0; h < 2; h++) {
            __m256i v[4][8], cols[8];
            for (int r = 0; r < PANEL8_ROWS; r++) {
                if (r >= nrows) { v[0][r] = v[1][r] = v[2][r] = v[3][r] = _mm256_setzero_si256(); continue; }
                __m256i q[4];
                q6_k_quants((const blk_q6_k *)(const void *)(W + r * wrow) + i, h, q);
                for (int c = 0; c < 4; c++) v[c][r] = q[c];
            }
            for (int c = 0; c < 4; c++) {
                transpose8x8_epi32(v[c], cols);
                for (int e = 0; e < 8; e++) _mm256_store_si256((__m256i *)pi->q[32 * h + 8 * c + e], cols[e]);
            }
        }
    }
}

RA_AVX2_INLINE void q6_k_panel8_m(int64_t ns, const q6_k_panel8 *p, const uint8_t *x, int64_t xs, float *out, int64_t os, int nr,
                                  const int nx) {
    __m256 acc[PANEL8_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const q6_k_panel8 *pi = p + i;
        const blk_q8_k *y[PANEL8_GROUP];
        __m256i si[PANEL8_GROUP];
        for (int k = 0; k < nx; k++) {
            y[k] = (const blk_q8_k *)(const void *)(x + k * xs) + i;
            si[k] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 16; j++) {
            const __m256i sc = _mm256_load_si256((const __m256i *)pi->sc[j]);
            for (int half = 0; half < 2; half++) {
                const int e = 4 * j + 2 * half;
                const __m256i w0 = _mm256_load_si256((const __m256i *)pi->q[e]), w1 = _mm256_load_si256((const __m256i *)pi->q[e + 1]);
                for (int k = 0; k < nx; k++) {
                    const __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(y[k]->qs + 4 * e)),
                                                       _mm256_maddubs_epi16(w1, bcast4(y[k]->qs + 4 * e + 4)));
                    si[k] = _mm256_add_epi32(si[k], _mm256_madd_epi16(s, sc));
                }
            }
        }
        const __m256 d = _mm256_load_ps(pi->d);
        for (int k = 0; k < nx; k++) {
            __m256i so = _mm256_setzero_si256();
            for (int q = 0; q < 8; q++) {
                int32_t b2;
                memcpy(&b2, y[k]->bsums + 2 * q, 4);
                so = _mm256_add_epi32(so, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)pi->scp[q]), _mm256_set1_epi32(b2)));
            }
            // in float exactly as dot_q6_k: acc = fma(sum, d · d_x, acc)
            const __m256 t = _mm256_cvtepi32_ps(_mm256_sub_epi32(si[k], _mm256_slli_epi32(so, 5)));
            acc[k] = _mm256_fmadd_ps(t, _mm256_mul_ps(d, _mm256_set1_ps(y[k]->d)), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) store_rows8(out + k * os, acc[k], nr);
}

RA_AVX2 static void q6_k_panel8_run(int64_t ns, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row,
                                    float *out, int64_t os, int nr, int nx) {
    (void)side;   // the block sums are read from the activations
    (void)side_row;
    switch (nx) {
    case 4: q6_k_panel8_m(ns, panel, x, xs, out, os, nr, 4); break;
    case 3: q6_k_panel8_m(ns, panel, x, xs, out, os, nr, 3); break;
    case 2: q6_k_panel8_m(ns, panel, x, xs, out, os, nr, 2); break;
    default: q6_k_panel8_m(ns, panel, x, xs, out, os, nr, 1); break;
    }
}

int ra_matmul_q6_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q6_K_BATCH_SCRATCH(n)) return 0;
    const int64_t wrow = ns * (int64_t)sizeof(blk_q6_k), xrow = ns * (int64_t)sizeof(blk_q8_k);
    void *panel = (void *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    panel8_matmul(w, wrow, ns, x, xrow, nb, NULL, 0, out, out_stride, r0, r1, panel, q6_k_pack_panel8, q6_k_panel8_run);
    return 1;
}

const ra_dot_table ra_dots_avx2 = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q4_0] = dot_q4_0, [RA_DI_Q4_1] = dot_q4_1, [RA_DI_Q5_0] = dot_q5_0, [RA_DI_Q5_1] = dot_q5_1,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_K] = dot_q4_k, [RA_DI_Q5_K] = dot_q5_k, [RA_DI_Q6_K] = dot_q6_k,
    },
    .multi = {
        [RA_DI_F16] = multi_f16, [RA_DI_Q4_0] = multi_q4_0, [RA_DI_Q4_1] = multi_q4_1, [RA_DI_Q5_0] = multi_q5_0,
        [RA_DI_Q5_1] = multi_q5_1, [RA_DI_Q8_0] = multi_q8_0,
        [RA_DI_Q4_K] = multi_q4_k, [RA_DI_Q5_K] = multi_q5_k, [RA_DI_Q6_K] = multi_q6_k,
    },
    .rows = {
        [RA_DI_Q4_0] = rows_q4_0, [RA_DI_Q4_1] = rows_q4_1, [RA_DI_Q5_0] = rows_q5_0, [RA_DI_Q5_1] = rows_q5_1,
        [RA_DI_Q8_0] = rows_q8_0,
    },
};

// MARK: - Activation quantization (Q8_0, Q8_1)

// One block of 32 as quants.c's ra_quant_q8_block, the same bytes: amax over |x| (NaN ignored: vmaxps keeps the
// accumulator), d = amax / 127, q = x · (127 / amax) rounded to nearest even by vcvtps2dq (exact for |q| <= 127, as the
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
    for (int i = 0; i < 4; i++) iq[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], id));
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(iq[0], iq[1]), _mm256_packs_epi32(iq[2], iq[3]));
    _mm256_storeu_si256((__m256i *)(void *)q, _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    *d_out = amax / 127.f;
    return hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(iq[0], iq[1]), _mm256_add_epi32(iq[2], iq[3])));
}

RA_AVX2 int ra_quantize_row_avx2(int type, const float *x, void *dst, int64_t n) {
    if (n % 32 != 0) return 0;
    if (type == RA_Q8_0) {
        blk_q8_0 *y = dst;
        for (int64_t i = 0; i < n / 32; i++) {
            float d;
            q8_block(x + 32 * i, y[i].qs, &d);
            y[i].d = ra_fp32_to_fp16(d);
        }
        return 1;
    }
    if (type == RA_Q8_1) {
        blk_q8_1 *y = dst;
        for (int64_t i = 0; i < n / 32; i++) {
            float d;
            const int sum = q8_block(x + 32 * i, y[i].qs, &d);
            y[i].d = ra_fp32_to_fp16(d);
            y[i].s = ra_fp32_to_fp16(d * (float)sum);
        }
        return 1;
    }
    return 0;
}

#endif
