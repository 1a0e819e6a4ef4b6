#include "avx2_panel8.h"

#if defined(__x86_64__)

// MARK: - IQ4_XS batches on 16-row int16 panels
//
// IQ4_XS's values are signed (its 16 levels, -127..113), so its int8 products need vpsignb before vpmaddubsw, and the
// pair sums of two levels against two activations fill int16 on their own (2 · 127 · 128): every quartet would cost a
// vpsignb, a vpmaddubsw and a vpmaddwd per activation row (bench: 0.88x llama.cpp's prompt rate on the one-row
// kernels). A panel holds each level already multiplied by its block's scale (at most 32 · 127 = 4064, an int16), and the
// activations are widened to int16 once per product (ra_iq4_xs_side_avx2), so one vpmaddwd takes a pair of elements of
// 8 rows straight to int32, scale included: per pair and activation row a broadcast, a vpmaddwd and a vpaddd, as
// Q8_0's int16 panels (matmul_avx2_b32.c), whose 16-row driver (panel16_matmul) this shares. The super-block's int32
// sum is the same exact integer as the dot's Σ_j scale_j · Σ level · activation (at most 256 · 4064 · 128 < 2^31), and
// the float step is the dot's acc = fma(I, d · d_x, acc): the same bits.

// One super-block of a panel: q[p] int16 2r + t = scale · level of row r, element 2p + t; d[r].
typedef struct {
    int16_t q[128][16];
    float d[8];
} iq4_xs_panel16;
_Static_assert(sizeof(iq4_xs_panel16) % 32 == 0 && sizeof(iq4_xs_panel16) <= RA_IQ4_XS_BATCH_PANEL_BYTES, "iq4_xs_panel16 size");

// Rows [0, nrows) of the file's IQ4_XS rows (nrows <= 8; the rest zero): each block's bytes of the 8 rows transposed
// into quartet vectors (block_heads8), then their levels times the scales (iq4_pairs16).
RA_AVX2 static void iq4_xs_pack16(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    iq4_xs_panel16 *p = panel;
    for (int64_t i = 0; i < ns; i++) {
        const int64_t off = i * (int64_t)sizeof(blk_iq4_xs);
        _Alignas(16) uint16_t dh[PANEL8_ROWS];
        for (int r = 0; r < PANEL8_ROWS; r++) dh[r] = r < nrows ? ((const blk_iq4_xs *)(const void *)(W + r * wrow + off))->d : 0;
        for (int j = 0; j < 8; j++) {
            __m256i h[4];
            block_heads8(W, wrow, off + (int64_t)offsetof(blk_iq4_xs, qs) + 16 * j, nrows, h);
            int32_t sc[PANEL8_ROWS];
            for (int r = 0; r < PANEL8_ROWS; r++)
                sc[r] = r < nrows ? ra_iq4_xs_scale((const blk_iq4_xs *)(const void *)(W + r * wrow + off), j) & 0xFFFF : 0;
            const __m256i s = _mm256_loadu_si256((const __m256i *)(const void *)sc);
            iq4_pairs16(p[i].q + 16 * j, h, _mm256_or_si256(s, _mm256_slli_epi32(s, 16)), 1);
        }
        _mm256_store_ps(p[i].d, _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(const void *)dh)));
    }
}

// A group of 8 repacked rows (RA_IQ4_XS_X8, x8.c): its quartet vectors are the transposed ones already, its scales
// int8 [block][row]. W: a group of 8 rows (nrows is 8).
RA_AVX2 static void iq4_xs_x8_pack16(const uint8_t *W, int64_t wrow, int64_t ns, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    iq4_xs_panel16 *p = panel;
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *a = W + i * RA_IQ4_XS_X8_GROUP_BYTES;
        for (int j = 0; j < 8; j++) {
            __m256i h[4];
            for (int e = 0; e < 4; e++) h[e] = _mm256_loadu_si256((const __m256i *)(const void *)(a + IQ4X8_QS(j, e)));
            const __m256i s = _mm256_and_si256(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(a + IQ4X8_SC + 8 * j))),
                                               _mm256_set1_epi32(0xFFFF));
            iq4_pairs16(p[i].q + 16 * j, h, _mm256_or_si256(s, _mm256_slli_epi32(s, 16)), 1);
        }
        _mm256_store_ps(p[i].d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(a + IQ4X8_D))));
    }
}

// One panel × nx (1..4) activation rows of int16, xs elements apart; dx: row k's super-block scales at dx[k * ns].
RA_AVX2_INLINE void iq4_xs_panel16_m(int64_t ns, const iq4_xs_panel16 *p, const int16_t *x, int64_t xs, const float *dx,
                                     float *out, int64_t os, int nr, const int nx) {
    __m256 acc[PANEL8_GROUP];
    for (int k = 0; k < nx; k++) acc[k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        __m256i s[PANEL8_GROUP];
        for (int k = 0; k < nx; k++) s[k] = _mm256_setzero_si256();
        for (int q0 = 0; q0 < 128; q0 += 16) {
            RA_UNROLL
            for (int q = q0; q < q0 + 16; q++) {
                const __m256i wv = _mm256_load_si256((const __m256i *)(const void *)p[i].q[q]);
                for (int k = 0; k < nx; k++) {
                    int32_t pair;
                    memcpy(&pair, x + k * xs + 256 * i + 2 * q, 4);
                    s[k] = _mm256_add_epi32(s[k], _mm256_madd_epi16(wv, _mm256_set1_epi32(pair)));
                }
                // (keeps clang from summing the products as a tree, which spills them)
                for (int k = 0; k < nx; k++) __asm__("" : "+x"(s[k]));
            }
        }
        const __m256 dw = _mm256_load_ps(p[i].d);
        for (int k = 0; k < nx; k++)
            acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[k]), _mm256_mul_ps(dw, _mm256_broadcast_ss(dx + k * ns + i)), acc[k]);
    }
    for (int k = 0; k < nx; k++) store_rows8(out + k * os, acc[k], nr);
}

// Two panels (16 weight rows) × nx (1..3) activation rows: each broadcast serves two vpmaddwd; per panel the same steps
// as iq4_xs_panel16_m.
RA_AVX2_INLINE void iq4_xs_panel16x2_m(int64_t ns, const iq4_xs_panel16 *pa, const iq4_xs_panel16 *pb, const int16_t *x, int64_t xs,
                                       const float *dx, float *out, int64_t os, const int nx) {
    __m256 acc[2][PANEL16_GROUP];
    for (int k = 0; k < nx; k++) acc[0][k] = acc[1][k] = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        __m256i sa[PANEL16_GROUP], sb[PANEL16_GROUP];
        for (int k = 0; k < nx; k++) sa[k] = sb[k] = _mm256_setzero_si256();
        for (int q0 = 0; q0 < 128; q0 += 16) {
            RA_UNROLL
            for (int q = q0; q < q0 + 16; q++) {
                const __m256i wa = _mm256_load_si256((const __m256i *)(const void *)pa[i].q[q]);
                const __m256i wb = _mm256_load_si256((const __m256i *)(const void *)pb[i].q[q]);
                for (int k = 0; k < nx; k++) {
                    int32_t pair;
                    memcpy(&pair, x + k * xs + 256 * i + 2 * q, 4);
                    const __m256i y = _mm256_set1_epi32(pair);
                    sa[k] = _mm256_add_epi32(sa[k], _mm256_madd_epi16(wa, y));
                    sb[k] = _mm256_add_epi32(sb[k], _mm256_madd_epi16(wb, y));
                }
                for (int k = 0; k < nx; k++) __asm__("" : "+x"(sa[k]), "+x"(sb[k]));
            }
        }
        const __m256 da = _mm256_load_ps(pa[i].d), db = _mm256_load_ps(pb[i].d);
        for (int k = 0; k < nx; k++) {
            const __m256 d = _mm256_broadcast_ss(dx + k * ns + i);
            acc[0][k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sa[k]), _mm256_mul_ps(da, d), acc[0][k]);
            acc[1][k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sb[k]), _mm256_mul_ps(db, d), acc[1][k]);
        }
    }
    for (int k = 0; k < nx; k++) {
        _mm256_storeu_ps(out + k * os, acc[0][k]);
        _mm256_storeu_ps(out + k * os + 8, acc[1][k]);
    }
}

RA_AVX2 static void iq4_xs_run16x2(int64_t ns, const void *pa, const void *pb, const uint8_t *x, int64_t xs, const float *side,
                                   float *out, int64_t os, int nx) {
    const int16_t *x16 = (const int16_t *)(const void *)x;
    const int64_t xe = xs / (int64_t)sizeof(int16_t);
    switch (nx) {
    case 1: iq4_xs_panel16x2_m(ns, pa, pb, x16, xe, side, out, os, 1); break;
    case 2: iq4_xs_panel16x2_m(ns, pa, pb, x16, xe, side, out, os, 2); break;
    default: iq4_xs_panel16x2_m(ns, pa, pb, x16, xe, side, out, os, 3); break;
    }
}
RA_AVX2 static void iq4_xs_run16(int64_t ns, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row,
                                 float *out, int64_t os, int nr, int nx) {
    (void)side_row;
    const int16_t *x16 = (const int16_t *)(const void *)x;
    const float *dx = (const float *)(const void *)side;
    const int64_t xe = xs / (int64_t)sizeof(int16_t);
    switch (nx) {
    case 1: iq4_xs_panel16_m(ns, panel, x16, xe, dx, out, os, nr, 1); break;
    case 2: iq4_xs_panel16_m(ns, panel, x16, xe, dx, out, os, nr, 2); break;
    case 3: iq4_xs_panel16_m(ns, panel, x16, xe, dx, out, os, nr, 3); break;
    default: iq4_xs_panel16_m(ns, panel, x16, xe, dx, out, os, nr, 4); break;
    }
}

RA_AVX2 void ra_iq4_xs_side_avx2(const void *x, int64_t n, int64_t nb, float *side) {
    const blk_q8_k *b = x;
    const int64_t ns = n / QK_K;
    int16_t *x16 = (int16_t *)(void *)(side + ns * nb);
    for (int64_t i = 0; i < ns * nb; i++) {
        side[i] = b[i].d;
        for (int h = 0; h < QK_K; h += 32) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)(b[i].qs + h));
            _mm256_storeu_si256((__m256i *)(void *)(x16 + QK_K * i + h), _mm256_cvtepi8_epi16(_mm256_castsi256_si128(q)));
            _mm256_storeu_si256((__m256i *)(void *)(x16 + QK_K * i + h + 16), _mm256_cvtepi8_epi16(_mm256_extracti128_si256(q, 1)));
        }
    }
}

// Rows [r0, r1) (file rows, or groups with x8: whole groups only) on the panels packed by `pack`.
RA_AVX2 static int iq4_xs_matmul16(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                                   int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, const int x8) {
    const int64_t ns = n / QK_K;
    if (n % QK_K != 0 || nb < 1 || scratch_bytes < RA_IQ4_XS_BATCH_SCRATCH(n, side ? 0 : nb)) return 0;
    if (x8 && (r0 % 8 != 0 || r1 % 8 != 0)) return 0;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    iq4_xs_panel16 *panel = (iq4_xs_panel16 *)(void *)base;
    if (!side) {
        float *own = (float *)(void *)(base + 2 * ns * (int64_t)sizeof(iq4_xs_panel16));
        ra_iq4_xs_side_avx2(x, n, nb, own);
        side = own;
    }
    const int64_t wrow = x8 ? ns * RA_IQ4_XS_X8_GROUP_BYTES / 8 : ns * (int64_t)sizeof(blk_iq4_xs);
    panel16_matmul(w, wrow, ns, (const uint8_t *)(side + ns * nb), n * (int64_t)sizeof(int16_t), nb, side, ns, out, out_stride, r0, r1,
                   panel, panel + ns, x8 ? iq4_xs_x8_pack16 : iq4_xs_pack16, iq4_xs_run16x2, iq4_xs_run16);
    return 1;
}

int ra_matmul_iq4_xs_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                          int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return iq4_xs_matmul16(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, 0);
}

int ra_matmul_iq4_xs_x8_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                             int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return iq4_xs_matmul16(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, 1);
}

#endif
