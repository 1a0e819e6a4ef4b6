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
// Q8_0's int16 panels, whose kernels (i16_panel_m, avx2_panel8.h) and 16-row driver (panel16_matmul) this shares. The super-block's int32
// sum is the same exact integer as the dot's Σ_j scale_j · Σ level · activation (at most 256 · 4064 · 128 < 2^31), and
// the float step is the dot's acc = fma(I, d · d_x, acc): the same bits.

// One super-block of a panel: q[p] int16 2r + t = scale · level of row r, element 2p + t; d[r].
typedef struct {
    int16_t q[128][16];
    float d[8];
} iq4_xs_panel16;
_Static_assert(sizeof(iq4_xs_panel16) % 32 == 0 && sizeof(iq4_xs_panel16) <= RA_IQ4_XS_BATCH_PANEL_BYTES, "iq4_xs_panel16 size");
_Static_assert(sizeof(iq4_xs_panel16) == 32 * 128 + 32, "iq4_xs_panel16: the int16 panels' block of 128 pairs (avx2_panel8.h)");

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

// The run functions of the int16 panels (avx2_panel8.h): 128 pairs a super-block, one chain of fmas (dot_iq4_xs's),
// the activation row's super-block scales d as side data.
RA_I16_PANEL_RUNS(iq4_xs, 128, 1, 1)

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
