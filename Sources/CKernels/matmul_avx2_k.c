#include "avx2_panel8.h"

#if defined(__x86_64__)

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
        ra_panel_prefetch(W, wrow, ns, i, bb, PANEL8_ROWS);
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

// The float steps of super-block pi for nx activation rows (xsum: row k's sums at xsum[k * ns]), given their int32
// scale sums si: the mins meet the activation block sums in int32, then, in float exactly as the type's dot,
// acc = fma(I, d · d_x, acc), then Q4_K acc = fnmadd(M, dmin · d_x, acc), Q5_K accm = fma(M, dmin · d_x, accm).
RA_AVX2_INLINE void k4_panel8_tail(const q4_k_panel8 *pi, const ra_q4_k_xsum *xsum, int64_t ns, const __m256i *si, __m256 *acc,
                                   __m256 *accm, const int nx, const int five) {
    const __m256 d = _mm256_load_ps(pi->d), dmin = _mm256_load_ps(pi->dmin);
    for (int k = 0; k < nx; k++) {
        const ra_q4_k_xsum *xk = xsum + k * ns;
        __m256i mi = _mm256_madd_epi16(_mm256_load_si256((const __m256i *)pi->mins[0]), _mm256_set1_epi32((int)xk->bs[0]));
        for (int q = 1; q < 4; q++)
            mi = _mm256_add_epi32(mi, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)pi->mins[q]), _mm256_set1_epi32((int)xk->bs[q])));
        const __m256 dx = _mm256_set1_ps(xk->d);
        acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si[k]), _mm256_mul_ps(d, dx), acc[k]);
        if (five) accm[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_mul_ps(dmin, dx), accm[k]);
        else acc[k] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_mul_ps(dmin, dx), acc[k]);
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
            RA_UNROLL
            for (int e0 = 0; e0 < 8; e0 += run) {
                __m256i s[PANEL8_GROUP];
                for (int k = 0; k < nx; k++) s[k] = _mm256_setzero_si256();
                RA_UNROLL
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
        k4_panel8_tail(p + i, xsum + i, ns, si, acc, accm, nx, five);
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
                             const int64_t wblk) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q4_K_BATCH_SCRATCH(n, nb)) return 0;
    const int64_t wrow = ns * wblk, xrow = ns * (int64_t)sizeof(blk_q8_k);
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
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q4_k_pack_panel8, q4_k_panel8_run,
                     (int64_t)sizeof(blk_q4_k));
}

int ra_matmul_q5_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q5_k_pack_panel8, q5_k_panel8_run,
                     (int64_t)sizeof(blk_q5_k));
}

// Q4_K and Q5_K rows repacked at load (RA_Q4_K_X8 / RA_Q5_K_X8, x8.c): the layout already holds 8 rows' quartets
// side by side, so a panel is their nibbles split in two (with Q5_K's fifth bits added) and the byte scales widened,
// with no transpose. W: a group of 8 rows (nrows is 8); the repacked super-block: k4x8_head (kernels_internal.h).
RA_AVX2_INLINE void k4_x8_pack_panel8(const uint8_t *W, int64_t ns, void *panel, const int five) {
    q4_k_panel8 *p = panel;
    const int64_t gb = five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES, oqs = five ? K4X8_QS5 : K4X8_QS4;
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *b = W + i * gb;
        q4_k_panel8 *pi = p + i;
        const k4x8_head *h = (const k4x8_head *)(const void *)b;
        _mm256_store_ps(pi->d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)h->d)));
        _mm256_store_ps(pi->dmin, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)h->dmin)));
        for (int j = 0; j < 8; j++) {
            const __m256i s = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h->sc[j]));
            _mm256_store_si256((__m256i *)pi->sc[j], _mm256_or_si256(s, _mm256_slli_epi32(s, 16)));
        }
        for (int q = 0; q < 4; q++) {
            const __m256i m0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h->mn[2 * q]));
            const __m256i m1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h->mn[2 * q + 1]));
            _mm256_store_si256((__m256i *)pi->mins[q], _mm256_or_si256(m0, _mm256_slli_epi32(m1, 16)));
        }
        for (int g = 0; g < 4; g++) {
            for (int e = 0; e < 8; e++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(b + oqs + 256 * g + 32 * e));
                const __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(b + K4X8_QH + 32 * e)) : _mm256_setzero_si256();
                __m256i lo, hi;
                split_quants(v, qh, 2 * g, 2 * g + 1, five, &lo, &hi);
                _mm256_store_si256((__m256i *)pi->q[16 * g + e], lo);
                _mm256_store_si256((__m256i *)pi->q[16 * g + 8 + e], hi);
            }
        }
    }
}
RA_AVX2 static void q4_k_x8_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    k4_x8_pack_panel8(W, ns, panel, 0);
}
RA_AVX2 static void q5_k_x8_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    k4_x8_pack_panel8(W, ns, panel, 1);
}

// A batch of repacked Q4_K (five = 0) or Q5_K rows through k4_matmul with the panel run `run`: whole groups only.
RA_AVX2 static int k4_x8_matmul(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, int64_t r0,
                                int64_t r1, uint8_t *scratch, int64_t scratch_bytes, panel8_run_fn run, const int five) {
    if (r0 % 8 != 0 || r1 % 8 != 0) return 0;
    return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, five ? q5_k_x8_pack_panel8 : q4_k_x8_pack_panel8,
                     run, (five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES) / 8);
}

int ra_matmul_q4_k_x8_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_x8_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q4_k_panel8_run, 0);
}
int ra_matmul_q5_k_x8_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_x8_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q5_k_panel8_run, 1);
}

// MARK: - Q4_K and Q5_K panels with AVX-VNNI (RA_PATH_AVX2_VNNI)
//
// The same panels; per quartet and activation row one vpdpbusd adds the 4 products to the sub-block's int32 sum
// (even and odd quartets in two sums, so 8 chains hide its latency), and the sub-block's sum meets its scale in one
// vpdpwssd, as the VNNI panels' scale_add does (dot_avx512_impl.h): the sum split into its low byte and sum >> 8 by
// one vpshufb, against the int16 pair (scale, 256 · scale). The same int32 I and M as k4_panel8_m, then its fmas:
// the same bits.
#define RA_AVXVNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#define RA_AVXVNNI_INLINE RA_AVXVNNI static inline __attribute__((always_inline))

RA_AVXVNNI_INLINE void k4_vnni8_m(int64_t ns, const q4_k_panel8 *p, const uint8_t *x, int64_t xs, const ra_q4_k_xsum *xsum,
                                  float *out, int64_t os, int nr, const int nx, const int five) {
    const __m256i split = _mm256_setr_epi8(0, -1, 1, 2, 4, -1, 5, 6, 8, -1, 9, 10, 12, -1, 13, 14,
                                           0, -1, 1, 2, 4, -1, 5, 6, 8, -1, 9, 10, 12, -1, 13, 14);
    const __m256i lo16 = _mm256_set1_epi32(0xFFFF), hi16 = _mm256_set1_epi32((int)0xFFFF0000u);
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
            // the panel holds each scale in both int16 halves; scale_add's multiplier is (scale, 256 · scale)
            const __m256i scb = _mm256_load_si256((const __m256i *)pi->sc[j]);
            const __m256i sc2 = _mm256_or_si256(_mm256_and_si256(scb, lo16), _mm256_and_si256(_mm256_slli_epi32(scb, 8), hi16));
            __m256i s[PANEL8_GROUP], s2[PANEL8_GROUP];
            for (int k = 0; k < nx; k++) s[k] = s2[k] = _mm256_setzero_si256();
            RA_UNROLL
            for (int e = 0; e < 8; e++) {
                const __m256i wv = _mm256_load_si256((const __m256i *)pi->q[8 * j + e]);
                for (int k = 0; k < nx; k++) {
                    if (e & 1) s2[k] = _mm256_dpbusd_avx_epi32(s2[k], wv, bcast4(y[k] + 32 * j + 4 * e));
                    else s[k] = _mm256_dpbusd_avx_epi32(s[k], wv, bcast4(y[k] + 32 * j + 4 * e));
                }
            }
            for (int k = 0; k < nx; k++)
                si[k] = _mm256_dpwssd_avx_epi32(si[k], _mm256_shuffle_epi8(_mm256_add_epi32(s[k], s2[k]), split), sc2);
        }
        k4_panel8_tail(p + i, xsum + i, ns, si, acc, accm, nx, five);
    }
    for (int k = 0; k < nx; k++) store_rows8(out + k * os, five ? _mm256_sub_ps(acc[k], accm[k]) : acc[k], nr);
}

#define RA_K4_AVXVNNI(name, five)                                                                                      \
    RA_AVXVNNI static void name##_vnni8_run(int64_t ns, const void *panel, const uint8_t *x, int64_t xs,               \
                                            const uint8_t *side, int64_t side_row, float *out, int64_t os, int nr,     \
                                            int nx) {                                                                  \
        (void)side_row;                                                                                                \
        const q4_k_panel8 *p = panel;                                                                                  \
        const ra_q4_k_xsum *xsum = (const ra_q4_k_xsum *)(const void *)side;                                           \
        switch (nx) {                                                                                                  \
        case 4: k4_vnni8_m(ns, p, x, xs, xsum, out, os, nr, 4, five); break;                                           \
        case 3: k4_vnni8_m(ns, p, x, xs, xsum, out, os, nr, 3, five); break;                                           \
        case 2: k4_vnni8_m(ns, p, x, xs, xsum, out, os, nr, 2, five); break;                                           \
        default: k4_vnni8_m(ns, p, x, xs, xsum, out, os, nr, 1, five); break;                                          \
        }                                                                                                              \
    }                                                                                                                  \
    int ra_matmul_##name##_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, \
                                   int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {                  \
        return k4_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack_panel8,             \
                         name##_vnni8_run, five ? (int64_t)sizeof(blk_q5_k) : (int64_t)sizeof(blk_q4_k));        \
    }
RA_K4_AVXVNNI(q4_k, 0)
RA_K4_AVXVNNI(q5_k, 1)

int ra_matmul_q4_k_x8_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_x8_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q4_k_vnni8_run, 0);
}
int ra_matmul_q5_k_x8_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return k4_x8_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q5_k_vnni8_run, 1);
}

// MARK: - Q6_K batches: the same panels of 8 weight rows, 16 sub-blocks of 16 elements with int8 scales
//
// The quants are kept unsigned (0..63, the offset 32 not taken off), so vpmaddubsw applies as for Q4_K; the offset
// is 32 · Σ_j scale_j · (sum of the activations of sub-block j), from the Q8_K block sums by vpmaddwd. A pair sum
// reaches 2 · 63 · 128 = 16128, so two quartets (half a sub-block) are added in int16 before vpmaddwd with the
// sub-block's scale takes them to int32.

// One super-block of a panel: q[e] as for Q4_K (quants 0..63); sc[j][r] = scale j of row r (int16, both halves);
// scp[p][r] = the scales of sub-blocks 2p (low half) and 2p+1 (high half); d[r]. Q3_K and Q2_K (packed from their
// repacked groups, x8.c) use the same panel: quants 0..7 / 0..3, scp the scales against the offset 4 (Q3_K) or Q2_K's
// mins, with dmin[r].
typedef struct {
    uint8_t q[64][32];
    uint32_t sc[16][8];
    uint32_t scp[8][8];
    float d[8];
    float dmin[8];
} q6_k_panel8;
_Static_assert(sizeof(q6_k_panel8) % 32 == 0 && sizeof(q6_k_panel8) <= RA_Q6_K_BATCH_PANEL_BYTES, "q6_k_panel8 size");

RA_AVX2 static void q6_k_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    q6_k_panel8 *p = panel;
    const __m256i lo16 = _mm256_set1_epi32(0xFFFF);
    for (int64_t i = 0; i < ns; i++) {
        q6_k_panel8 *pi = p + i;
        ra_panel_prefetch(W, wrow, ns, i, (int64_t)sizeof(blk_q6_k), PANEL8_ROWS);
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

// A super-block of a panel done: each activation row's offset or mins from its block sums, then in float exactly as the
// one-row dots (k16_dot): acc = fma(sum, d · d_x, acc), the offset in the sum (Q6_K 32, Q3_K 4); Q2_K then
// acc = fnmadd(M, dmin · d_x, acc) with its mins' sum M.
RA_AVX2_INLINE void k16_panel8_finish(const q6_k_panel8 *pi, const blk_q8_k *const y[PANEL8_GROUP], const __m256i si[PANEL8_GROUP],
                                      __m256 acc[PANEL8_GROUP], const int nx, const int t) {
    const __m256 d = _mm256_load_ps(pi->d);
    for (int k = 0; k < nx; k++) {
        __m256i so = _mm256_setzero_si256();
        RA_UNROLL
        for (int q = 0; q < 8; q++) {
            int32_t b2;
            memcpy(&b2, y[k]->bsums + 2 * q, 4);
            so = _mm256_add_epi32(so, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)pi->scp[q]), _mm256_set1_epi32(b2)));
        }
        const __m256 dy = _mm256_set1_ps(y[k]->d);
        if (t == K16_Q2) {
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si[k]), _mm256_mul_ps(d, dy), acc[k]);
            acc[k] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(so), _mm256_mul_ps(_mm256_load_ps(pi->dmin), dy), acc[k]);
        } else {
            const __m256i off = t == K16_Q6 ? _mm256_slli_epi32(so, 5) : _mm256_slli_epi32(so, 2);
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(si[k], off)), _mm256_mul_ps(d, dy), acc[k]);
        }
    }
}

// A super-block's sums for each activation row k < nx: si[k] lane r = Σ_j sc_j · Σ quant · activation over row r's 16
// sub-blocks, the quants as the panel keeps them (the offset and the mins left to k16_panel8_finish).
RA_AVX2_INLINE void k16_panel8_sums(const q6_k_panel8 *pi, const blk_q8_k *const y[PANEL8_GROUP], __m256i si[PANEL8_GROUP], const int nx) {
    for (int j = 0; j < 16; j++) {
        const __m256i sc = _mm256_load_si256((const __m256i *)pi->sc[j]);
        RA_UNROLL
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
}

// The same sums with AVX-512 VNNI's 256-bit vpdpbusd, for Q3_K and Q2_K on the avx512-vnni path (which has no 16-row
// panels for them: stop 44 measured those no faster): a sub-block's 4 quartets against each activation row go straight
// into int32, then times the 8 rows' scale (vpmulld; the panel keeps it as an int16 pair (s, s), taken as s by an
// arithmetic shift). The same integers, so the same bits.
#define RA_VNNI256 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
RA_VNNI256 static inline __attribute__((always_inline)) void k16_panel8_sums_vnni(const q6_k_panel8 *pi, const blk_q8_k *const y[PANEL8_GROUP],
                                                                                 __m256i si[PANEL8_GROUP], const int nx) {
    for (int j = 0; j < 16; j++) {
        const __m256i sc = _mm256_srai_epi32(_mm256_load_si256((const __m256i *)pi->sc[j]), 16);
        __m256i w[4];
        RA_UNROLL
        for (int e = 0; e < 4; e++) w[e] = _mm256_load_si256((const __m256i *)pi->q[4 * j + e]);
        for (int k = 0; k < nx; k++) {
            __m256i s = _mm256_setzero_si256();
            RA_UNROLL
            for (int e = 0; e < 4; e++) s = _mm256_dpbusd_epi32(s, w[e], bcast4(y[k]->qs + 16 * j + 4 * e));
            si[k] = _mm256_add_epi32(si[k], _mm256_mullo_epi32(s, sc));
        }
    }
}

// The panel run of type t (K16_*) against nx = 1..4 activation rows, its super-blocks' sums by `sums`
// (k16_panel8_sums or k16_panel8_sums_vnni, in a function of target `attr`); name##_m is instantiated per nx so its
// loops unroll.
#define RA_K16_PANEL8_RUN(name, attr, sums, t)                                                                              \
    attr static inline __attribute__((always_inline)) void name##_m(int64_t ns, const q6_k_panel8 *p, const uint8_t *x,     \
                                                                    int64_t xs, float *out, int64_t os, int nr, const int nx) { \
        __m256 acc[PANEL8_GROUP];                                                                                           \
        for (int k = 0; k < nx; k++) acc[k] = _mm256_setzero_ps();                                                          \
        for (int64_t i = 0; i < ns; i++) {                                                                                  \
            const q6_k_panel8 *pi = p + i;                                                                                  \
            const blk_q8_k *y[PANEL8_GROUP];                                                                                \
            __m256i si[PANEL8_GROUP];                                                                                       \
            for (int k = 0; k < nx; k++) {                                                                                  \
                y[k] = (const blk_q8_k *)(const void *)(x + k * xs) + i;                                                    \
                si[k] = _mm256_setzero_si256();                                                                             \
            }                                                                                                               \
            sums(pi, y, si, nx);                                                                                            \
            k16_panel8_finish(pi, y, si, acc, nx, t);                                                                       \
        }                                                                                                                   \
        for (int k = 0; k < nx; k++) store_rows8(out + k * os, acc[k], nr);                                                 \
    }                                                                                                                       \
    attr static void name(int64_t ns, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row, \
                          float *out, int64_t os, int nr, int nx) {                                                        \
        (void)side;   /* the block sums are read from the activations */                                                    \
        (void)side_row;                                                                                                     \
        switch (nx) {                                                                                                       \
        case 4: name##_m(ns, panel, x, xs, out, os, nr, 4); break;                                                          \
        case 3: name##_m(ns, panel, x, xs, out, os, nr, 3); break;                                                          \
        case 2: name##_m(ns, panel, x, xs, out, os, nr, 2); break;                                                          \
        default: name##_m(ns, panel, x, xs, out, os, nr, 1); break;                                                         \
        }                                                                                                                   \
    }
RA_K16_PANEL8_RUN(q6_k_panel8_run, RA_AVX2, k16_panel8_sums, K16_Q6)
RA_K16_PANEL8_RUN(q3_k_panel8_run, RA_AVX2, k16_panel8_sums, K16_Q3)
RA_K16_PANEL8_RUN(q2_k_panel8_run, RA_AVX2, k16_panel8_sums, K16_Q2)
RA_K16_PANEL8_RUN(q3_k_panel8_vnni_run, RA_VNNI256, k16_panel8_sums_vnni, K16_Q3)
RA_K16_PANEL8_RUN(q2_k_panel8_vnni_run, RA_VNNI256, k16_panel8_sums_vnni, K16_Q2)

// Rows repacked at load (RA_Q6_K_X8, RA_Q3_K_X8, RA_Q2_K_X8, x8.c): the groups hold the 8 rows' quant vectors side by
// side, so the quants of a panel come out of q6_k_quants_v, q3x8_quants_v or k16_low_quants_v already transposed, and
// the scales (Q2_K: scales and mins) are widened from their bytes.
RA_AVX2_INLINE void k16_x8_pack(const uint8_t *W, int64_t ns, void *panel, const int t) {
    q6_k_panel8 *p = panel;
    const int64_t gb = t == K16_Q6 ? RA_Q6_K_X8_GROUP_BYTES : t == K16_Q3 ? RA_Q3_K_X8_GROUP_BYTES : RA_Q2_K_X8_GROUP_BYTES;
    const int osc = t == K16_Q6 ? Q6X8_SC : t == K16_Q3 ? Q3X8_SC : Q2X8_SC, od = t == K16_Q6 ? Q6X8_D : t == K16_Q3 ? Q3X8_D : Q2X8_D;
    const __m256i lo16 = _mm256_set1_epi32(0xFFFF), low4 = _mm256_set1_epi32(15);
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *b = W + i * gb;
        q6_k_panel8 *pi = p + i;
        _mm256_store_ps(pi->d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(b + od))));
        if (t == K16_Q2) _mm256_store_ps(pi->dmin, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(b + Q2X8_DMIN))));
        __m256i sc[16], w[16];   // w: what meets the block sums (the scales; Q2_K: the mins)
        for (int j = 0; j < 16; j++) {
            const __m128i bytes = _mm_loadl_epi64((const __m128i *)(const void *)(b + osc + 8 * j));
            if (t == K16_Q2) {
                const __m256i u = _mm256_cvtepu8_epi32(bytes);
                sc[j] = _mm256_and_si256(u, low4);
                w[j] = _mm256_srli_epi32(u, 4);
            } else {
                sc[j] = w[j] = _mm256_and_si256(_mm256_cvtepi8_epi32(bytes), lo16);
            }
            _mm256_store_si256((__m256i *)pi->sc[j], _mm256_or_si256(sc[j], _mm256_slli_epi32(sc[j], 16)));
        }
        for (int q = 0; q < 8; q++) _mm256_store_si256((__m256i *)pi->scp[q], _mm256_or_si256(w[2 * q], _mm256_slli_epi32(w[2 * q + 1], 16)));
        for (int h = 0; h < 2; h++) {
            for (int e = 0; e < 8; e++) {
                __m256i q[4];
                if (t == K16_Q6) {
                    const uint8_t *v = b + Q6X8_QUANTS(h, e);
                    q6_k_quants_v(_mm256_loadu_si256((const __m256i *)(const void *)v), _mm256_loadu_si256((const __m256i *)(const void *)(v + 32)),
                                  _mm256_loadu_si256((const __m256i *)(const void *)(v + 64)), q);
                } else if (t == K16_Q3) {
                    q3x8_quants_v(_mm256_loadu_si256((const __m256i *)(const void *)(b + K16X8_QS(h, e))),
                                  _mm256_loadu_si256((const __m256i *)(const void *)(b + Q3X8_HM + 32 * e)), h, q);
                } else {
                    k16_low_quants_v(_mm256_loadu_si256((const __m256i *)(const void *)(b + K16X8_QS(h, e))), _mm256_setzero_si256(), h, 0, q);
                }
                for (int c = 0; c < 4; c++) _mm256_store_si256((__m256i *)pi->q[32 * h + 8 * c + e], q[c]);
            }
        }
    }
}
RA_AVX2 static void q6_k_x8_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    k16_x8_pack(W, ns, panel, K16_Q6);
}
RA_AVX2 static void q3_k_x8_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    k16_x8_pack(W, ns, panel, K16_Q3);
}
RA_AVX2 static void q2_k_x8_pack_panel8(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    k16_x8_pack(W, ns, panel, K16_Q2);
}

// Q6_K batches of file rows (x8 = 0) or of repacked groups (x8 = 1, rows from and to multiples of 8).
RA_AVX2 static int q6_k_matmul(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                               int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, const int x8) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q6_K_BATCH_SCRATCH(n) || (x8 && (r0 % 8 != 0 || r1 % 8 != 0))) return 0;
    const int64_t wrow = ns * (int64_t)sizeof(blk_q6_k), xrow = ns * (int64_t)sizeof(blk_q8_k);   // (a group is 8 file rows' bytes)
    void *panel = (void *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    panel8_matmul(w, wrow, ns, x, xrow, nb, NULL, 0, out, out_stride, r0, r1, panel, x8 ? q6_k_x8_pack_panel8 : q6_k_pack_panel8,
                  q6_k_panel8_run);
    return 1;
}

int ra_matmul_q6_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q6_k_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, 0);
}
int ra_matmul_q6_k_x8_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q6_k_matmul(w, n, x, nb, out, out_stride, r0, r1, scratch, scratch_bytes, 1);
}

// Q3_K (three = 1) and Q2_K batches of repacked groups (rows from and to multiples of 8) on the Q6_K panels.
// vnni: the panels run with AVX-512 VNNI's 256-bit vpdpbusd (k16_panel8_vnni_m).
int ra_matmul_k16_low_x8_avx2(int three, int vnni, const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_Q6_K_BATCH_SCRATCH(n) || r0 % 8 != 0 || r1 % 8 != 0) return 0;
    // (a group is 8 rows: wrow is a repacked row's share of it, as panel8_matmul steps 8 rows at a time)
    const int64_t wrow = ns * (three ? RA_Q3_K_X8_GROUP_BYTES : RA_Q2_K_X8_GROUP_BYTES) / 8, xrow = ns * (int64_t)sizeof(blk_q8_k);
    void *panel = (void *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    panel8_matmul(w, wrow, ns, x, xrow, nb, NULL, 0, out, out_stride, r0, r1, panel, three ? q3_k_x8_pack_panel8 : q2_k_x8_pack_panel8,
                  three ? (vnni ? q3_k_panel8_vnni_run : q3_k_panel8_run) : (vnni ? q2_k_panel8_vnni_run : q2_k_panel8_run));
    return 1;
}

#endif
