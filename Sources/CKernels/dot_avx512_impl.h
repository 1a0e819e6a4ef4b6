// AVX-512 kernels, compiled twice: dot_avx512.c (F/BW/VL) and dot_avx512vnni.c (+VNNI), which define RA_VNNI
// (0/1), RA_TARGET (the target attribute) and RA_TABLE (the table's name) first. Private to CKernels.
//
// The float dots (F32, F16, BF16) are 512-bit here. The quantized types have no AVX-512 dot: their dots, decode rows
// kernels and 256-bit panels come from the AVX2 table on these paths too, so a prompt batch gives the logits of
// token-by-token decoding bit for bit as on AVX2 (the 512-bit dots these tables had summed in another order than the
// batch kernels, and a prompt differed from decoding by ~1e-2 where an activation's Q8 rounding flipped; they were
// also slower here than the AVX2 rows kernels and panels: bench/results/engine-notes.md, "AVX-512"). With VNNI, the
// batches of every quantized type are 16-row panels of vpdpbusd below, which sum in the AVX2 dots' order. (A 512-bit
// Q5_K decode rows kernel of stop 24 was dropped once the AVX2 dot took its scales by broadcast loads: from memory it
// no longer read faster, from the last-level cache ~6% slower; engine-notes.md, "Stop 26".)
#include "avx2_internal.h"
#include "avx2_panel8.h"   // split_quants: the repacked 32-element groups' nibbles

#if defined(__x86_64__)
#include <immintrin.h>
#include <stddef.h>

RA_TARGET static inline __m512i cat256(__m256i lo, __m256i hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
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

RA_TARGET static inline __m512 ld_f16x16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

RA_TARGET static float dot_f16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        ra_prefetch_ahead(a + i, 128);
        s0 = _mm512_fmadd_ps(ld_f16x16(a + i), ld_f16x16(b + i), s0);
        s1 = _mm512_fmadd_ps(ld_f16x16(a + i + 16), ld_f16x16(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(ld_f16x16(a + i + 32), ld_f16x16(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(ld_f16x16(a + i + 48), ld_f16x16(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(ld_f16x16(a + i), ld_f16x16(b + i), s0);
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


#define RA_INLINE RA_TARGET static inline __attribute__((always_inline))

#if RA_VNNI
// MARK: - Q4_K and Q5_K batches with VNNI: panels of 16 weight rows × 8 (Q5_K: 4) activation rows
//
// Each call repacks its weight rows, 16 at a time, into a panel in the thread's scratch: per super-block and
// group of 4 elements, one vector holds those 4 quants (0..15) of all 16 rows. A step then takes one such
// vector and, for each of 8 activation rows, one vpdpbusd against the row's 4 int8 activations broadcast: the
// 16 lanes are the 16 weight rows, so no horizontal sums are needed. Per sub-block of 32 elements the int32
// sums times each row's scale are added to the super-block's int32 sum (scale_add), and the mins meet the
// activation block sums in one vpdpwssd per pair of sub-blocks; then the two fmas of the AVX2 dot (dot_avx2_k.c)
// per super-block, so the lanes sum as it does. A prompt multiplies every weight row with all its activation rows, so
// the repacking is paid once per call for nb rows (the batch kernel is only used for nb > 1). The Q6_K and
// Q8_0 batch kernels below use the same panels and steps.

// Weight rows per panel (the 16 lanes of a vector) and activation rows per step.
enum { PANEL_ROWS = 16, PANEL_GROUP = 8 };

// One super-block of a panel (64-byte aligned): q[e] byte 4r + t = quant of row r, element 4e + t; sc[j][r] =
// scale of sub-block j of row r as a multiplier of scale_add (the int16 pair scale, 256 · scale); d[r], dmin[r];
// mins[p][r] = min of sub-block 2p (low half) and 2p+1 (high half).
typedef struct {
    uint8_t q[64][64];
    int32_t sc[8][16];
    float d[16];
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

// acc + sc · s in every lane, exact in int32 for |s| < 2^23, where sc2 holds each lane's multiplier as the int16 pair
// (sc, 256 · sc) (scale_pair): s is split into its low byte and s >> 8, the int16 pair of the lane (one vpshufb), and
// vpdpwssd adds low · sc + (s >> 8) · 256 · sc. The same int32 as vpmulld and vpaddd, but vpmulld is two µops of a
// long latency on one port where vpdpwssd is one on either vector port (engine-notes.md, "Stop 27").
RA_INLINE __m512i scale_add(__m512i acc, __m512i s, __m512i sc2) {
    const __m512i split = _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 1, 2, 4, -1, 5, 6, 8, -1, 9, 10, 12, -1, 13, 14));
    return _mm512_dpwssd_epi32(acc, _mm512_shuffle_epi8(s, split), sc2);
}

// The multiplier of scale_add for int32 scales sc (|sc| <= 127): the int16 pair (sc, 256 · sc) of each lane.
RA_INLINE __m512i scale_pair(__m512i sc) {
    return _mm512_or_si512(_mm512_and_si512(sc, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(sc, 24));
}

// Each lane's int16 pair (a, b) from int32 lanes a and b (|a|, |b| <= 32767): what vpdpwssd takes against two int16.
RA_INLINE __m512i int16_pairs(__m512i a, __m512i b) {
    return _mm512_or_si512(_mm512_and_si512(a, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(b, 16));
}

// 16 halves as floats: lo's 8 in lanes 0..7, hi's in 8..15 (a panel's two groups of 8 rows).
RA_INLINE __m512 halves16(__m128i lo, __m128i hi) {
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
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

// Repacks rows [0, nrows) (nrows <= 16) of W into ns panel super-blocks; rows past nrows are zero. five: the rows
// are Q5_K (the same head, then 32 bytes of fifth bits before the nibbles; quants 0..31), else Q4_K.
RA_INLINE void k4_pack_panel(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, q4_k_panel *p, const int five) {
    const __m512i m4 = _mm512_set1_epi8(15), one = _mm512_set1_epi8(1);
    const int64_t bs = five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k);
    const int64_t qs = five ? (int64_t)offsetof(blk_q5_k, qs) : (int64_t)offsetof(blk_q4_k, qs);
    const __m512i k63 = _mm512_set1_epi32(63), k15 = _mm512_set1_epi32(15), k3 = _mm512_set1_epi32(3);
    for (int64_t i = 0; i < ns; i++) {
        q4_k_panel *pi = p + i;
        ra_panel_prefetch(W, wrow, ns, i, bs, PANEL_ROWS);
        // d, dmin and the 12 bytes of 6-bit scales and mins of all 16 rows at once (as ra_unpack_scales_k4).
        __m512i h[4];
        block_heads16(W, wrow, i * bs, nrows, h);
        _mm512_store_ps(pi->d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h[0])));
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
            _mm512_store_si512(pi->sc[j], scale_pair(sc_lo));
            _mm512_store_si512(pi->sc[j + 4], scale_pair(sc_hi));
        }
        for (int q = 0; q < 4; q++) _mm512_store_si512(pi->mins[q], _mm512_or_si512(m[2 * q], _mm512_slli_epi32(m[2 * q + 1], 16)));
        // Group g of a row (64 elements: low nibbles 64g..64g+31, high 64g+32..64g+63) is one vector of 16
        // element quartets; across the 16 rows that is a 16 × 16 matrix of quartets to transpose. Q5_K: element l
        // of the low half takes bit 2g of qh byte l as its fifth bit, of the high half bit 2g + 1.
        for (int g = 0; g < 4; g++) {
            __m512i rows[16], cols[16];
            for (int r = 0; r < PANEL_ROWS; r++) {
                if (r >= nrows) { rows[r] = _mm512_setzero_si512(); continue; }
                const uint8_t *a = W + r * wrow + i * bs;
                const __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)(a + qs + 32 * g));
                rows[r] = _mm512_and_si512(cat256(q, _mm256_srli_epi16(q, 4)), m4);
                if (five) {
                    const __m256i qh = _mm256_loadu_si256((const __m256i *)(const void *)(a + offsetof(blk_q5_k, qh)));
                    const __m512i hb = _mm512_and_si512(cat256(_mm256_srli_epi16(qh, 2 * g), _mm256_srli_epi16(qh, 2 * g + 1)), one);
                    rows[r] = _mm512_or_si512(rows[r], _mm512_slli_epi16(hb, 4));
                }
            }
            transpose16x16_epi32(rows, cols);
            for (int e = 0; e < 16; e++) _mm512_store_si512(pi->q[16 * g + e], cols[e]);
        }
    }
}

// Per super-block i of a panel and nx activation rows: I (Σ scale · quant · activation) and M (Σ min · activation
// block sum), exact int32, of the 16 weight rows (lanes).
RA_INLINE void k4_panel_sums(const q4_k_panel *pi, const uint8_t *x, int64_t xs, const ra_q4_k_xsum *xsum, int64_t ns,
                             int64_t i, __m512i *si, __m512i *mi, const int nx) {
    const int8_t *y[PANEL_GROUP];
    for (int k = 0; k < nx; k++) {
        y[k] = ((const blk_q8_k *)(const void *)(x + k * xs))[i].qs;
        si[k] = _mm512_setzero_si512();
    }
    // With 4 activation rows or fewer each row's 8 vpdpbusd of a sub-block run as two chains (even and odd quartets,
    // added at the end: the same int32 sums), so that 8 chains cover the instruction's latency as 8 rows do.
    const int split = nx <= 4;
    for (int j = 0; j < 8; j++) {
        __m512i s[PANEL_GROUP], s2[PANEL_GROUP];
        for (int k = 0; k < nx; k++) s[k] = s2[k] = _mm512_setzero_si512();
        for (int e = 0; e < 8; e++) {
            const __m512i wv = _mm512_load_si512((const void *)pi->q[8 * j + e]);
            for (int k = 0; k < nx; k++) {
                int32_t y4;
                memcpy(&y4, y[k] + 32 * j + 4 * e, 4);
                if (split && (e & 1)) s2[k] = _mm512_dpbusd_epi32(s2[k], wv, _mm512_set1_epi32(y4));
                else s[k] = _mm512_dpbusd_epi32(s[k], wv, _mm512_set1_epi32(y4));
            }
        }
        if (split)
            for (int k = 0; k < nx; k++) s[k] = _mm512_add_epi32(s[k], s2[k]);
        const __m512i sc = _mm512_load_si512((const void *)pi->sc[j]);
        RA_UNROLL   // (left rolled, clang kept si and s on the stack here: a store and two loads a row and sub-block)
        for (int k = 0; k < nx; k++) si[k] = scale_add(si[k], s[k], sc);
    }
    for (int k = 0; k < nx; k++) {
        const ra_q4_k_xsum *xk = xsum + k * ns + i;
        mi[k] = _mm512_setzero_si512();
        for (int q = 0; q < 4; q++) mi[k] = _mm512_dpwssd_epi32(mi[k], _mm512_load_si512((const void *)pi->mins[q]), _mm512_set1_epi32((int)xk->bs[q]));
    }
}

// One panel × nx activation rows xs bytes apart: out[k * os + r] for the rows in mask, in the AVX2 dot's order:
// Q4_K (dot_q4_k) acc + I·(d·dy), then − M·(dmin·dy), each rounded once; Q5_K (dot_q5_k, five) two chains per
// activation row, acc + I·(d·dy) and m + M·(dmin·dy), then acc − m, with at most Q5_K_GROUP rows a step (4 × 4
// vectors of chains and sums in the registers).
enum { Q5_K_GROUP = 4 };
__attribute__((always_inline)) RA_TARGET static inline void k4_panel_m(int64_t ns, const q4_k_panel *p, const uint8_t *x, int64_t xs,
                                                                     const ra_q4_k_xsum *xsum, float *out, int64_t os, __mmask16 mask,
                                                                     const int nx, const int five) {
    __m512 acc[PANEL_GROUP], am[PANEL_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = am[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        __m512i si[PANEL_GROUP], mi[PANEL_GROUP];
        k4_panel_sums(p + i, x, xs, xsum, ns, i, si, mi, nx);
        const __m512 d = _mm512_load_ps(p[i].d), dmin = _mm512_load_ps(p[i].dmin);
        for (int k = 0; k < nx; k++) {
            const __m512 dy = _mm512_set1_ps(xsum[k * ns + i].d);
            if (five) am[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mi[k]), _mm512_mul_ps(dmin, dy), am[k]);
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(si[k]), _mm512_mul_ps(d, dy), acc[k]);
            if (!five) acc[k] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mi[k]), _mm512_mul_ps(dmin, dy), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) _mm512_mask_storeu_ps(out + k * os, mask, five ? _mm512_sub_ps(acc[k], am[k]) : acc[k]);
}

RA_INLINE void k4_panel_run(int64_t ns, const q4_k_panel *p, const uint8_t *x, int64_t xs, const ra_q4_k_xsum *xsum,
                            float *out, int64_t os, __mmask16 mask, int nx, const int five) {
    switch (nx) {
    case 8: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 8, five); break;
    case 7: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 7, five); break;
    case 6: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 6, five); break;
    case 5: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 5, five); break;
    case 4: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 4, five); break;
    case 3: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 3, five); break;
    case 2: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 2, five); break;
    default: k4_panel_m(ns, p, x, xs, xsum, out, os, mask, 1, five); break;
    }
}

// The same panel from rows repacked at load (x8.c; k4x8_head, kernels_internal.h): a panel's 16 rows are two groups of 8
// (G, and G + group_bytes for nrows 16; rows 8..15 zero for nrows 8), whose dword vectors already hold 8 rows' quartets
// side by side: the nibbles split (with Q5_K's fifth bits) and the byte scales and mins widened, with no transpose.
RA_INLINE void k4_pack_x8(const uint8_t *G, int64_t group_bytes, int64_t ns, int nrows, q4_k_panel *p, const int five) {
    const int64_t gb = five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES, oqs = five ? K4X8_QS5 : K4X8_QS4;
    static const uint8_t zero_group[RA_Q5_K_X8_GROUP_BYTES];   // the absent second group of a partial panel
    _Static_assert(RA_Q5_K_X8_GROUP_BYTES >= RA_Q4_K_X8_GROUP_BYTES, "zero_group covers both");
    for (int64_t i = 0; i < ns; i++) {
        q4_k_panel *pi = p + i;
        const uint8_t *b[2] = { G + i * gb, nrows > 8 ? G + group_bytes + i * gb : zero_group };
        const k4x8_head *h[2] = { (const k4x8_head *)(const void *)b[0], (const k4x8_head *)(const void *)b[1] };
#define RA_HALVES(f) halves16(_mm_loadu_si128((const __m128i *)(const void *)h[0]->f), _mm_loadu_si128((const __m128i *)(const void *)h[1]->f))
#define RA_BYTES(f) cat256(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h[0]->f)), \
                           _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h[1]->f)))
        _mm512_store_ps(pi->d, RA_HALVES(d));
        _mm512_store_ps(pi->dmin, RA_HALVES(dmin));
        for (int j = 0; j < 8; j++) _mm512_store_si512(pi->sc[j], scale_pair(RA_BYTES(sc[j])));
        for (int q = 0; q < 4; q++) _mm512_store_si512(pi->mins[q], int16_pairs(RA_BYTES(mn[2 * q]), RA_BYTES(mn[2 * q + 1])));
#undef RA_HALVES
#undef RA_BYTES
        for (int g = 0; g < 4; g++) {
            for (int e = 0; e < 8; e++) {
                __m256i lo[2], hi[2];
                for (int k = 0; k < 2; k++) {
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(b[k] + oqs + 256 * g + 32 * e));
                    const __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(const void *)(b[k] + K4X8_QH + 32 * e)) : _mm256_setzero_si256();
                    split_quants(v, qh, 2 * g, 2 * g + 1, five, &lo[k], &hi[k]);
                }
                _mm512_store_si512(pi->q[16 * g + e], cat256(lo[0], lo[1]));
                _mm512_store_si512(pi->q[16 * g + 8 + e], cat256(hi[0], hi[1]));
            }
        }
    }
}

// x8: w holds rows repacked at load (then r0 and r1 are multiples of 8).
RA_INLINE int k4_matmul(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, int64_t r0, int64_t r1,
                        uint8_t *scratch, int64_t scratch_bytes, const int five, const int x8) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q4_K_BATCH_SCRATCH(n, nb) || (x8 && (r0 % 8 != 0 || r1 % 8 != 0))) return 0;
    const int64_t wrow = x8 ? ns * (five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES) / 8
                            : ns * (five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k)),
                  xrow = ns * (int64_t)sizeof(blk_q8_k);
    const int group = five ? Q5_K_GROUP : PANEL_GROUP;
    const uint8_t *W = w, *X = x;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    q4_k_panel *panel = (q4_k_panel *)(void *)base;
    ra_q4_k_xsum *xsum = (ra_q4_k_xsum *)(void *)(base + ns * (int64_t)sizeof(q4_k_panel));
    ra_q4_k_xsums(X, xrow, ns, nb, xsum);
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL_ROWS ? r1 - p0 : PANEL_ROWS);
        if (x8) k4_pack_x8(W + p0 * wrow, 8 * wrow, ns, nr, panel, five);
        else k4_pack_panel(W + p0 * wrow, wrow, ns, nr, panel, five);
        const __mmask16 mask = (__mmask16)((1u << nr) - 1u);
        for (int64_t b0 = 0; b0 < nb; b0 += group) {
            const int nx = (int)(nb - b0 < group ? nb - b0 : group);
            k4_panel_run(ns, panel, X + b0 * xrow, xrow, xsum + b0 * ns, out + b0 * out_stride + p0, out_stride, mask, nx, five);
        }
    }
    return 1;
}

RA_TARGET int ra_matmul_q4_k_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, 0, 0);
}

RA_TARGET int ra_matmul_q5_k_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, 1, 0);
}

RA_TARGET int ra_matmul_k4_x8_vnni(int x8, const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                                   int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    if (x8 != RA_Q4_K_X8 && x8 != RA_Q5_K_X8) return 0;
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, x8 == RA_Q5_K_X8, 1);
}

// MARK: - Q6_K batches with VNNI: the same panels, with 16 sub-blocks of 16 elements and int8 scales
//
// vpdpbusd multiplies unsigned bytes by signed ones. Here the quants are the signed ones, as the dot has them (Q6_K's
// less 32: -32..31), and the activations the unsigned ones: their Q8_K quants plus 128 (1..255; ra_q8_k_plus128,
// converted once per product, kernels_internal.h), broadcast to a register. The +128 adds to a row's super-block sum
// 128 · Σ_j scale_j · (sum of the row's quants of sub-block j), a constant of the weights that the pack computes
// (corr) and the run takes off in one subtraction: the exact int32 of the AVX2 dot. (Stop 45 had it the other way —
// quants unsigned, the offset from the Q8_K block sums by 8 vpdpwssd per activation row and super-block — which was
// 10-13% of the panels' time; engine-notes.md, "Stop 46".)

// One super-block of a Q6_K panel: q as for Q4_K, signed; sc[j][r] = scale j of row r as scale_add's multiplier; d[r];
// corr[r] = the +128 of the activations in row r's int32 sum (above). As the AVX2 dot, the super-block's whole int32
// sum meets d·dy in one fma.
typedef struct {
    int8_t q[64][64];
    int32_t sc[16][16];
    float d[16];
    int32_t corr[16];
} q6_k_panel;
_Static_assert(sizeof(q6_k_panel) % 64 == 0, "q6_k_panel keeps 64-byte alignment");
_Static_assert(sizeof(q6_k_panel) <= RA_Q6_K_BATCH_PANEL_BYTES, "RA_Q6_K_BATCH_SCRATCH covers the panel");

// corr of a packed super-block pi with sub sub-blocks of int32 scales sc[j]: 128 · Σ_j sc_j · (Σ of each row's quants of
// sub-block j). At most 16 · 128 · 16 · 32 (Q6_K, int8 scales) or 8 · 32 · 32 · 127 (IQ4_XS) before the factor 128: below
// 2^28 after.
RA_INLINE void k_panel_corr(q6_k_panel *pi, const __m512i *sc, const int sub) {
    const int quartets = 64 / sub;
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i c = _mm512_setzero_si512();
    for (int j = 0; j < sub; j++) {
        __m512i w = _mm512_setzero_si512();
        for (int e = 0; e < quartets; e++) w = _mm512_dpbusd_epi32(w, ones, _mm512_load_si512((const void *)pi->q[quartets * j + e]));
        c = _mm512_add_epi32(c, _mm512_mullo_epi32(w, sc[j]));
    }
    _mm512_store_si512(pi->corr, _mm512_slli_epi32(c, 7));
}

RA_TARGET static void q6_k_pack_panel(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, q6_k_panel *p) {
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30), k32 = _mm512_set1_epi8(32);
    for (int64_t i = 0; i < ns; i++) {
        q6_k_panel *pi = p + i;
        ra_panel_prefetch(W, wrow, ns, i, (int64_t)sizeof(blk_q6_k), PANEL_ROWS);
        // d and the 16 int8 scales of all 16 rows at once.
        __m512i hd[4];
        block_heads16(W, wrow, i * (int64_t)sizeof(blk_q6_k) + (int64_t)offsetof(blk_q6_k, scales), nrows, hd);
        uint16_t dh[16];
        for (int r = 0; r < PANEL_ROWS; r++) dh[r] = r < nrows ? ((const blk_q6_k *)(const void *)(W + r * wrow))[i].d : 0;
        _mm512_store_ps(pi->d, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh)));
        __m512i sc[16];
        for (int j = 0; j < 16; j++) {   // scale j: byte j % 4 of dword j / 4, sign-extended
            sc[j] = _mm512_srai_epi32(_mm512_slli_epi32(hd[j / 4], 24 - 8 * (j % 4)), 24);
            _mm512_store_si512(pi->sc[j], scale_pair(sc[j]));
        }
        // Per half h (128 elements) two vectors of 64 elements in order: [ql low nibbles | 2 bits of qh] for
        // elements 128h..128h+63, [ql high nibbles | the next 2 bits] for 128h+64..128h+127, less 32.
        for (int h = 0; h < 2; h++) {
            __m512i lo[16], hi[16], cols[16];
            for (int r = 0; r < PANEL_ROWS; r++) {
                if (r >= nrows) { lo[r] = hi[r] = _mm512_setzero_si512(); continue; }
                const blk_q6_k *a = (const blk_q6_k *)(const void *)(W + r * wrow) + i;
                const __m512i l = _mm512_loadu_si512((const void *)(a->ql + 64 * h));
                const __m256i qh = _mm256_loadu_si256((const __m256i *)(a->qh + 32 * h));
                const __m512i h2 = cat256(qh, _mm256_srli_epi16(qh, 2));
                lo[r] = _mm512_sub_epi8(_mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(h2, 4), m30)), k32);
                hi[r] = _mm512_sub_epi8(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(h2, m30)), k32);
            }
            transpose16x16_epi32(lo, cols);
            for (int e = 0; e < 16; e++) _mm512_store_si512(pi->q[32 * h + e], cols[e]);
            transpose16x16_epi32(hi, cols);
            for (int e = 0; e < 16; e++) _mm512_store_si512(pi->q[32 * h + 16 + e], cols[e]);
        }
        k_panel_corr(pi, sc, 16);
    }
}

// One panel × nx activation rows: x the Q8_K rows (xs bytes apart; their d), xu their quants plus 128 (n = 256 · ns
// bytes a row). sub: the super-block's sub-blocks, each with a scale (Q6_K: 16 of 16 elements; IQ4_XS's panels below:
// 8 of 32).
__attribute__((always_inline)) RA_TARGET static inline void q6_k_panel_m(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs,
                                                                       const uint8_t *xu, float *out, int64_t os, __mmask16 mask,
                                                                       const int nx, const int sub) {
    const int quartets = 64 / sub;
    __m512 acc[PANEL_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const q6_k_panel *pi = p + i;
        const blk_q8_k *y[PANEL_GROUP];
        const uint8_t *yu[PANEL_GROUP];
        for (int k = 0; k < nx; k++) {
            y[k] = (const blk_q8_k *)(const void *)(x + k * xs) + i;
            yu[k] = xu + (k * ns + i) * QK_K;
        }
        __m512i si[PANEL_GROUP];
        for (int k = 0; k < nx; k++) si[k] = _mm512_setzero_si512();
        for (int j = 0; j < sub; j++) {
            __m512i s[PANEL_GROUP];
            for (int k = 0; k < nx; k++) s[k] = _mm512_setzero_si512();
            for (int e = 0; e < quartets; e++) {
                const __m512i wv = _mm512_load_si512((const void *)pi->q[quartets * j + e]);
                for (int k = 0; k < nx; k++) {
                    int32_t y4;
                    memcpy(&y4, yu[k] + 4 * (quartets * j + e), 4);
                    s[k] = _mm512_dpbusd_epi32(s[k], _mm512_set1_epi32(y4), wv);
                }
            }
            const __m512i sc = _mm512_load_si512((const void *)pi->sc[j]);
            RA_UNROLL   // (as in k4_panel_sums)
            for (int k = 0; k < nx; k++) si[k] = scale_add(si[k], s[k], sc);
        }
        const __m512 d = _mm512_load_ps(pi->d);
        const __m512i corr = _mm512_load_si512((const void *)pi->corr);
        for (int k = 0; k < nx; k++) {
            // dot_q6_k: Σ scale·(q - 32)·y as one int32, then acc + I·(d·dy)
            const __m512i isum = _mm512_sub_epi32(si[k], corr);
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, _mm512_set1_ps(y[k]->d)), acc[k]);
        }
    }
    for (int k = 0; k < nx; k++) _mm512_mask_storeu_ps(out + k * os, mask, acc[k]);
}

RA_INLINE void k_panel_run(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs, const uint8_t *xu, float *out, int64_t os,
                           __mmask16 mask, int nx, const int sub) {
    switch (nx) {
    case 8: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 8, sub); break;
    case 7: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 7, sub); break;
    case 6: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 6, sub); break;
    case 5: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 5, sub); break;
    case 4: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 4, sub); break;
    case 3: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 3, sub); break;
    case 2: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 2, sub); break;
    default: q6_k_panel_m(ns, p, x, xs, xu, out, os, mask, 1, sub); break;
    }
}
RA_TARGET static void q6_k_panel_run(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs, const uint8_t *xu, float *out,
                                     int64_t os, __mmask16 mask, int nx) {
    k_panel_run(ns, p, x, xs, xu, out, os, mask, nx, 16);
}

// The same panel from rows repacked at load (x8.c; Q6X8_*, kernels_internal.h): two groups of 8 rows (G, and
// G + group_bytes for nrows 16; rows 8..15 zero for nrows 8). q6_k_quants_v's bit operations on a group's vectors give
// 8 rows' quartets side by side, so there is no transpose; the scales are widened from their bytes.
RA_INLINE void q6_k_pack_x8(const uint8_t *G, int64_t group_bytes, int64_t ns, int nrows, q6_k_panel *p) {
    static const uint8_t zero_group[RA_Q6_K_X8_GROUP_BYTES];   // the absent second group of a partial panel
    for (int64_t i = 0; i < ns; i++) {
        q6_k_panel *pi = p + i;
        const uint8_t *b[2] = { G + i * RA_Q6_K_X8_GROUP_BYTES, nrows > 8 ? G + group_bytes + i * RA_Q6_K_X8_GROUP_BYTES : zero_group };
        _mm512_store_ps(pi->d, halves16(_mm_loadu_si128((const __m128i *)(const void *)(b[0] + Q6X8_D)),
                                        _mm_loadu_si128((const __m128i *)(const void *)(b[1] + Q6X8_D))));
        __m512i sc[16];
        for (int j = 0; j < 16; j++) {
            sc[j] = cat256(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b[0] + Q6X8_SC + 8 * j))),
                           _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b[1] + Q6X8_SC + 8 * j))));
            _mm512_store_si512(pi->sc[j], scale_pair(sc[j]));
        }
        const __m512i k32 = _mm512_set1_epi8(32);
        for (int h = 0; h < 2; h++) {
            for (int e = 0; e < 8; e++) {
                __m256i q[2][4];
                for (int k = 0; k < 2; k++) {
                    const uint8_t *v = b[k] + Q6X8_QUANTS(h, e);
                    q6_k_quants_v(_mm256_loadu_si256((const __m256i *)(const void *)v), _mm256_loadu_si256((const __m256i *)(const void *)(v + 32)),
                                  _mm256_loadu_si256((const __m256i *)(const void *)(v + 64)), q[k]);
                }
                for (int c = 0; c < 4; c++) _mm512_store_si512(pi->q[32 * h + 8 * c + e], _mm512_sub_epi8(cat256(q[0][c], q[1][c]), k32));
            }
        }
        k_panel_corr(pi, sc, 16);
    }
}

// The batches on Q6_K's panels: Q6_K's file rows (K6_FILE), Q6_K's or IQ4_XS's rows repacked at load (K6_X8, IQ4X8;
// r0 and r1 multiples of 8). The IQ4_XS panels are below. xu: the activations' quants plus 128 (ra_q8_k_plus128), or
// NULL to convert them here, after the panel in the scratch (RA_Q6_K_VNNI_SCRATCH).
enum { K6_FILE, K6_X8, IQ4X8 };
RA_INLINE void iq4_xs_vnni_pack_x8(const uint8_t *G, int64_t group_bytes, int64_t ns, int nrows, q6_k_panel *p);
RA_TARGET static void iq4_xs_vnni_run(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs, const uint8_t *xu, float *out,
                                      int64_t os, __mmask16 mask, int nx);
RA_INLINE int q6_k_matmul(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out, int64_t out_stride,
                          int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, const int kind) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < (xu ? RA_Q6_K_BATCH_SCRATCH(n) : RA_Q6_K_VNNI_SCRATCH(n, nb)) ||
        (kind != K6_FILE && (r0 % 8 != 0 || r1 % 8 != 0)))
        return 0;
    // bytes a row (a group holds 8 rows' bytes: for Q6_K the file's, for IQ4_XS its repacked super-blocks')
    const int64_t wrow = kind == IQ4X8 ? ns * RA_IQ4_XS_X8_GROUP_BYTES / 8 : ns * (int64_t)sizeof(blk_q6_k),
                  xrow = ns * (int64_t)sizeof(blk_q8_k);
    const uint8_t *W = w, *X = x;
    q6_k_panel *panel = (q6_k_panel *)(void *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    if (!xu) {
        uint8_t *own = (uint8_t *)(panel + ns);
        ra_q8_k_plus128(x, n, nb, own);
        xu = own;
    }
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL_ROWS ? r1 - p0 : PANEL_ROWS);
        if (kind == K6_FILE) q6_k_pack_panel(W + p0 * wrow, wrow, ns, nr, panel);
        else if (kind == K6_X8) q6_k_pack_x8(W + p0 * wrow, 8 * wrow, ns, nr, panel);
        else iq4_xs_vnni_pack_x8(W + p0 * wrow, 8 * wrow, ns, nr, panel);
        const __mmask16 mask = (__mmask16)((1u << nr) - 1u);
        for (int64_t b0 = 0; b0 < nb; b0 += PANEL_GROUP) {
            const int nx = (int)(nb - b0 < PANEL_GROUP ? nb - b0 : PANEL_GROUP);
            (kind == IQ4X8 ? iq4_xs_vnni_run : q6_k_panel_run)(ns, panel, X + b0 * xrow, xrow, xu + b0 * n, out + b0 * out_stride + p0,
                                                                out_stride, mask, nx);
        }
    }
    return 1;
}

RA_TARGET int ra_matmul_q6_k_vnni(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out,
                                  int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q6_k_matmul(w, n, x, xu, nb, out, out_stride, r0, r1, scratch, scratch_bytes, K6_FILE);
}
RA_TARGET int ra_matmul_q6_k_x8_vnni(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out,
                                     int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q6_k_matmul(w, n, x, xu, nb, out, out_stride, r0, r1, scratch, scratch_bytes, K6_X8);
}

// MARK: - The 32-element block types with VNNI: the same panels of 16 weight rows, one scale per block of 32
//
// Q8_0, Q4_0, Q5_0, Q4_1 and Q5_1 (avx2_internal.h's B32_* types). The quants are stored unsigned so that vpdpbusd
// takes the activations as they are: Q8_0 as w + 128, Q4_0 and Q5_0 as 0..15 and 0..31 (their offset 8 or 16 not
// taken off), Q4_1 and Q5_1 as they are; the extra offset · Σx of each activation block (128, 8, 16 or 0) is the start
// value of its sum. Per block and activation row: 8 vpdpbusd, then c = fma(I, d_w · d_x, c), and for the types with a
// min c = fma(m_w, s_x, c), into chain j % 4 of that row, the chains summed (c0 + c1) + (c2 + c3) at the end: dot_b32's
// order, so decoding with the AVX2 rows kernels gives the same bits. The activation scales are the floats the AVX2
// kernels take (b32_xscales: per row n/32 d, then n/32 s or Σx), converted once per product by the caller
// (ra_matmul_rows_side) or here.

typedef struct {
    uint8_t q[8][64];   // quartet e of the block for the 16 rows, unsigned as above
    float dw[16];
    float mw[16];       // the rows' mins (Q4_1, Q5_1)
} b32_vnni_panel;
_Static_assert(sizeof(b32_vnni_panel) <= RA_B32_VNNI_PANEL_BYTES && sizeof(b32_vnni_panel) % 64 == 0, "b32_vnni_panel size");

// Activation rows per step: 4, each with dot_b32's 4 chains (16 accumulators).
enum { B32_VNNI_GROUP = 4 };

// The offset vpdpbusd's unsigned weights carry: 128 for Q8_0 (stored + 128), the signed 4- and 5-bit types' own.
RA_INLINE int b32_vnni_offset(const int t) { return t == B32_Q8_0 ? 128 : b32_offset(t); }

RA_INLINE void b32_vnni_pack_panel(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, b32_vnni_panel *p, const int t) {
    const int64_t wb = b32_wbytes(t);
    for (int64_t j = 0; j < nblk; j += 2) {
        __m512i rows[16], cols[16];
        uint16_t dh[2][16], mh[2][16];
        ra_panel_prefetch(W, wrow, nblk / 2, j / 2, 2 * wb, PANEL_ROWS);
        for (int r = 0; r < PANEL_ROWS; r++) {
            if (r >= nrows) {
                rows[r] = _mm512_setzero_si512();
                dh[0][r] = dh[1][r] = mh[0][r] = mh[1][r] = 0;
                continue;
            }
            const uint8_t *a = W + r * wrow + j * wb;
            rows[r] = cat256(b32_quants_raw(a, t), b32_quants_raw(a + wb, t));
            if (t == B32_Q8_0) rows[r] = _mm512_xor_si512(rows[r], _mm512_set1_epi8((char)0x80));
            memcpy(&dh[0][r], a, 2);
            memcpy(&dh[1][r], a + wb, 2);
            if (b32_min(t)) {
                memcpy(&mh[0][r], a + 2, 2);
                memcpy(&mh[1][r], a + wb + 2, 2);
            }
        }
        transpose16x16_epi32(rows, cols);
        for (int e = 0; e < 8; e++) {
            _mm512_store_si512(p[j].q[e], cols[e]);
            _mm512_store_si512(p[j + 1].q[e], cols[8 + e]);
        }
        _mm512_store_ps(p[j].dw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh[0])));
        _mm512_store_ps(p[j + 1].dw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh[1])));
        if (b32_min(t)) {
            _mm512_store_ps(p[j].mw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)mh[0])));
            _mm512_store_ps(p[j + 1].mw, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)mh[1])));
        }
    }
}

// The same panel from rows repacked at load (x8.c; b32x8_layout, kernels_internal.h): G is a group of 8 rows and the
// next group, group_bytes further, holds rows 8..15 (nrows 16) or is not read (nrows 8, rows 8..15 zero). A group's
// quartet e is one 32-byte vector, 4 bytes a row, so a panel vector is two groups' quartets side by side once the nibbles
// are split and the fifth bits put in (split_quants), Q8_0's bytes plus 128: no transpose.
RA_INLINE void b32_vnni_pack_x8(const uint8_t *G, int64_t group_bytes, int64_t nblk, int nrows, b32_vnni_panel *p, const int t) {
    const int five = t == B32_Q5_0 || t == B32_Q5_1, min = b32_min(t), q8 = t == B32_Q8_0;
    const b32x8_layout l = ra_b32x8_layout(five, min, q8 ? 8 : 4);
    for (int64_t j = 0; j < nblk; j++) {
        __m256i q[2][8];
        __m128i dh[2], mh[2];
        for (int g = 0; g < 2; g++) {
            if (8 * g >= nrows) {
                for (int e = 0; e < 8; e++) q[g][e] = _mm256_setzero_si256();
                dh[g] = mh[g] = _mm_setzero_si128();
                continue;
            }
            const uint8_t *a = G + g * group_bytes + j * l.bytes;
            dh[g] = _mm_loadu_si128((const __m128i *)(const void *)a);
            mh[g] = min ? _mm_loadu_si128((const __m128i *)(const void *)(a + l.m)) : _mm_setzero_si128();
            if (q8) {
                for (int e = 0; e < 8; e++)
                    q[g][e] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(a + l.qs + 32 * e)),
                                               _mm256_set1_epi8((char)0x80));
            } else {
                const __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(const void *)(a + l.qh)) : _mm256_setzero_si256();
                for (int e = 0; e < 4; e++)
                    split_quants(_mm256_loadu_si256((const __m256i *)(const void *)(a + l.qs + 32 * e)), qh, e, 4 + e, five,
                                 &q[g][e], &q[g][4 + e]);
            }
        }
        for (int e = 0; e < 8; e++) _mm512_store_si512(p[j].q[e], cat256(q[0][e], q[1][e]));
        _mm512_store_ps(p[j].dw, halves16(dh[0], dh[1]));
        if (min) _mm512_store_ps(p[j].mw, halves16(mh[0], mh[1]));
    }
}

// One block j of a panel against nx activation rows (qs: their quants, xs bytes apart; side: their scales, 2 · nblk
// floats a row): the int32 sums of the 16 weight rows (lanes), added as the AVX2 dot adds block j, to chain j % 4.
RA_INLINE void b32_vnni_block(const b32_vnni_panel *pj, const uint8_t *qs, int64_t xs, const float *side, int64_t nblk, int64_t j,
                              __m512 *chain, const int nx, const int t) {
    // two chains of vpdpbusd per activation row (even and odd quartets; the same int32 sum), 8 in flight
    __m512i s[B32_VNNI_GROUP], s2[B32_VNNI_GROUP];
    for (int k = 0; k < nx; k++) {
        // the Σx of the types without a min is exact in float (|Σx| <= 32 · 128)
        s[k] = b32_min(t) ? _mm512_setzero_si512() : _mm512_set1_epi32(-b32_vnni_offset(t) * (int32_t)side[k * 2 * nblk + nblk + j]);
        s2[k] = _mm512_setzero_si512();
    }
    for (int e = 0; e < 8; e++) {
        const __m512i wv = _mm512_load_si512((const void *)pj->q[e]);
        for (int k = 0; k < nx; k++) {
            int32_t y4;
            memcpy(&y4, qs + k * xs + j * b32_xbytes(t) + 4 * e, 4);
            if (e & 1) s2[k] = _mm512_dpbusd_epi32(s2[k], wv, _mm512_set1_epi32(y4));
            else s[k] = _mm512_dpbusd_epi32(s[k], wv, _mm512_set1_epi32(y4));
        }
    }
    for (int k = 0; k < nx; k++) s[k] = _mm512_add_epi32(s[k], s2[k]);
    const __m512 dw = _mm512_load_ps(pj->dw);
    for (int k = 0; k < nx; k++) {
        const float *sk = side + k * 2 * nblk;
        chain[4 * k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[k]), _mm512_mul_ps(dw, _mm512_set1_ps(sk[j])), chain[4 * k]);
        if (b32_min(t)) chain[4 * k] = _mm512_fmadd_ps(_mm512_load_ps(pj->mw), _mm512_set1_ps(sk[nblk + j]), chain[4 * k]);
    }
}

RA_INLINE void b32_vnni_panel_m(int64_t nblk, const b32_vnni_panel *p, const uint8_t *qs, int64_t xs, const float *side, float *out,
                                int64_t os, __mmask16 mask, const int nx, const int t) {
    __m512 acc[4 * B32_VNNI_GROUP];   // acc[4k + c]: chain c of activation row k
    for (int k = 0; k < 4 * nx; k++) acc[k] = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 4 <= nblk; j += 4) {   // spelled out, so that the chains stay in registers
        b32_vnni_block(p + j, qs, xs, side, nblk, j, acc, nx, t);
        b32_vnni_block(p + j + 1, qs, xs, side, nblk, j + 1, acc + 1, nx, t);
        b32_vnni_block(p + j + 2, qs, xs, side, nblk, j + 2, acc + 2, nx, t);
        b32_vnni_block(p + j + 3, qs, xs, side, nblk, j + 3, acc + 3, nx, t);
    }
    if (j < nblk) b32_vnni_block(p + j, qs, xs, side, nblk, j, acc, nx, t);
    if (j + 1 < nblk) b32_vnni_block(p + j + 1, qs, xs, side, nblk, j + 1, acc + 1, nx, t);
    if (j + 2 < nblk) b32_vnni_block(p + j + 2, qs, xs, side, nblk, j + 2, acc + 2, nx, t);
    for (int k = 0; k < nx; k++) {
        // (c0 + c1) + (c2 + c3), as dot_b32
        const __m512 r = _mm512_add_ps(_mm512_add_ps(acc[4 * k], acc[4 * k + 1]), _mm512_add_ps(acc[4 * k + 2], acc[4 * k + 3]));
        _mm512_mask_storeu_ps(out + k * os, mask, r);
    }
}

// side: the activation scales (b32_xscales, 2 · nblk floats a row), or NULL to convert them here into the scratch.
// x8: w holds rows repacked at load (then r0 and r1 are multiples of 8), whose rows take as many bytes as the file's.
RA_INLINE int b32_vnni_matmul(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, const int t, const int x8) {
    const int64_t nblk = n / 32;
    if (n % 64 != 0 || nb < 1 || scratch_bytes < RA_B32_VNNI_SCRATCH(n, nb) || (x8 && (r0 % 8 != 0 || r1 % 8 != 0))) return 0;
    const int64_t wrow = nblk * b32_wbytes(t), xrow = nblk * b32_xbytes(t);
    const uint8_t *W = w, *X = x;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    b32_vnni_panel *panel = (b32_vnni_panel *)(void *)base;
    if (!side) {
        float *own = (float *)(void *)(base + nblk * (int64_t)sizeof(b32_vnni_panel));
        for (int64_t b = 0; b < nb; b++) b32_xscales(X + b * xrow, nblk, own + b * 2 * nblk, own + b * 2 * nblk + nblk, t);
        side = own;
    }
    for (int64_t p0 = r0; p0 < r1; p0 += PANEL_ROWS) {
        const int nr = (int)(r1 - p0 < PANEL_ROWS ? r1 - p0 : PANEL_ROWS);
        if (x8) b32_vnni_pack_x8(W + p0 * wrow, 8 * wrow, nblk, nr, panel, t);
        else b32_vnni_pack_panel(W + p0 * wrow, wrow, nblk, nr, panel, t);
        const __mmask16 mask = (__mmask16)((1u << nr) - 1u);
        for (int64_t b0 = 0; b0 < nb; b0 += B32_VNNI_GROUP) {
            const int nx = (int)(nb - b0 < B32_VNNI_GROUP ? nb - b0 : B32_VNNI_GROUP);
            const uint8_t *qb = X + b0 * xrow + b32_xqs(t);
            const float *sb = side + b0 * 2 * nblk;
            float *ob = out + b0 * out_stride + p0;
            switch (nx) {
            case 4: b32_vnni_panel_m(nblk, panel, qb, xrow, sb, ob, out_stride, mask, 4, t); break;
            case 3: b32_vnni_panel_m(nblk, panel, qb, xrow, sb, ob, out_stride, mask, 3, t); break;
            case 2: b32_vnni_panel_m(nblk, panel, qb, xrow, sb, ob, out_stride, mask, 2, t); break;
            default: b32_vnni_panel_m(nblk, panel, qb, xrow, sb, ob, out_stride, mask, 1, t); break;
            }
        }
    }
    return 1;
}

// MARK: - IQ4_XS batches with VNNI, from rows repacked at load: Q6_K's panels of 16 weight rows × 8 activation rows
//
// A super-block's 8 blocks of 32 take sc[0..8) of the panel. The levels (-127..113) are stored as they are, signed, and
// the activations taken plus 128 as for Q6_K; per block j of 32 elements the sum s_j then holds 128 · Σ levels_j on top,
// which the panel's corr takes off: I = Σ_j sc_j · s_j - corr, the exact int32 of the AVX2 dot (dot_iq4_xs), then its
// fma acc + I · (d · dy) per super-block: the same bits. (|s_j| <= 32 · 255 · 127 < 2^23, as scale_add needs.)

// The panel of two groups of 8 repacked rows (G, and G + group_bytes for nrows 16; rows 8..15 zero for nrows 8): a
// group's dword vectors are 8 rows' quartets side by side already (kernels_internal.h, IQ4X8_QS), its low nibbles block
// j's quartet e and its high ones quartet 4 + e; the levels come from one byte shuffle.
RA_INLINE void iq4_xs_vnni_pack_x8(const uint8_t *G, int64_t group_bytes, int64_t ns, int nrows, q6_k_panel *p) {
    const __m256i lut = iq4_levels256(0);
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int64_t i = 0; i < ns; i++) {
        q6_k_panel *pi = p + i;
        __m128i dh[2];
        __m256i sc[2][8];
        for (int g = 0; g < 2; g++) {
            const uint8_t *a = G + g * group_bytes + i * RA_IQ4_XS_X8_GROUP_BYTES;
            if (8 * g >= nrows) {
                dh[g] = _mm_setzero_si128();
                for (int j = 0; j < 8; j++) sc[g][j] = _mm256_setzero_si256();
                continue;
            }
            dh[g] = _mm_loadu_si128((const __m128i *)(const void *)(a + IQ4X8_D));
            for (int j = 0; j < 8; j++) sc[g][j] = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(a + IQ4X8_SC + 8 * j)));
        }
        __m512i s[8];
        for (int j = 0; j < 8; j++) {
            for (int e = 0; e < 4; e++) {
                __m256i lo[2], hi[2];
                for (int g = 0; g < 2; g++) {
                    if (8 * g >= nrows) {
                        lo[g] = hi[g] = _mm256_setzero_si256();
                        continue;
                    }
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(G + g * group_bytes + i * RA_IQ4_XS_X8_GROUP_BYTES + IQ4X8_QS(j, e)));
                    lo[g] = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, m4));
                    hi[g] = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
                }
                _mm512_store_si512(pi->q[8 * j + e], cat256(lo[0], lo[1]));
                _mm512_store_si512(pi->q[8 * j + 4 + e], cat256(hi[0], hi[1]));
            }
            s[j] = cat256(sc[0][j], sc[1][j]);
            _mm512_store_si512(pi->sc[j], scale_pair(s[j]));
        }
        _mm512_store_ps(pi->d, halves16(dh[0], dh[1]));
        k_panel_corr(pi, s, 8);
    }
}

// (The run: q6_k_panel_m with 8 blocks of 32.)
RA_TARGET static void iq4_xs_vnni_run(int64_t ns, const q6_k_panel *p, const uint8_t *x, int64_t xs, const uint8_t *xu, float *out,
                                      int64_t os, __mmask16 mask, int nx) {
    k_panel_run(ns, p, x, xs, xu, out, os, mask, nx, 8);
}

RA_TARGET int ra_matmul_iq4_xs_x8_vnni(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out,
                                       int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q6_k_matmul(w, n, x, xu, nb, out, out_stride, r0, r1, scratch, scratch_bytes, IQ4X8);
}

#define RA_B32_VNNI(name, t)                                                                                          \
    RA_TARGET int name(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, int64_t r0, \
                       int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {                                         \
        return b32_vnni_matmul(w, n, x, NULL, nb, out, out_stride, r0, r1, scratch, scratch_bytes, t, 0);                \
    }
RA_B32_VNNI(ra_matmul_q8_0_vnni, B32_Q8_0)
RA_B32_VNNI(ra_matmul_q4_0_vnni, B32_Q4_0)
RA_B32_VNNI(ra_matmul_q5_0_vnni, B32_Q5_0)
RA_B32_VNNI(ra_matmul_q4_1_vnni, B32_Q4_1)
RA_B32_VNNI(ra_matmul_q5_1_vnni, B32_Q5_1)

RA_TARGET int ra_matmul_b32_side_vnni(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                                      float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch,
                                      int64_t scratch_bytes) {
    const int x8 = ra_x8_source(weight_type) >= 0, type = x8 ? ra_x8_source(weight_type) : weight_type;
    switch (type) {
    case RA_Q8_0: return b32_vnni_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, B32_Q8_0, x8);
    case RA_Q4_0: return b32_vnni_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, B32_Q4_0, x8);
    case RA_Q5_0: return b32_vnni_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, B32_Q5_0, x8);
    case RA_Q4_1: return b32_vnni_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, B32_Q4_1, x8);
    case RA_Q5_1: return b32_vnni_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, B32_Q5_1, x8);
    default: return 0;
    }
}
#endif

const ra_dot_table RA_TABLE = {
    .dot = { [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16 },
};

#endif
