// Private to the AVX2 batch kernels (matmul_avx2_k.c, matmul_avx2_b32.c): panels of 8 weight rows × 4 activation
// rows — repacking weight rows 8 at a time so the 8 int32 lanes are the 8 weight rows (no horizontal sums), and
// running each panel against every group of 4 activation rows.
#ifndef RUNANYWHERE_AVX2_PANEL8_H
#define RUNANYWHERE_AVX2_PANEL8_H
#include "avx2_internal.h"

#if defined(__x86_64__)

enum { PANEL8_ROWS = 8, PANEL8_GROUP = 4 };

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

// Lanes [0, nr) of v to out (a partial panel at the end of the row range).
RA_AVX2_INLINE void store_rows8(float *out, __m256 v, int nr) {
    if (nr == PANEL8_ROWS) { _mm256_storeu_ps(out, v); return; }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane), v);
}

// Bit `bit` (0..7) of each byte of h moved to bit 4, the others cleared. 16-bit shifts move bits across the bytes of a
// word, which the mask drops.
RA_AVX2_INLINE __m256i fifth_bit(__m256i h, const int bit) {
    const int s = 4 - bit;
    const __m256i b = s > 0 ? _mm256_slli_epi16(h, s) : s < 0 ? _mm256_srli_epi16(h, -s) : h;
    return _mm256_and_si256(b, _mm256_set1_epi8(0x10));
}

// The quants held in the bytes of v, 32 low nibbles into *lo and 32 high ones into *hi (0..15); with five, 5-bit quants
// whose fifth bits are bit lo_bit (the low nibbles') and bit hi_bit (the high ones') of the bytes of qh (0..31). Q5_K's
// qh bytes hold group g's in bits 2g and 2g + 1; the repacked 32-element types' rearranged qh (kernels_internal.h)
// quartet e's in bits e and 4 + e.
RA_AVX2_INLINE void split_quants(__m256i v, __m256i qh, const int lo_bit, const int hi_bit, const int five, __m256i *lo, __m256i *hi) {
    const __m256i m4 = _mm256_set1_epi8(15);
    *lo = _mm256_and_si256(v, m4);
    *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    if (five) {
        *lo = _mm256_or_si256(*lo, fifth_bit(qh, lo_bit));
        *hi = _mm256_or_si256(*hi, fifth_bit(qh, hi_bit));
    }
}

// A quartet vector (dword r: 4 int8 elements of row r) as two vectors of int16 pairs: *first dword r = elements 0, 1
// of row r, *second elements 2, 3.
RA_AVX2_INLINE void quartet_pairs16(__m256i v, __m256i *first, __m256i *second) {
    // per 128-bit lane (4 rows): the rows' first pairs, then their second pairs; then lanes 0, 2 | 1, 3
    const __m256i pick = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                          0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i s = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, pick), 0xD8);
    *first = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(s));
    *second = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(s, 1));
}

// The levels of one block of 32 IQ4 nibbles (IQ4_NL's block or one of IQ4_XS's 8) of 8 rows as 16 vectors of int16
// pairs q[0..16) (q[p] dword r = elements 2p, 2p + 1 of row r), times sc (row r's scale in both int16 of dword r) when
// scaled. h[e]: dword r holds bytes 4e .. 4e + 3 of row r's 16 bytes of nibbles (block_heads8, or IQ4_XS's groups):
// low nibbles elements 4e .. 4e + 3 (pairs 2e, 2e + 1), high nibbles 16 on (pairs 8 + 2e, 9 + 2e).
RA_AVX2_INLINE void iq4_pairs16(int16_t (*q)[16], const __m256i h[4], __m256i sc, const int scaled) {
    const __m256i lut = iq4_levels256(0);
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int e = 0; e < 4; e++) {
        __m256i v[2][2];
        quartet_pairs16(_mm256_shuffle_epi8(lut, _mm256_and_si256(h[e], m4)), &v[0][0], &v[0][1]);
        quartet_pairs16(_mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(h[e], 4), m4)), &v[1][0], &v[1][1]);
        for (int half = 0; half < 2; half++)
            for (int t = 0; t < 2; t++)
                _mm256_store_si256((__m256i *)(void *)q[8 * half + 2 * e + t], scaled ? _mm256_mullo_epi16(v[half][t], sc) : v[half][t]);
    }
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
RA_AVX2 static inline void panel8_matmul(const uint8_t *W, int64_t wrow, int64_t nblk, const uint8_t *X, int64_t xrow, int64_t nb,
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

// Activation rows a pair of panels (16 weight rows) runs against at once (its sums and the two weight vectors fill the
// 16 vector registers).
enum { PANEL16_GROUP = 3 };

// Two panels (16 weight rows) × nx (1..3) activation rows xs bytes apart, with their side data (side: the group's first row's).
typedef void (*panel16_run_fn)(int64_t nblk, const void *pa, const void *pb, const uint8_t *x, int64_t xs, const float *side,
                               float *out, int64_t os, int nx);

// Rows [r0, r1) in pairs of panels (the last < 16 rows in single panels, run8) against every group of 3 activation
// rows (4 for run8). While a pair runs, the next 16 rows (contiguous; past r1 too, where this thread's next chunk of
// rows usually starts, ops_matmul.c) are prefetched a few lines per group: packing is the first touch of the
// weights, and a chunk's short runs of rows give the hardware prefetcher little to go on (out of cache, ~25% of the
// Q4_1 products' time). pa and pb: room for a panel each; side_row: floats of side data an activation row.
RA_AVX2_INLINE void panel16_matmul(const uint8_t *W, int64_t wrow, int64_t nblk, const uint8_t *X, int64_t xrow, int64_t nb,
                                   const float *side, int64_t side_row, float *out, int64_t os, int64_t r0, int64_t r1, void *pa, void *pb,
                                   panel8_pack_fn pack, panel16_run_fn run16, panel8_run_fn run8) {
    const int64_t lines = (16 * wrow + 63) / 64, groups = (nb + PANEL16_GROUP - 1) / PANEL16_GROUP;
    const int64_t per = (lines + groups - 1) / groups;
    int64_t p0 = r0;
    for (; p0 + 16 <= r1; p0 += 16) {
        pack(W + p0 * wrow, wrow, nblk, PANEL8_ROWS, pa);
        pack(W + (p0 + 8) * wrow, wrow, nblk, PANEL8_ROWS, pb);
        const char *next = (const char *)(W + (p0 + 16) * wrow);
        int64_t line = 0;
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL16_GROUP) {
            for (const int64_t e = line + per; line < e && line < lines; line++) _mm_prefetch(next + 64 * line, _MM_HINT_T0);
            run16(nblk, pa, pb, X + b0 * xrow, xrow, side + side_row * b0, out + b0 * os + p0, os,
                  (int)(nb - b0 < PANEL16_GROUP ? nb - b0 : PANEL16_GROUP));
        }
    }
    for (; p0 < r1; p0 += PANEL8_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL8_ROWS ? r1 - p0 : PANEL8_ROWS);
        pack(W + p0 * wrow, wrow, nblk, nr, pa);
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL8_GROUP)
            run8(nblk, pa, X + b0 * xrow, xrow, (const uint8_t *)(side + side_row * b0), side_row * (int64_t)sizeof(float),
                 out + b0 * os + p0, os, nr, (int)(nb - b0 < PANEL8_GROUP ? nb - b0 : PANEL8_GROUP));
    }
}

// MARK: - int16 panels (Q8_0 and IQ4_NL: 16 pairs a block, matmul_avx2_b32.c; IQ4_XS: 128 a super-block, matmul_avx2_iq4.c)
//
// A block of a panel is `pairs` vectors of int16 pairs (int16 2r + t: row r's element 2p + t, with the block's scale
// already in it where the type has one) and then the 8 rows' float scales; the activations are int16 too, xs elements a
// row, and row k's scale of block j is side[k · side_row + j]. A pair of elements of 8 rows is one broadcast, one
// vpmaddwd and one vpaddd per activation row. The blocks are taken chain by chain (j = c, c + chains, ...), each row's
// float sum of a chain kept in a register beside the int32 sums, and the chains added at the end: each chain is the
// row·vector dot's sequence of fmas (Q8_0's 4 chains of dot_b32; IQ4_NL's and IQ4_XS's one), so the bits are the dot's.

// One panel × nx (1..4) activation rows.
RA_AVX2_INLINE void i16_panel_m(int64_t nblk, const uint8_t *p, const int pairs, const int16_t *x, int64_t xs, const float *side,
                                int64_t side_row, float *out, int64_t os, int nr, const int nx, const int chains) {
    const int64_t bytes = 32 * (int64_t)pairs + 32;
    __m256 chain[4][PANEL8_GROUP];
    for (int c = 0; c < chains; c++) {
        __m256 acc[PANEL8_GROUP];
        for (int k = 0; k < nx; k++) acc[k] = _mm256_setzero_ps();
        for (int64_t j = c; j < nblk; j += chains) {
            const uint8_t *pj = p + j * bytes;
            __m256i s[PANEL8_GROUP];
            for (int k = 0; k < nx; k++) s[k] = _mm256_setzero_si256();
            for (int q0 = 0; q0 < pairs; q0 += 16) {
                RA_UNROLL
                for (int q = q0; q < q0 + 16; q++) {
                    const __m256i wv = _mm256_load_si256((const __m256i *)(const void *)(pj + 32 * q));
                    for (int k = 0; k < nx; k++) {
                        int32_t pair;
                        memcpy(&pair, x + k * xs + 2 * pairs * j + 2 * q, 4);
                        s[k] = _mm256_add_epi32(s[k], _mm256_madd_epi16(wv, _mm256_set1_epi32(pair)));
                    }
                    // (keeps clang from summing the products as a tree, which spills them)
                    for (int k = 0; k < nx; k++) __asm__("" : "+x"(s[k]));
                }
            }
            const __m256 dw = _mm256_load_ps((const float *)(const void *)(pj + 32 * pairs));
            for (int k = 0; k < nx; k++)
                acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[k]), _mm256_mul_ps(dw, _mm256_broadcast_ss(side + k * side_row + j)), acc[k]);
        }
        for (int k = 0; k < nx; k++) chain[c][k] = acc[k];
    }
    for (int k = 0; k < nx; k++)
        store_rows8(out + k * os, chains == 1 ? chain[0][k] : _mm256_add_ps(_mm256_add_ps(chain[0][k], chain[1][k]), _mm256_add_ps(chain[2][k], chain[3][k])), nr);
}

// Two panels (16 weight rows) × nx (1..3) activation rows: each broadcast serves two vpmaddwd, with the chains of
// i16_panel_m for each panel: the same bits.
RA_AVX2_INLINE void i16_panel_x2_m(int64_t nblk, const uint8_t *pa, const uint8_t *pb, const int pairs, const int16_t *x, int64_t xs,
                                   const float *side, int64_t side_row, float *out, int64_t os, const int nx, const int chains) {
    const int64_t bytes = 32 * (int64_t)pairs + 32;
    __m256 chain[4][2][PANEL16_GROUP];
    for (int c = 0; c < chains; c++) {
        __m256 acc[2][PANEL16_GROUP];
        for (int k = 0; k < nx; k++) acc[0][k] = acc[1][k] = _mm256_setzero_ps();
        for (int64_t j = c; j < nblk; j += chains) {
            const uint8_t *a = pa + j * bytes, *b = pb + j * bytes;
            __m256i sa[PANEL16_GROUP], sb[PANEL16_GROUP];
            for (int k = 0; k < nx; k++) sa[k] = sb[k] = _mm256_setzero_si256();
            for (int q0 = 0; q0 < pairs; q0 += 16) {
                RA_UNROLL
                for (int q = q0; q < q0 + 16; q++) {
                    const __m256i wa = _mm256_load_si256((const __m256i *)(const void *)(a + 32 * q));
                    const __m256i wb = _mm256_load_si256((const __m256i *)(const void *)(b + 32 * q));
                    for (int k = 0; k < nx; k++) {
                        int32_t pair;
                        memcpy(&pair, x + k * xs + 2 * pairs * j + 2 * q, 4);
                        const __m256i y = _mm256_set1_epi32(pair);
                        sa[k] = _mm256_add_epi32(sa[k], _mm256_madd_epi16(wa, y));
                        sb[k] = _mm256_add_epi32(sb[k], _mm256_madd_epi16(wb, y));
                    }
                    for (int k = 0; k < nx; k++) __asm__("" : "+x"(sa[k]), "+x"(sb[k]));
                }
            }
            const __m256 da = _mm256_load_ps((const float *)(const void *)(a + 32 * pairs));
            const __m256 db = _mm256_load_ps((const float *)(const void *)(b + 32 * pairs));
            for (int k = 0; k < nx; k++) {
                const __m256 dx = _mm256_broadcast_ss(side + k * side_row + j);
                acc[0][k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sa[k]), _mm256_mul_ps(da, dx), acc[0][k]);
                acc[1][k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sb[k]), _mm256_mul_ps(db, dx), acc[1][k]);
            }
        }
        for (int k = 0; k < nx; k++) { chain[c][0][k] = acc[0][k]; chain[c][1][k] = acc[1][k]; }
    }
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < nx; k++)
            _mm256_storeu_ps(out + k * os + 8 * h, chains == 1 ? chain[0][h][k]
                                                              : _mm256_add_ps(_mm256_add_ps(chain[0][h][k], chain[1][h][k]),
                                                                              _mm256_add_ps(chain[2][h][k], chain[3][h][k])));
}

// The run functions (panel16_run_fn, panel8_run_fn) of an int16 panel type: `pairs` a block, `chains` float chains,
// side_per_block floats of side data per block and activation row (Q8_0's d and s: 2; IQ4_XS's d: 1).
#define RA_I16_PANEL_RUNS(name, pairs, chains, side_per_block)                                                             \
    RA_AVX2 static void name##_run16x2(int64_t nblk, const void *pa, const void *pb, const uint8_t *x, int64_t xs,       \
                                       const float *side, float *out, int64_t os, int nx) {                            \
        const int16_t *x16 = (const int16_t *)(const void *)x;                                                         \
        const int64_t xe = xs / (int64_t)sizeof(int16_t), sr = (side_per_block) * nblk;                               \
        switch (nx) {                                                                                                  \
        case 1: i16_panel_x2_m(nblk, pa, pb, pairs, x16, xe, side, sr, out, os, 1, chains); break;                     \
        case 2: i16_panel_x2_m(nblk, pa, pb, pairs, x16, xe, side, sr, out, os, 2, chains); break;                     \
        default: i16_panel_x2_m(nblk, pa, pb, pairs, x16, xe, side, sr, out, os, 3, chains); break;                    \
        }                                                                                                              \
    }                                                                                                                  \
    RA_AVX2 static void name##_run16(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, \
                                     int64_t side_row, float *out, int64_t os, int nr, int nx) {                       \
        (void)side_row;                                                                                                \
        const int16_t *x16 = (const int16_t *)(const void *)x;                                                         \
        const float *sd = (const float *)(const void *)side;                                                           \
        const int64_t xe = xs / (int64_t)sizeof(int16_t), sr = (side_per_block) * nblk;                               \
        switch (nx) {                                                                                                  \
        case 1: i16_panel_m(nblk, panel, pairs, x16, xe, sd, sr, out, os, nr, 1, chains); break;                       \
        case 2: i16_panel_m(nblk, panel, pairs, x16, xe, sd, sr, out, os, nr, 2, chains); break;                       \
        case 3: i16_panel_m(nblk, panel, pairs, x16, xe, sd, sr, out, os, nr, 3, chains); break;                       \
        default: i16_panel_m(nblk, panel, pairs, x16, xe, sd, sr, out, os, nr, 4, chains); break;                      \
        }                                                                                                              \
    }

#endif
#endif
