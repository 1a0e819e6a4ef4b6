#include "avx2_panel8.h"

#if defined(__x86_64__)

// MARK: - Batches of the 32-element block types: the same panels of 8 weight rows, one scale per block
//
// Per block, 8 vectors of quartets (the quants as b32_quants gives them, int8) and the 8 rows' d (and m). vpmaddubsw
// needs an unsigned operand: for the signed types the step takes |w| and gives each broadcast activation the sign of
// the weight it meets (|w| · sign(w)·x, exact since Q8_0 activations are never -128); Q4_1/Q5_1 quants are unsigned
// already. The pair sums are added in int16 first (Q4_0, Q5_0, Q4_1: 8 quartets, at most 8 · 2 · 16 · 127 = 32512;
// Q5_1: 4 quartets, 4 · 2 · 31 · 127 = 31496). The block's int32 sum goes to its chain as in dot_b32. 4 activation
// rows per step, as for Q4_K. Q8_0's pair sums fill int16 alone (2 · 128 · 127 = 32512): its AVX2 batches run the
// int16 panels below, its int8 panels only with AVX-VNNI.

typedef struct {
    int8_t q[8][32];   // q[e] byte 4r + t = quant of row r, element 4e + t
    float dw[8], m[8];
} b32_panel8;
_Static_assert(sizeof(b32_panel8) % 32 == 0 && sizeof(b32_panel8) <= RA_Q8_0_BATCH_PANEL_BYTES && sizeof(b32_panel8) <= RA_B32_PANEL_BYTES,
               "b32_panel8 size");

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
        ra_panel_prefetch(W, wrow, nblk, j, wb, PANEL8_ROWS);
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

// Block j of rows [0, nrows) of the file's rows (nrows <= 8; the rest zero), prefetching ahead: the quants as quartet
// vectors (dword r of cols[e] holds row r's elements 4e..4e+3, as bytes), the scales d and (Q4_1, Q5_1) the mins m.
RA_AVX2_INLINE void b32_gather8(const uint8_t *W, int64_t wrow, int64_t nblk, int64_t j, int nrows, __m256i cols[8],
                                float d[8], float m[8], const int t) {
    const int wb = b32_wbytes(t);
    ra_panel_prefetch(W, wrow, nblk, j, wb, PANEL8_ROWS);
    __m256i rows[8];
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
}

RA_AVX2_INLINE void b32_pack_panel8(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel, const int t) {
    b32_panel8 *p = panel;
    if ((t == B32_Q4_0 || t == B32_Q4_1) && nrows == PANEL8_ROWS && wrow <= INT32_MAX / 8) {
        b32_pack_panel8_q4(W, wrow, nblk, panel, t);
        return;
    }
    for (int64_t j = 0; j < nblk; j++) {
        __m256i cols[8];
        float d[8], m[8];
        b32_gather8(W, wrow, nblk, j, nrows, cols, d, m, t);
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
    const int run = t == B32_Q5_1 ? 4 : 8;   // quartets added in int16 (not for Q8_0, which has the int16 panels)
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
        RA_UNROLL
        for (int e0 = 0; e0 < 8; e0 += run) {
            __m256i s16[PANEL8_GROUP];
            for (int k = 0; k < nx; k++) s16[k] = _mm256_setzero_si256();
            RA_UNROLL
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

// The activation scales of nb rows: per row nblk d then nblk s (b32_xscales; the panels read s for the types with a
// min only).
RA_AVX2_INLINE void b32_side(const uint8_t *X, int64_t nblk, int64_t nb, float *side, const int t) {
    for (int64_t b = 0; b < nb; b++) b32_xscales(X + b * nblk * b32_xbytes(t), nblk, side + 2 * b * nblk, side + 2 * b * nblk + nblk, t);
}

// MARK: - Q4_1 batches on 16 weight rows

// Two 8-row panels share each activation broadcast. On Zen 3 a broadcast from memory (vpbroadcastd or vbroadcastss)
// takes a vector ALU slot as vpmaddubsw and vpaddw do: with one broadcast per vpmaddubsw the 8-row panels issue ~1
// vpmaddubsw a cycle, with one per two ~1.5 (a microbenchmark of the three instructions alone). The blocks are taken
// chain by chain (j = c, c + 4, ... for chain c = 0..3), so one chain's float sums stay in registers (2 × 3 activation
// rows) with the int16 sums (2 × 3), the two weight vectors and the broadcast; block by block, the 4 chains of 16 rows
// × 4 rows lived on the stack (a load and a store per block and row, ~25% of the kernel's samples). Each chain is
// the same sequence of fmas as in b32_panel8_m and dot_b32 (int16 sums of 8 quartets, vpmaddwd, then per block the
// fma of the sum and the fma of the min), and the chains are added as there: (c0 + c1) + (c2 + c3), so the bits are
// dot_b32's.
RA_AVX2_INLINE void q4_1_panel16_m(int64_t nblk, const b32_panel8 *pa, const b32_panel8 *pb, const uint8_t *x, int64_t xs,
                                   const float *side, float *out, int64_t os, const int nx) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int xb = (int)sizeof(blk_q8_1), xq = (int)offsetof(blk_q8_1, qs);
    __m256 chain[4][2][PANEL16_GROUP];
    for (int c = 0; c < 4; c++) {
        __m256 acc[2][PANEL16_GROUP];
        for (int k = 0; k < nx; k++) acc[0][k] = acc[1][k] = _mm256_setzero_ps();
        for (int64_t j = c; j < nblk; j += 4) {
            const b32_panel8 *a = pa + j, *b = pb + j;
            const int8_t *y[PANEL16_GROUP];
            __m256i sa[PANEL16_GROUP], sb[PANEL16_GROUP];
            for (int k = 0; k < nx; k++) {
                y[k] = (const int8_t *)(x + k * xs + j * xb + xq);
                sa[k] = sb[k] = _mm256_setzero_si256();
            }
#if defined(__clang__)
#pragma clang loop unroll(full)   // (clang keeps the loop otherwise: ~5% slower)
#endif
            for (int e = 0; e < 8; e++) {
                const __m256i wa = _mm256_load_si256((const __m256i *)a->q[e]), wb = _mm256_load_si256((const __m256i *)b->q[e]);
                for (int k = 0; k < nx; k++) {
                    const __m256i yv = bcast4(y[k] + 4 * e);
                    sa[k] = _mm256_add_epi16(sa[k], _mm256_maddubs_epi16(wa, yv));
                    sb[k] = _mm256_add_epi16(sb[k], _mm256_maddubs_epi16(wb, yv));
                }
                for (int k = 0; k < nx; k++) __asm__("" : "+x"(sa[k]), "+x"(sb[k]));
            }
            const __m256 dwa = _mm256_load_ps(a->dw), dwb = _mm256_load_ps(b->dw);
            for (int k = 0; k < nx; k++) {
                const float *sk = side + 2 * k * nblk;
                const __m256 dx = _mm256_broadcast_ss(sk + j), sx = _mm256_broadcast_ss(sk + nblk + j);
                __m256 r = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(sa[k], ones)), _mm256_mul_ps(dwa, dx), acc[0][k]);
                acc[0][k] = _mm256_fmadd_ps(_mm256_load_ps(a->m), sx, r);
                r = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(sb[k], ones)), _mm256_mul_ps(dwb, dx), acc[1][k]);
                acc[1][k] = _mm256_fmadd_ps(_mm256_load_ps(b->m), sx, r);
            }
        }
        for (int k = 0; k < nx; k++) { chain[c][0][k] = acc[0][k]; chain[c][1][k] = acc[1][k]; }
    }
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < nx; k++)
            _mm256_storeu_ps(out + k * os + 8 * h, _mm256_add_ps(_mm256_add_ps(chain[0][h][k], chain[1][h][k]),
                                                                 _mm256_add_ps(chain[2][h][k], chain[3][h][k])));
}

RA_AVX2 static void q4_1_run16(int64_t nblk, const void *pa, const void *pb, const uint8_t *x, int64_t xs, const float *side,
                               float *out, int64_t os, int nx) {
    switch (nx) {
    case 1: q4_1_panel16_m(nblk, pa, pb, x, xs, side, out, os, 1); break;
    case 2: q4_1_panel16_m(nblk, pa, pb, x, xs, side, out, os, 2); break;
    default: q4_1_panel16_m(nblk, pa, pb, x, xs, side, out, os, 3); break;
    }
}
RA_AVX2 static void q4_1_run8(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side, int64_t side_row,
                              float *out, int64_t os, int nr, int nx) {
    (void)side_row;
    b32_panel8_run(nblk, panel, x, xs, side, out, os, nr, nx, B32_Q4_1);
}

// side: the scales of the nb activation rows (b32_side), or NULL to compute them here into the scratch.
// sixteen_ok: Q4_1 may take the 16-row kernel below (the AVX2 run's bits; not with AVX-VNNI's run).
RA_AVX2 static int b32_matmul(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, panel8_pack_fn pack, panel8_run_fn run,
                              const int t, const int sixteen_ok) {
    const int64_t nblk = n / 32;
    if (n % 32 != 0 || nb < 1 || scratch_bytes < nblk * ((int64_t)sizeof(b32_panel8) + 8 * nb) + 64) return 0;
    const int64_t wrow = nblk * b32_wbytes(t), xrow = nblk * b32_xbytes(t);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    b32_panel8 *panel = (b32_panel8 *)(void *)base;
    const int sixteen = sixteen_ok && t == B32_Q4_1 && scratch_bytes >= RA_B32_BATCH_SCRATCH(n, nb);   // two panels
    if (!side) {
        float *own = (float *)(void *)(base + (sixteen ? 2 : 1) * nblk * (int64_t)sizeof(b32_panel8));
        b32_side(x, nblk, nb, own, t);
        side = own;
    }
    if (sixteen) {
        panel16_matmul(w, wrow, nblk, x, xrow, nb, side, 2 * nblk, out, out_stride, r0, r1, panel, panel + nblk, pack, q4_1_run16, q4_1_run8);
        return 1;
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
        return b32_matmul(w, n, x, NULL, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack, name##_run, t, 1); \
    }                                                                                                                  \
    RA_AVX2 static int name##_side_matmul(const void *w, int64_t n, const void *x, const float *side, int64_t nb,      \
                                          float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch,    \
                                          int64_t scratch_bytes) {                                                     \
        return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack, name##_run, t, 1); \
    }
RA_B32_BATCH(q4_0, B32_Q4_0)
RA_B32_BATCH(q5_0, B32_Q5_0)
RA_B32_BATCH(q4_1, B32_Q4_1)
RA_B32_BATCH(q5_1, B32_Q5_1)

// MARK: - Q8_0 batches in int16
//
// In the int8 panels a Q8_0 quartet costs a vpsignb, a vpmaddubsw and a vpmaddwd of its own (the pair sums of |w| · x
// fill int16). With the weights and the activations widened to int16, one vpmaddwd takes a pair of elements of 8 rows
// straight to int32: per quartet and activation row two broadcasts, two vpmaddwd and two vpaddd (bench/kernels/
// int8_mix.c: ~1.4x fewer cycles), and with two panels (16 rows) a broadcast serves two vpmaddwd. The block's int32
// sum is the same exact integer and the float steps are dot_b32's chains, so the bits are the dot's. A panel is twice
// the int8 one's bytes. The activations are widened once per product with their scales (ra_matmul_side): widened per
// chunk of rows they cost ~8% on Qwen3's 1024-row products (16-row chunks). bench/kernels/b32_batch_ab.sh on
// Qwen3-0.6B's layer (128 rows): 0.77-0.80 of the int8 panels' time on its 1024-column products, 0.86-0.88 on the
// 2048- and 3072-column ones, 0.81 for the layer.

typedef struct {
    int16_t q[16][16];   // q[p] int16 2r + t = quant of row r, element 2p + t
    float dw[8];
} q8_panel16;
_Static_assert(sizeof(q8_panel16) % 32 == 0 && sizeof(q8_panel16) <= RA_Q8_0_BATCH_PANEL_BYTES, "q8_panel16 size");
_Static_assert(sizeof(q8_panel16) == 32 * 16 + 32, "q8_panel16: the int16 panels' block of 16 pairs (avx2_panel8.h)");

// Quartet vector e of 8 rows (int8; dword r holds row r's elements 4e..4e+3) as pair vectors 2e and 2e + 1 of p.
RA_AVX2_INLINE void q8_widen_quartets(__m256i v, q8_panel16 *p, int e) {
    __m256i a, b;
    quartet_pairs16(v, &a, &b);
    _mm256_store_si256((__m256i *)p->q[2 * e], a);
    _mm256_store_si256((__m256i *)p->q[2 * e + 1], b);
}

// Rows [0, nrows) of the file's Q8_0 rows (nrows <= 8; the rest zero).
RA_AVX2 static void q8_0_pack16(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {
    q8_panel16 *p = panel;
    for (int64_t j = 0; j < nblk; j++) {
        __m256i cols[8];
        float d[8], m[8];
        b32_gather8(W, wrow, nblk, j, nrows, cols, d, m, B32_Q8_0);
        for (int e = 0; e < 8; e++) q8_widen_quartets(cols[e], p + j, e);
        _mm256_store_ps(p[j].dw, _mm256_loadu_ps(d));
    }
}

// A group of 8 repacked rows (RA_Q8_0_X8, x8.c): its quartet vectors are the transposed ones already.
RA_AVX2 static void q8_0_x8_pack16(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    q8_panel16 *p = panel;
    const b32x8_layout l = ra_b32x8_layout(0, 0, 8);
    for (int64_t j = 0; j < nblk; j++) {
        const uint8_t *a = W + j * l.bytes;
        for (int e = 0; e < 8; e++) q8_widen_quartets(_mm256_loadu_si256((const __m256i *)(const void *)(a + l.qs + 32 * e)), p + j, e);
        _mm256_store_ps(p[j].dw, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)a)));
    }
}

// The run functions of the int16 panels (avx2_panel8.h): 16 pairs a block, the side data's d and s per block and
// activation row; Q8_0's 4 float chains (dot_b32), IQ4_NL's one (dot_iq4_nl).
RA_I16_PANEL_RUNS(q8_0, 16, 4, 2)
RA_I16_PANEL_RUNS(iq4_nl, 16, 1, 2)

RA_AVX2 void ra_q8_0_widen_avx2(const void *x, int64_t n, int64_t nb, int16_t *dst) {
    const uint8_t *X = x;
    for (int64_t i = 0; i < nb * (n / 32); i++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)(X + i * (int64_t)sizeof(blk_q8_0) + offsetof(blk_q8_0, qs)));
        _mm256_storeu_si256((__m256i *)(void *)(dst + 32 * i), _mm256_cvtepi8_epi16(_mm256_castsi256_si128(q)));
        _mm256_storeu_si256((__m256i *)(void *)(dst + 32 * i + 16), _mm256_cvtepi8_epi16(_mm256_extracti128_si256(q, 1)));
    }
}

// Rows [r0, r1) of Q8_0 (file rows or repacked groups, as `pack` reads them) or IQ4_NL (nl) × nb Q8_0 activation rows;
// side: their scales and, after them, the rows in int16 (ra_matmul_side), or NULL to convert both here into the
// scratch (RA_Q8_0_BATCH_SCRATCH).
RA_AVX2 static int q8_0_matmul16(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                                 int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes, panel8_pack_fn pack, const int nl) {
    const int64_t nblk = n / 32;
    if (n % 32 != 0 || nb < 1 || scratch_bytes < RA_Q8_0_BATCH_SCRATCH(n, nb)) return 0;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    q8_panel16 *panel = (q8_panel16 *)(void *)base;
    const int16_t *x16;
    if (side) {
        x16 = (const int16_t *)(const void *)(side + 2 * nblk * nb);
    } else {
        int16_t *own16 = (int16_t *)(void *)(base + 2 * nblk * (int64_t)sizeof(q8_panel16));
        float *own = (float *)(void *)(own16 + nb * n);
        ra_q8_0_widen_avx2(x, n, nb, own16);
        b32_side(x, nblk, nb, own, B32_Q8_0);
        x16 = own16;
        side = own;
    }
    panel16_matmul(w, nblk * (int64_t)(nl ? sizeof(blk_iq4_nl) : sizeof(blk_q8_0)), nblk, (const uint8_t *)x16, n * (int64_t)sizeof(int16_t),
                   nb, side, 2 * nblk, out, out_stride, r0, r1, panel, panel + nblk, pack, nl ? iq4_nl_run16x2 : q8_0_run16x2,
                   nl ? iq4_nl_run16 : q8_0_run16);
    return 1;
}

// IQ4_NL's rows on the same int16 panels (its levels widened; one chain of fmas, as dot_iq4_nl) with Q8_0's side data:
// each block's bytes of the 8 rows transposed into quartet vectors (block_heads8), their levels as pairs (iq4_pairs16).
RA_AVX2 static void iq4_nl_pack16(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {
    q8_panel16 *p = panel;
    for (int64_t j = 0; j < nblk; j++) {
        const int64_t off = j * (int64_t)sizeof(blk_iq4_nl);
        __m256i h[4];
        block_heads8(W, wrow, off + (int64_t)offsetof(blk_iq4_nl, qs), nrows, h);
        iq4_pairs16(p[j].q, h, _mm256_setzero_si256(), 0);
        _Alignas(16) uint16_t dh[PANEL8_ROWS];
        for (int r = 0; r < PANEL8_ROWS; r++) dh[r] = r < nrows ? ((const blk_iq4_nl *)(const void *)(W + r * wrow + off))->d : 0;
        _mm256_store_ps(p[j].dw, _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(const void *)dh)));
    }
}
// A group of 8 repacked IQ4_NL rows (RA_IQ4_NL_X8, x8.c): its quartet vectors are the transposed ones already.
RA_AVX2 static void iq4_nl_x8_pack16(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {
    (void)wrow;
    (void)nrows;
    q8_panel16 *p = panel;
    for (int64_t j = 0; j < nblk; j++) {
        const uint8_t *a = W + j * RA_IQ4_NL_X8_GROUP_BYTES;
        __m256i h[4];
        for (int e = 0; e < 4; e++) h[e] = _mm256_loadu_si256((const __m256i *)(const void *)(a + IQ4NLX8_QS(e)));
        iq4_pairs16(p[j].q, h, _mm256_setzero_si256(), 0);
        _mm256_store_ps(p[j].dw, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)a)));
    }
}
RA_AVX2 int ra_matmul_iq4_nl_x8_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                                     int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    if (r0 % 8 != 0 || r1 % 8 != 0) return 0;
    return q8_0_matmul16(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, iq4_nl_x8_pack16, 1);
}
RA_AVX2 int ra_matmul_iq4_nl_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                                  int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q8_0_matmul16(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, iq4_nl_pack16, 1);
}

// Q8_0's AVX2 entries (the other types' come from RA_B32_BATCH); its int8 panels are AVX-VNNI's (below).
RA_AVX2 static void q8_0_pack(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {
    b32_pack_panel8(W, wrow, nblk, nrows, panel, B32_Q8_0);
}
int ra_matmul_q8_0_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, int64_t r0, int64_t r1,
                        uint8_t *scratch, int64_t scratch_bytes) {
    return q8_0_matmul16(w, n, x, NULL, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q8_0_pack16, 0);
}
RA_AVX2 static int q8_0_side_matmul(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out,
                                    int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    return q8_0_matmul16(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q8_0_pack16, 0);
}

// The 32-element types' rows repacked at load (RA_Q4_0_X8 ... RA_Q8_0_X8, x8.c): a block of 8 rows (b32x8_layout,
// kernels_internal.h) holds quartet e of the 8 rows as dword e of each row's 16 bytes of nibbles, the transposed form
// b32_pack_panel8_q4 builds, so a panel is its nibbles split, the fifth bits put in, the offset taken off and its halves
// widened (Q8_0's groups go to the int16 panels above). W: a group of 8 rows (nrows is 8).
RA_AVX2_INLINE void b32_x8_pack(const uint8_t *W, int64_t nblk, void *panel, const int t) {
    b32_panel8 *p = panel;
    const int five = t == B32_Q5_0 || t == B32_Q5_1, min = b32_min(t);
    const b32x8_layout l = ra_b32x8_layout(five, min, 4);
    const __m256i off = _mm256_set1_epi8((char)b32_offset(t));
    for (int64_t j = 0; j < nblk; j++) {
        const uint8_t *a = W + j * l.bytes;
        _mm256_store_ps(p[j].dw, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)a)));
        const __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(const void *)(a + l.qh)) : _mm256_setzero_si256();
        for (int e = 0; e < 4; e++) {
            __m256i lo, hi;
            split_quants(_mm256_loadu_si256((const __m256i *)(const void *)(a + l.qs + 32 * e)), qh, e, 4 + e, five, &lo, &hi);
            _mm256_store_si256((__m256i *)p[j].q[e], _mm256_sub_epi8(lo, off));
            _mm256_store_si256((__m256i *)p[j].q[e + 4], _mm256_sub_epi8(hi, off));
        }
        _mm256_store_ps(p[j].m, min ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(a + l.m))) : _mm256_setzero_ps());
    }
}
#define RA_B32_X8_PACK(name, t)                                                                                        \
    RA_AVX2 static void name##_x8_pack(const uint8_t *W, int64_t wrow, int64_t nblk, int nrows, void *panel) {         \
        (void)wrow;                                                                                                    \
        (void)nrows;                                                                                                   \
        b32_x8_pack(W, nblk, panel, t);                                                                                \
    }
RA_B32_X8_PACK(q4_0, B32_Q4_0)
RA_B32_X8_PACK(q5_0, B32_Q5_0)
RA_B32_X8_PACK(q4_1, B32_Q4_1)
RA_B32_X8_PACK(q5_1, B32_Q5_1)

int ra_matmul_b32_x8_avx2(int x8, const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out,
                          int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    if (r0 % 8 != 0 || r1 % 8 != 0) return 0;
    switch (x8) {
    case RA_Q4_0_X8: return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q4_0_x8_pack, q4_0_run, B32_Q4_0, 1);
    case RA_Q5_0_X8: return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q5_0_x8_pack, q5_0_run, B32_Q5_0, 1);
    case RA_Q4_1_X8: return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q4_1_x8_pack, q4_1_run, B32_Q4_1, 1);
    case RA_Q5_1_X8: return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q5_1_x8_pack, q5_1_run, B32_Q5_1, 1);
    case RA_Q8_0_X8: return q8_0_matmul16(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, q8_0_x8_pack16, 0);
    default: return 0;
    }
}

// MARK: - The same panels with AVX-VNNI (RA_PATH_AVX2_VNNI: 256-bit vpdpbusd on CPUs without AVX-512)
//
// vpdpbusd adds 4 products of unsigned and signed bytes into each int32 lane, exactly, so one instruction a quartet
// replaces the vpmaddubsw, vpaddw and (per run of quartets) vpmaddwd of b32_panel8_m, with the same operands (|w| and
// the activation with w's sign for the signed types) and the same int32 block sums. The blocks are taken chain by
// chain (j = c, c + 4, ...), so each activation row has one float accumulator in registers (16 ymm registers: 4 rows ×
// (accumulator, two int32 sums) and the weight vectors), then the chains are added as in dot_b32: the same bits.
#define RA_AVXVNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#define RA_AVXVNNI_INLINE RA_AVXVNNI static inline __attribute__((always_inline))

RA_AVXVNNI_INLINE void b32_vnni8_block(const b32_panel8 *pj, const uint8_t *x, int64_t xs, const float *side, int64_t nblk,
                                       int64_t j, __m256 *acc, const int nx, const int t) {
    const int xb = b32_xbytes(t), xq = b32_xqs(t);
    __m256i s[PANEL8_GROUP], s2[PANEL8_GROUP];
    for (int k = 0; k < nx; k++) s[k] = s2[k] = _mm256_setzero_si256();
    RA_UNROLL
    for (int e = 0; e < 8; e++) {
        const __m256i wv = _mm256_load_si256((const __m256i *)pj->q[e]);
        const __m256i aw = b32_min(t) ? wv : _mm256_sign_epi8(wv, wv);
        for (int k = 0; k < nx; k++) {
            const int8_t *y = (const int8_t *)(x + k * xs + j * xb + xq) + 4 * e;
            const __m256i yv = b32_min(t) ? bcast4(y) : _mm256_sign_epi8(bcast4(y), wv);
            if (e & 1) s2[k] = _mm256_dpbusd_avx_epi32(s2[k], aw, yv);
            else s[k] = _mm256_dpbusd_avx_epi32(s[k], aw, yv);
        }
    }
    const __m256 dw = _mm256_load_ps(pj->dw);
    for (int k = 0; k < nx; k++) {
        const float *sk = side + 2 * k * nblk;
        const __m256i sum = _mm256_add_epi32(s[k], s2[k]);
        acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_broadcast_ss(sk + j)), acc[k]);
        if (b32_min(t)) acc[k] = _mm256_fmadd_ps(_mm256_load_ps(pj->m), _mm256_broadcast_ss(sk + nblk + j), acc[k]);
    }
}

RA_AVXVNNI_INLINE void b32_vnni8_m(int64_t nblk, const b32_panel8 *p, const uint8_t *x, int64_t xs, const float *side, float *out,
                                   int64_t os, int nr, const int nx, const int t) {
    __m256 chain[4][PANEL8_GROUP];
    for (int c = 0; c < 4; c++) {
        __m256 acc[PANEL8_GROUP];
        for (int k = 0; k < nx; k++) acc[k] = _mm256_setzero_ps();
        for (int64_t j = c; j < nblk; j += 4) b32_vnni8_block(p + j, x, xs, side, nblk, j, acc, nx, t);
        for (int k = 0; k < nx; k++) chain[c][k] = acc[k];
    }
    for (int k = 0; k < nx; k++)
        store_rows8(out + k * os, _mm256_add_ps(_mm256_add_ps(chain[0][k], chain[1][k]), _mm256_add_ps(chain[2][k], chain[3][k])), nr);
}

RA_AVXVNNI_INLINE void b32_vnni8_run(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs, const uint8_t *side,
                                     float *out, int64_t os, int nr, int nx, const int t) {
    const b32_panel8 *p = panel;
    const float *sd = (const float *)(const void *)side;
    switch (nx) {
    case 4: b32_vnni8_m(nblk, p, x, xs, sd, out, os, nr, 4, t); break;
    case 3: b32_vnni8_m(nblk, p, x, xs, sd, out, os, nr, 3, t); break;
    case 2: b32_vnni8_m(nblk, p, x, xs, sd, out, os, nr, 2, t); break;
    default: b32_vnni8_m(nblk, p, x, xs, sd, out, os, nr, 1, t); break;
    }
}

#define RA_B32_AVXVNNI(name, t)                                                                                        \
    RA_AVXVNNI static void name##_vnni8_run(int64_t nblk, const void *panel, const uint8_t *x, int64_t xs,             \
                                            const uint8_t *side, int64_t side_row, float *out, int64_t os, int nr,     \
                                            int nx) {                                                                  \
        (void)side_row;                                                                                                \
        b32_vnni8_run(nblk, panel, x, xs, side, out, os, nr, nx, t);                                                   \
    }                                                                                                                  \
    int ra_matmul_##name##_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, \
                                   int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {                  \
        return b32_matmul(w, n, x, NULL, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack,             \
                          name##_vnni8_run, t, 0);                                                                     \
    }                                                                                                                  \
    static int name##_side_avxvnni(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out,  \
                                   int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) { \
        return b32_matmul(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes, name##_pack,             \
                          name##_vnni8_run, t, 0);                                                                     \
    }
RA_B32_AVXVNNI(q8_0, B32_Q8_0)
RA_B32_AVXVNNI(q4_0, B32_Q4_0)
RA_B32_AVXVNNI(q5_0, B32_Q5_0)
RA_B32_AVXVNNI(q4_1, B32_Q4_1)
RA_B32_AVXVNNI(q5_1, B32_Q5_1)

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

int ra_matmul_b32_side_avxvnni(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                               float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes) {
    switch (b32_kind(weight_type)) {
    case B32_Q8_0: return q8_0_side_avxvnni(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q4_0: return q4_0_side_avxvnni(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q5_0: return q5_0_side_avxvnni(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q4_1: return q4_1_side_avxvnni(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    case B32_Q5_1: return q5_1_side_avxvnni(w, n, x, side, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
    default: return 0;
    }
}

#endif
