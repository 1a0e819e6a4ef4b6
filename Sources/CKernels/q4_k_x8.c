// Q4_K repacked at load for decode: 8 weight rows interleaved so that the 8 lanes of a 256-bit vector are 8 rows.
//
// Why: on a 2-core AVX2 machine (AMD EPYC, no AVX-512) the one-row Q4_K dot computes barely faster than a thread's share
// of the memory: its instructions, not the bytes, set the decode rate (bench/results/engine-notes.md, "Stop 31").
// A row's dot spends a fifth of them broadcasting and unpacking its sub-block scales and an eighth on the float tail
// of each super-block. With 8 rows in the lanes the scales are one byte shuffle per sub-block for all 8, the int32
// sums need no horizontal reduction and the float tail is two vector fmas for 8 rows.
//
// The bits are the one-row dot's: per row and super-block the exact int32 sums I (scale · quant · activation) and M
// (min · activation block sum), then acc = fma(I, d · d_x, acc) and acc = fnmadd(M, dmin · d_x, acc), super-block after
// super-block. Paths and shapes without this kernel (batches, other CPUs) decode a range of groups back to Q4_K rows in
// a per-thread buffer and run the Q4_K kernels of the path on them, so every path keeps its Q4_K results exactly.
#include "ckernels.h"
#include "kernels_internal.h"

#include <string.h>

/// One super-block of 8 rows: 1184 bytes against 8 × 144 for the rows as stored in the file (+2.8%: the 6-bit scales
/// and mins are kept one a byte, so that a shuffle reaches them).
typedef struct {
    uint16_t d[8], dmin[8];     // halves of row r
    uint8_t sc[8][8];           // [sub-block j][row r]: scale (0..63)
    uint8_t mn[8][8];           // [sub-block j][row r]: min (0..63)
    uint8_t qs[4][8][8][4];     // [group g][quartet e][row r]: bytes 32g + 4e .. 32g + 4e + 3 of row r's quants
} blk_q4_k_x8;
_Static_assert(sizeof(blk_q4_k_x8) == RA_Q4_K_X8_GROUP_BYTES, "ckernels.h states the repacked super-block's size");
_Static_assert(sizeof(blk_q4_k_x8) % 32 == 0, "repacked super-blocks keep 32-byte alignment");

int64_t ra_q4_k_x8_bytes(int64_t n, int64_t rows) {
    if (n <= 0 || n % QK_K != 0 || n > RA_Q4_K_X8_MAX_COLUMNS || rows <= 0 || rows % 8 != 0) return -1;
    return rows / 8 * (n / QK_K) * (int64_t)sizeof(blk_q4_k_x8);
}

int ra_q4_k_x8_repack(const void *src, int64_t n, int64_t rows, void *dst) {
    if (ra_q4_k_x8_bytes(n, rows) < 0) return 0;
    const int64_t ns = n / QK_K;
    const blk_q4_k *a = src;
    blk_q4_k_x8 *o = dst;
    for (int64_t g8 = 0; g8 < rows / 8; g8++) {
        for (int64_t i = 0; i < ns; i++) {
            blk_q4_k_x8 *p = o + g8 * ns + i;
            for (int r = 0; r < 8; r++) {
                const blk_q4_k *b = a + (g8 * 8 + r) * ns + i;
                uint8_t sc[8], m[8];
                ra_unpack_scales_k4(b->scales, sc, m);
                p->d[r] = b->d;
                p->dmin[r] = b->dmin;
                for (int j = 0; j < 8; j++) {
                    p->sc[j][r] = sc[j];
                    p->mn[j][r] = m[j];
                }
                for (int g = 0; g < 4; g++)
                    for (int e = 0; e < 8; e++) memcpy(p->qs[g][e][r], b->qs + 32 * g + 4 * e, 4);
            }
        }
    }
    return 1;
}

/// Rows [r0, r1) of a repacked matrix (ns super-blocks a row) back in the file's Q4_K layout at dst.
static void ra_q4_k_x8_unpack(const blk_q4_k_x8 *w, int64_t ns, int64_t r0, int64_t r1, blk_q4_k *dst) {
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t i = 0; i < ns; i++) {
            const blk_q4_k_x8 *p = w + row / 8 * ns + i;
            blk_q4_k *b = dst + (row - r0) * ns + i;
            b->d = p->d[r];
            b->dmin = p->dmin[r];
            for (int j = 0; j < 4; j++) {   // the inverse of ra_unpack_scales_k4: 16 values of 6 bits in 12 bytes
                b->scales[j] = (uint8_t)(p->sc[j][r] | ((p->sc[j + 4][r] >> 4) << 6));
                b->scales[j + 4] = (uint8_t)(p->mn[j][r] | ((p->mn[j + 4][r] >> 4) << 6));
                b->scales[j + 8] = (uint8_t)((p->sc[j + 4][r] & 15) | ((p->mn[j + 4][r] & 15) << 4));
            }
            for (int g = 0; g < 4; g++)
                for (int e = 0; e < 8; e++) memcpy(b->qs + 32 * g + 4 * e, p->qs[g][e][r], 4);
        }
    }
}

#include "avx2_panel8.h"

#if defined(__x86_64__)

// Dword lane r of a vector from a 128-bit source s holding bytes [v(j, 0..7), v(j + 1, 0..7)] broadcast to both halves:
// k4x8_pick(odd) gives (v(j + odd, r), v(j + odd, r)) as two int16 (a sub-block's scale for vpmaddwd against the two
// pair sums of a lane), k4x8_pair gives (v(j, r), v(j + 1, r)) (two sub-blocks' mins against two block sums).
RA_AVX2_INLINE __m256i k4x8_pick(const int odd) {
    const char o = (char)(odd ? 8 : 0), z = (char)0x80;
    return _mm256_setr_epi8(o, z, o, z, (char)(o + 1), z, (char)(o + 1), z, (char)(o + 2), z, (char)(o + 2), z, (char)(o + 3), z, (char)(o + 3), z,
                            (char)(o + 4), z, (char)(o + 4), z, (char)(o + 5), z, (char)(o + 5), z, (char)(o + 6), z, (char)(o + 6), z, (char)(o + 7), z, (char)(o + 7), z);
}
RA_AVX2_INLINE __m256i k4x8_pair(void) {
    const char z = (char)0x80;
    return _mm256_setr_epi8(0, z, 8, z, 1, z, 9, z, 2, z, 10, z, 3, z, 11, z, 4, z, 12, z, 5, z, 13, z, 6, z, 14, z, 7, z, 15, z);
}

// out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the activation row b.
RA_AVX2_INLINE void k4x8_group(int64_t ns, const blk_q4_k_x8 *p, const blk_q8_k *b, float *out) {
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i pick0 = k4x8_pick(0), pick1 = k4x8_pick(1), pair = k4x8_pair();
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const blk_q4_k_x8 *pi = p + i;
        ra_prefetch_ahead(pi, sizeof(blk_q4_k_x8));
        const int8_t *y = b[i].qs;
        __m256i isum = _mm256_setzero_si256();
        RA_UNROLL
        for (int g = 0; g < 4; g++) {
            __m256i slo = _mm256_setzero_si256(), shi = _mm256_setzero_si256();
            RA_UNROLL
            for (int e = 0; e < 8; e++) {
                const __m256i v = _mm256_load_si256((const __m256i *)pi->qs[g][e]);
                const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
                // 8 quartets' pair sums (at most 8 · 2 · 15 · 127 = 30480 an int16) added before the scale
                slo = _mm256_add_epi16(slo, _mm256_maddubs_epi16(lo, bcast4(y + 64 * g + 4 * e)));
                shi = _mm256_add_epi16(shi, _mm256_maddubs_epi16(hi, bcast4(y + 64 * g + 32 + 4 * e)));
            }
            const __m256i sc = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)pi->sc[2 * g]));
            isum = _mm256_add_epi32(isum, _mm256_add_epi32(_mm256_madd_epi16(slo, _mm256_shuffle_epi8(sc, pick0)),
                                                           _mm256_madd_epi16(shi, _mm256_shuffle_epi8(sc, pick1))));
        }
        // mins: M = sum_j m[j] · (bsums[2j] + bsums[2j + 1]), a pair of sub-blocks a vpmaddwd
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m256i bs2 = _mm256_broadcastsi128_si256(_mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        __m256i msum = _mm256_setzero_si256();
        RA_UNROLL
        for (int q = 0; q < 4; q++) {
            const __m256i mn = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)pi->mn[2 * q])), pair);
            const __m256i bq = q == 0 ? _mm256_shuffle_epi32(bs2, 0x00) : q == 1 ? _mm256_shuffle_epi32(bs2, 0x55)
                             : q == 2 ? _mm256_shuffle_epi32(bs2, 0xAA) : _mm256_shuffle_epi32(bs2, 0xFF);
            msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mn, bq));
        }
        const __m256 dy = _mm256_set1_ps(b[i].d);
        const __m256 d = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)pi->d));
        const __m256 dmin = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)pi->dmin));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, dy), acc);
        acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(dmin, dy), acc);
    }
    _mm256_storeu_ps(out, acc);
}

RA_AVX2 static void ra_avx2_rows_q4_k_x8(int64_t n, const void *w, int64_t groups, const void *x, float *out) {
    const int64_t ns = n / QK_K;
    const blk_q4_k_x8 *p = w;
    for (int64_t g8 = 0; g8 < groups; g8++) k4x8_group(ns, p + g8 * ns, x, out + 8 * g8);
}
#endif

int ra_q4_k_x8_kernel(int path) {
#if defined(__x86_64__)
    return path == RA_PATH_AVX2 || path == RA_PATH_AVX2_VNNI;
#else
    (void)path;
    return 0;
#endif
}

void ra_q4_k_x8_rows(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, int64_t r0, int64_t r1) {
    const int64_t ns = n / QK_K;
    const blk_q4_k_x8 *W = w;
    if (n <= 0 || n % QK_K != 0 || r1 <= r0 || nb <= 0) return;
#if defined(__x86_64__)
    if (nb == 1 && r0 % 8 == 0 && r1 % 8 == 0 && ra_q4_k_x8_kernel(ra_kernel_path())) {
        ra_avx2_rows_q4_k_x8(n, W + r0 / 8 * ns, (r1 - r0) / 8, x, out + r0);
        return;
    }
#endif
    // Any other path or shape: the rows back in Q4_K, 64 at a time, through the path's Q4_K kernels (so a batch
    // still reaches the path's panels).
    enum { ROWS = 64 };
    const int64_t wrow = ns * (int64_t)sizeof(blk_q4_k);
    blk_q4_k *rows = (blk_q4_k *)(void *)ra_thread_unpack_buffer(ROWS * wrow);
    if (!rows) {
        // No heap for the buffer: one row at a time from the stack (ra_q4_k_x8_repack takes rows of at most
        // RA_Q4_K_X8_MAX_COLUMNS, 18 KiB here).
        blk_q4_k one[RA_Q4_K_X8_MAX_COLUMNS / QK_K];
        for (int64_t r = r0; r < r1; r++) {
            ra_q4_k_x8_unpack(W, ns, r, r + 1, one);
            ra_matmul_rows(RA_Q4_K, one, n, x, nb, out + r, out_stride, 0, 1);
        }
        return;
    }
    for (int64_t ra = r0; ra < r1; ra += ROWS) {
        const int64_t rb = ra + ROWS < r1 ? ra + ROWS : r1;
        ra_q4_k_x8_unpack(W, ns, ra, rb, rows);
        ra_matmul_rows(RA_Q4_K, rows, n, x, nb, out + ra, out_stride, 0, rb - ra);
    }
}
