// AVX2 decode rows kernels of the 32-element block types (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1): one activation row against
// a range of weight rows, in dot_b32's float order bit for bit (dot_avx2.c lists them in the path's table).
#include "avx2_internal.h"

#if defined(__x86_64__)

// Decode over many weight rows, in dot_b32's order bit for bit. The activation row's scales (d, and s of Q8_1 or the
// block sums of Q8_0, b32_xscales) come as floats converted once per product (ops_matmul.c), or once per call; a group of 4 weight blocks gets its scales from one F16C conversion of 4 words (d and m of
// each block) instead of 8 table look-ups. (A row·vector dot spent about as many instructions on its scales as on
// its quants: SmolLM2's 576-column Q4_1 rows, bench/results/engine-notes.md.)
// Rows of up to 512 blocks (16384 columns) take the rows kernel (its per-call tables: ~45 KB of stack); longer ones
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

// The sums of blocks [0, cnt) of weight row a with the activation blocks at b, as floats, the signed 4- and 5-bit types
// from their unsigned quants: sum (q - o) · y = sum q · y - o · sum y, with sum y of each activation block in sy (the
// same exact integers as b32_isum4, two sign operations and a subtraction fewer per block; every term is an integer
// under 2^24 in magnitude, so the float fnmadd is exact).
RA_AVX2_INLINE __m128 rows_b32_fsum4(const uint8_t *a, const uint8_t *b, const float *sy, const int cnt, const int t) {
    if (!b32_offset(t)) return _mm_cvtepi32_ps(b32_isum4(a, b, cnt, t));
    const int wb = b32_wbytes(t), xb = b32_xbytes(t), xq = b32_xqs(t);
    __m256i p[4];
    for (int k = 0; k < 4; k++)
        p[k] = k < cnt ? _mm256_maddubs_epi16(b32_quants_raw(a + k * wb, t), _mm256_loadu_si256((const __m256i *)(b + k * xb + xq)))
                       : _mm256_setzero_si256();
    return _mm_fnmadd_ps(_mm_set1_ps((float)b32_offset(t)), _mm_loadu_ps(sy), _mm_cvtepi32_ps(hsum4_epi16(p[0], p[1], p[2], p[3])));
}

// sx: the activation blocks' s (types with a min) or sums (b32_xscales); lanes past cnt are read but not used.
RA_AVX2_INLINE __m128 rows_b32_group(const uint8_t *a, const uint8_t *b, const float *dx, const float *sx, const int cnt, __m128 acc,
                                     const int t) {
    const __m256 sc = b32_wscales4(a, b32_wbytes(t), cnt);
    __m128 r = _mm_fmadd_ps(rows_b32_fsum4(a, b, sx, cnt, t), _mm_mul_ps(_mm256_castps256_ps128(sc), _mm_loadu_ps(dx)), acc);
    if (b32_min(t)) r = _mm_fmadd_ps(_mm256_extractf128_ps(sc, 1), _mm_loadu_ps(sx), r);
    return b32_chains(acc, r, cnt);
}

// The 4- and 5-bit types by pairs of blocks: the 16 bytes of quants of blocks k and k+1 in one vector give the low
// nibbles of both (elements 0..15 of each) with one and, the high ones (16..31) with one shift and one and, against an
// activation copy laid out to match (per group of 4 blocks, 8 floats of scales in the lane order below), packed once
// per call with vector loads and permutes. The 5-bit types' fifth bits come from both blocks' qh words in one vector
// (one 32-byte load from block k's qh: k's word in the low 128-bit lane, k+1's in the high one), spread to bytes by one
// shuffle for elements 0..15 (qh bits 0..15) and one for 16..31 (bits 16..31), as many as a block at a time takes;
// their scales are gathered in general-purpose registers. 1.3-1.4x the one-row-at-a-time group kernel on Gemma 3's
// 640-column Q5_0 rows (engine-notes.md). Each int16 lane adds 4 products (<= 4 · 31 · 128) before the reduction.
// Most rows go two at a time (rows_b32_pairs2: both rows' 4 chains in the 8 lanes, so one set of scale and fma
// instructions serves two rows and the chains of the two rows overlap; 1.2-1.3x a row at a time on SmolLM2's
// 576-column Q4_1 rows, engine-notes.md); a single row (rows_b32_pairs) has its chains in lanes of blocks 0, 0, 2, 2 |
// 1, 1, 3, 3 of the group (the duplicates are the same fmas on the same values, so the 4 chains are dot_b32's).
typedef struct { uint8_t y[128]; float dx[8], sx[8]; int32_t off[8]; float dx2[8], sx2[8]; int32_t off2[8]; } b32_pair_group;

RA_AVX2_INLINE int b32_paired(const int t) { return t != B32_Q8_0; }
RA_AVX2_INLINE int b32_5bit(const int t) { return t == B32_Q5_0 || t == B32_Q5_1; }

// Group g of the activation row (blocks 4g..4g+cnt-1, cnt 2 or 4) in the layout of rows_b32_pairs (lanes of blocks
// past cnt: zeros).
RA_AVX2_INLINE void b32_pair_pack(const uint8_t *X, const float *dx, const float *sx, b32_pair_group *g, const int cnt, const int t) {
    const int xb = b32_xbytes(t), xq = b32_xqs(t);
    for (int p = 0; p < cnt / 2; p++) {   // y0's elements 0..15, y1's 0..15, y0's 16..31, y1's 16..31
        const __m256i y0 = _mm256_loadu_si256((const __m256i *)(const void *)(X + (2 * p) * xb + xq));
        const __m256i y1 = _mm256_loadu_si256((const __m256i *)(const void *)(X + (2 * p + 1) * xb + xq));
        _mm256_storeu_si256((__m256i *)(void *)(g->y + 64 * p), _mm256_permute2x128_si256(y0, y1, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(g->y + 64 * p + 32), _mm256_permute2x128_si256(y0, y1, 0x31));
    }
    // One row (rows_b32_pairs): lanes of blocks 0, 0, 2, 2 | 1, 1, 3, 3; two rows (rows_b32_pairs2): 0, 2, 0, 2 | 1, 3, 1, 3.
    // (dx and sx may be read 4 floats past the group: the side buffer has them; lanes of blocks past cnt are zeroed.)
    const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(cnt), _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3)));
    const __m256 d4 = _mm256_and_ps(_mm256_castps128_ps256(_mm_loadu_ps(dx)), keep);
    const __m256 s4 = b32_min(t) || b32_offset(t) ? _mm256_and_ps(_mm256_castps128_ps256(_mm_loadu_ps(sx)), keep) : _mm256_setzero_ps();
    const __m256i one = _mm256_setr_epi32(0, 0, 2, 2, 1, 1, 3, 3), two = _mm256_setr_epi32(0, 2, 0, 2, 1, 3, 1, 3);
    _mm256_storeu_ps(g->dx, _mm256_permutevar8x32_ps(d4, one));
    _mm256_storeu_ps(g->dx2, _mm256_permutevar8x32_ps(d4, two));
    const __m256 z = _mm256_setzero_ps();
    _mm256_storeu_ps(g->sx, b32_min(t) ? _mm256_permutevar8x32_ps(s4, one) : z);
    _mm256_storeu_ps(g->sx2, b32_min(t) ? _mm256_permutevar8x32_ps(s4, two) : z);
    // o · sum y (sx: the block sums, exact integers, so the float product and its conversion are exact)
    const __m256 o = _mm256_set1_ps((float)b32_offset(t));
    _mm256_storeu_si256((__m256i *)(void *)g->off, _mm256_cvttps_epi32(_mm256_mul_ps(o, _mm256_permutevar8x32_ps(s4, one))));
    _mm256_storeu_si256((__m256i *)(void *)g->off2, _mm256_cvttps_epi32(_mm256_mul_ps(o, _mm256_permutevar8x32_ps(s4, two))));
}

// The int16 sums of the pairs of blocks (0, 1) and (2, 3) of a group of row a (lanes: 8 partial sums of each block;
// blocks 0 | 1 in s[0], 2 | 3 in s[1]; cnt 2: s[1] zero).
RA_AVX2_INLINE void b32_pair_isums(const uint8_t *a, const b32_pair_group *g, __m256i s[2], const int cnt, const int t) {
    const int wb = b32_wbytes(t);
    const int qo = t == B32_Q4_1 ? (int)offsetof(blk_q4_1, qs) : t == B32_Q5_0 ? (int)offsetof(blk_q5_0, qs)
                 : t == B32_Q5_1 ? (int)offsetof(blk_q5_1, qs) : (int)offsetof(blk_q4_0, qs);
    const int ho = t == B32_Q5_1 ? (int)offsetof(blk_q5_1, qh) : (int)offsetof(blk_q5_0, qh);
    const __m256i m4 = _mm256_set1_epi8(15);
    s[1] = _mm256_setzero_si256();
    for (int p = 0; p < cnt / 2; p++) {
        const uint8_t *b0 = a + 2 * p * wb, *b1 = b0 + wb;
        // (5-bit: a blend of two 32-byte loads, block k+1's from 16 bytes before its quants, instead of vinserti128's
        // one shuffle pipe; both loads stay inside the two blocks)
        const __m256i v = b32_5bit(t) ? _mm256_blend_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(b0 + qo)),
                                                           _mm256_loadu_si256((const __m256i *)(const void *)(b1 + qo - 16)), 0xF0)
                                      : _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(b0 + qo))),
                                                                _mm_loadu_si128((const __m128i *)(b1 + qo)), 1);
        __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        if (b32_5bit(t)) {   // both qh words from one load: block k's at bytes 0..3, k+1's at wb - 16.. of the high lane
            const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(b0 + ho));
            const char u = (char)(wb - 16), v1 = (char)(wb - 15);
            const __m256i sl = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, u, u, u, u, u, u, u, u, v1, v1, v1, v1, v1, v1, v1, v1);
            const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL), b4 = _mm256_set1_epi8(0x10);
            const __m256i hl = _mm256_and_si256(_mm256_shuffle_epi8(h, sl), bit);
            const __m256i hh = _mm256_and_si256(_mm256_shuffle_epi8(h, _mm256_add_epi8(sl, _mm256_set1_epi8(2))), bit);
            lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi8(hl, bit), b4));
            hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_cmpeq_epi8(hh, bit), b4));
        }
        s[p] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(g->y + 64 * p))),
                                _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(g->y + 64 * p + 32))));
    }
}

// A group's weight (d, m) half pairs of blocks 0, 2, 1, 3 as floats d0 m0 d2 m2 | d1 m1 d3 m3 (broadcast loads and
// blends, not inserts from memory: those took the load-to-vector ports 3 times each, the kernel's bottleneck).
RA_AVX2_INLINE __m256 b32_pair_wscales(const uint8_t *a, const int wb, const int cnt) {
    float h[4];
    for (int k = 0; k < 4; k++) memcpy(&h[k], a + (k < cnt ? k : k - 2) * wb, 4);   // (cnt 2: blocks 0, 1 again)
    const __m128 dm = _mm_blend_ps(_mm_blend_ps(_mm_set1_ps(h[0]), _mm_set1_ps(h[2]), 2), _mm_blend_ps(_mm_set1_ps(h[1]), _mm_set1_ps(h[3]), 8), 12);
    return _mm256_cvtph_ps(_mm_castps_si128(dm));
}

// b32_pair_wscales from 32-bit loads combined in general-purpose registers, one move to a vector (the 5-bit types:
// their vector pipes are the bottleneck, the integer ones have room; 1.1x on Q5_1 over b32_pair_wscales' inserts).
RA_AVX2_INLINE __m256 b32_pair_wscales_gpr(const uint8_t *a, const int wb, const int cnt) {
    uint32_t h[4];
    for (int k = 0; k < 4; k++) memcpy(&h[k], a + (k < cnt ? k : k - 2) * wb, 4);   // (cnt 2: blocks 0, 1 again)
    return _mm256_cvtph_ps(_mm_set_epi64x((long long)((uint64_t)h[1] | (uint64_t)h[3] << 32), (long long)((uint64_t)h[0] | (uint64_t)h[2] << 32)));
}

// Two rows a and b (a group each) at once, both rows' 4 chains in one vector: lanes a0 a2 b0 b2 | a1 a3 b1 b3 (row,
// block of the group). The 4-bit types' int16 lanes add 16 products (<= 16 · 15 · 128 < 2^15) before vpmaddwd, so the
// two rows share one reduction; the 5-bit types' may add 8 (<= 8 · 31 · 128 < 2^15), so each row goes to int32 first
// and the rows meet in one vphaddd. Every chain gets the same fmas on the same values as in dot_b32. cnt 2: blocks 0
// and 1 only (the chains of 2 and 3 unchanged).
RA_AVX2_INLINE __m256 rows_b32_pairs2(const uint8_t *a, const uint8_t *b, const b32_pair_group *g, const __m256 acc0, const int cnt,
                                      const int t) {
    const int wb = b32_wbytes(t);
    __m256 acc = acc0;
    __m256i sa[2], sb[2];
    b32_pair_isums(a, g, sa, cnt, t);
    b32_pair_isums(b, g, sb, cnt, t);
    const __m256i one = _mm256_set1_epi16(1);
    __m256i isum;
    if (b32_5bit(t))   // int16 lanes of 8 products at most: each row to int32 before the rows meet
        isum = _mm256_hadd_epi32(_mm256_madd_epi16(_mm256_hadd_epi16(sa[0], sa[1]), one), _mm256_madd_epi16(_mm256_hadd_epi16(sb[0], sb[1]), one));
    else
        isum = _mm256_madd_epi16(_mm256_hadd_epi16(_mm256_hadd_epi16(sa[0], sa[1]), _mm256_hadd_epi16(sb[0], sb[1])), one);
    if (b32_offset(t)) isum = _mm256_sub_epi32(isum, _mm256_loadu_si256((const __m256i *)g->off2));
    const __m256 xa = b32_5bit(t) ? b32_pair_wscales_gpr(a, wb, cnt) : b32_pair_wscales(a, wb, cnt);
    const __m256 xb = b32_5bit(t) ? b32_pair_wscales_gpr(b, wb, cnt) : b32_pair_wscales(b, wb, cnt);
    const __m256 d = _mm256_shuffle_ps(xa, xb, _MM_SHUFFLE(2, 0, 2, 0));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_loadu_ps(g->dx2)), acc);
    if (b32_min(t)) acc = _mm256_fmadd_ps(_mm256_shuffle_ps(xa, xb, _MM_SHUFFLE(3, 1, 3, 1)), _mm256_loadu_ps(g->sx2), acc);
    return cnt == 4 ? acc : _mm256_blend_ps(acc0, acc, 0x55);
}

RA_AVX2_INLINE __m256 rows_b32_pairs(const uint8_t *a, const b32_pair_group *g, __m256 acc, const int t) {
    __m256i s[2];
    b32_pair_isums(a, g, s, 4, t);
    const __m256i m = _mm256_madd_epi16(_mm256_hadd_epi16(s[0], s[1]), _mm256_set1_epi16(1));
    __m256i isum = _mm256_add_epi32(m, _mm256_shuffle_epi32(m, 0xB1));
    if (b32_offset(t)) isum = _mm256_sub_epi32(isum, _mm256_loadu_si256((const __m256i *)g->off));
    const __m256 sc = b32_pair_wscales(a, b32_wbytes(t), 4);   // d0 m0 d2 m2 | d1 m1 d3 m3
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(_mm256_moveldup_ps(sc), _mm256_loadu_ps(g->dx)), acc);
    if (b32_min(t)) acc = _mm256_fmadd_ps(_mm256_movehdup_ps(sc), _mm256_loadu_ps(g->sx), acc);
    return acc;
}

// The chains of a row after its groups, and its result: (c0 + c1) + (c2 + c3), as dot_b32.
RA_AVX2_INLINE float rows_b32_finish(const uint8_t *a, const uint8_t *X, const float *dx, const float *sx, int64_t i, const int64_t nblk,
                                     __m128 acc, const int t) {
    const int wb = b32_wbytes(t), xb = b32_xbytes(t);
    for (; i + 4 <= nblk; i += 4) {
        ra_prefetch_ahead(a + i * wb, 4 * (size_t)wb);
        acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, 4, acc, t);
    }
    switch (nblk - i) {
    case 1: acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, 1, acc, t); break;
    case 2: acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, 2, acc, t); break;
    case 3: acc = rows_b32_group(a + i * wb, X + i * xb, dx + i, sx + i, 3, acc, t); break;
    default: break;
    }
    const __m128 h = _mm_add_ps(acc, _mm_movehdup_ps(acc));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehl_ps(h, h)));
}

// side: the activation row's scales from ra_matmul_side (nblk d, then nblk s or sums, and 4 floats that may be read
// past them), or NULL to convert them here.
RA_AVX2_INLINE void rows_b32(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out,
                             const int t) {
    const uint8_t *W = w, *X = x;
    const int wb = b32_wbytes(t), xb = b32_xbytes(t);
    const int64_t nblk = n / 32;
    if (nblk > B32_ROWS_MAX_BLOCKS) {
        for (int64_t r = 0; r < rows; r++) out[r] = dot_b32(n, W + r * wrow, x, t);
        return;
    }
    float own[2 * B32_ROWS_MAX_BLOCKS + 4];
    if (!side) {
        b32_xscales(X, nblk, own, own + nblk, t);
        memset(own + 2 * nblk, 0, 4 * sizeof(float));
        side = own;
    }
    const float *dx = side, *sx = side + nblk;
    b32_pair_group pg[b32_paired(t) ? B32_ROWS_MAX_BLOCKS / 4 + 1 : 1];
    const int pair_tail = nblk % 4 == 2;   // two rows at a time: the last 2 blocks by the pair kernel too (SmolLM2's 18)
    if (b32_paired(t)) {
        for (int64_t i = 0; i + 4 <= nblk; i += 4) b32_pair_pack(X + i * xb, dx + i, sx + i, &pg[i / 4], 4, t);
        if (pair_tail) b32_pair_pack(X + (nblk - 2) * xb, dx + nblk - 2, sx + nblk - 2, &pg[nblk / 4], 2, t);
    }
    int64_t r = 0;
    if (b32_paired(t) && nblk >= 4)   // two rows at a time (the last one of an odd count below)
        for (; r + 2 <= rows; r += 2) {
            const uint8_t *a = W + r * wrow, *b = a + wrow;
            ra_prefetch_far(a);
            ra_prefetch_far(b);
            __m256 acc8 = _mm256_setzero_ps();
            int64_t i = 0;
            for (; i + 4 <= nblk; i += 4) {
                ra_prefetch_ahead(a + 2 * i * wb, 8 * (size_t)wb);   // the two rows' bytes in order, at the pass's pace
                acc8 = rows_b32_pairs2(a + i * wb, b + i * wb, &pg[i / 4], acc8, 4, t);
            }
            if (pair_tail) {
                acc8 = rows_b32_pairs2(a + i * wb, b + i * wb, &pg[i / 4], acc8, 2, t);
                i += 2;
            }
            const __m256 c = _mm256_permutevar8x32_ps(acc8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));   // a's chains | b's
            out[r] = rows_b32_finish(a, X, dx, sx, i, nblk, _mm256_castps256_ps128(c), t);
            out[r + 1] = rows_b32_finish(b, X, dx, sx, i, nblk, _mm256_extractf128_ps(c, 1), t);
        }
    for (; r < rows; r++) {
        const uint8_t *a = W + r * wrow;
        ra_prefetch_far(a);
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
        out[r] = rows_b32_finish(a, X, dx, sx, i, nblk, acc, t);
    }
}
RA_AVX2 void ra_avx2_rows_q8_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    rows_b32(n, w, wrow, rows, x, side, out, B32_Q8_0);
}
RA_AVX2 void ra_avx2_rows_q4_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    rows_b32(n, w, wrow, rows, x, side, out, B32_Q4_0);
}
RA_AVX2 void ra_avx2_rows_q5_0(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    rows_b32(n, w, wrow, rows, x, side, out, B32_Q5_0);
}
RA_AVX2 void ra_avx2_rows_q4_1(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    rows_b32(n, w, wrow, rows, x, side, out, B32_Q4_1);
}
RA_AVX2 void ra_avx2_rows_q5_1(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out) {
    rows_b32(n, w, wrow, rows, x, side, out, B32_Q5_1);
}

#endif
