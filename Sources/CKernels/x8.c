// Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, IQ4_XS and the 32-element types (Q4_0, Q5_0, Q4_1, Q5_1, Q8_0) repacked at load for decode: 8 weight rows
// interleaved so that the 8 lanes of a 256-bit vector are 8 rows.
//
// Why: on a 2-core AVX2 machine (AMD EPYC, no AVX-512) the one-row Q4_K dot computes barely faster than a thread's share
// of the memory: its instructions, not the bytes, set the decode rate (bench/results/engine-notes.md, "Stop 31").
// A row's dot spends a fifth of them broadcasting and unpacking its sub-block scales and an eighth on the float tail
// of each super-block. With 8 rows in the lanes the scales are one byte shuffle per sub-block for all 8, the int32
// sums need no horizontal reduction and the float tail is two vector fmas for 8 rows. Q5_K's dot is the same with the
// fifth bits on top. The 32-element types (SmolLM2's Q4_1, Gemma 3's Q5_0) have a float tail every 32 elements, 8 rows
// of which become one vector's, and their nibbles need no per-row shuffles. Q8_0's one-row kernel computes fast enough,
// but reads 4 KiB ahead of each row: a group is one sequential stream the hardware prefetcher follows better on its own
// (from memory 1.2x on a Zen 4 EPYC, engine-notes "Stop 34"; a Zen 1 wants a software prefetch too, x8_prefetch).
// Q6_K (a Q4_K_M file's output matrix and half its ffn_down and attn_v, 45% of Qwen3-0.6B Q4_K_M's bytes a token)
// spends as many instructions unpacking 6-bit quants in either layout, but a row's dot also picks each sub-block's
// scale per 32 quants and reduces its sums per super-block: 8 rows in the lanes computed 1.42x as fast in L2
// (engine-notes "Stop 36"). IQ4_XS's one-row dot takes the activations' signs and a
// block's scale per row; with 8 rows in the lanes the activations' magnitudes are taken once for the 8 rows and a block's
// scales are one byte shuffle (bench/kernels/x8_ab.sh 23 1024 512 on a Zen 1 EPYC, 1 thread: 1.39x in L2, 1.23x from memory);
// IQ4_NL the same with a float step every 32 elements, 8 rows of which become one vector fma (x8_ab 20: 2.0x in L2,
// 1.68x from memory).
//
// The bits are the one-row dots': per row and super-block the exact int32 sums I (scale · quant · activation) and M
// (min · activation block sum), then Q4_K acc = fma(I, d · d_x, acc), acc = fnmadd(M, dmin · d_x, acc), super-block
// after super-block; Q5_K acc = fma(I, d · d_x, acc) and accm = fma(M, dmin · d_x, accm), acc - accm at the end; Q6_K
// acc = fma(I - 32 · Σ_j sc_j · bsums_j, d · d_x, acc); the 32-element types c = fma(I, d · d_x, c) (then c = fma(m,
// s_x, c) with a min) into chain c = block mod 4, (c0 + c1) + (c2 + c3) at the end, where Q4_0's and Q5_0's I is the
// unsigned quants' sum less 8 or 16 · Σ x. The kernels are in x8_rows_impl.h: AVX2's, and AVX-512 VNNI's, whose
// vpdpbusd sums a quartet's 4 products straight into int32 (no int16 step, then a sub-block's scale by vpmulld; the
// signed levels of IQ4 and Q8_0 +128, 128 · Σ x taken off exactly): the same exact integers, in cache 1.2-2x as fast on
// a Zen 4 EPYC (engine-notes "Stop 45"). Paths and shapes without these kernels convert a range of rows back to the
// file's layout in a per-thread buffer and run the path's own kernels on them, so every path keeps its results exactly.
#include "ckernels.h"
#include "kernels_internal.h"

#include <string.h>

int ra_x8_type(int type) {
    switch (type) {
    case RA_Q4_K: return RA_Q4_K_X8;
    case RA_Q5_K: return RA_Q5_K_X8;
    case RA_Q4_0: return RA_Q4_0_X8;
    case RA_Q5_0: return RA_Q5_0_X8;
    case RA_Q4_1: return RA_Q4_1_X8;
    case RA_Q5_1: return RA_Q5_1_X8;
    case RA_Q8_0: return RA_Q8_0_X8;
    case RA_Q6_K: return RA_Q6_K_X8;
    case RA_Q3_K: return RA_Q3_K_X8;
    case RA_Q2_K: return RA_Q2_K_X8;
    case RA_IQ4_XS: return RA_IQ4_XS_X8;
    case RA_IQ4_NL: return RA_IQ4_NL_X8;
    default: return -1;
    }
}

int ra_x8_source(int x8) {
    switch (x8) {
    case RA_Q4_K_X8: return RA_Q4_K;
    case RA_Q5_K_X8: return RA_Q5_K;
    case RA_Q4_0_X8: return RA_Q4_0;
    case RA_Q5_0_X8: return RA_Q5_0;
    case RA_Q4_1_X8: return RA_Q4_1;
    case RA_Q5_1_X8: return RA_Q5_1;
    case RA_Q8_0_X8: return RA_Q8_0;
    case RA_Q6_K_X8: return RA_Q6_K;
    case RA_Q3_K_X8: return RA_Q3_K;
    case RA_Q2_K_X8: return RA_Q2_K;
    case RA_IQ4_XS_X8: return RA_IQ4_XS;
    case RA_IQ4_NL_X8: return RA_IQ4_NL;
    default: return -1;
    }
}

int64_t ra_x8_bytes(int type, int64_t n, int64_t rows) {
    const int x8 = ra_x8_type(type);
    if (x8 < 0 || n <= 0 || n % ra_type_block_size(type) != 0 || n > RA_X8_MAX_COLUMNS || rows <= 0 || rows % 8 != 0) return -1;
    return rows * ra_row_bytes(x8, n);
}

/// The 32-element types: rows [r0, r1) repacked (to = 1) from the file's rows at a (row 0 first) into the groups at o,
/// or back (to = 0) into a (row r0 first); nb blocks a row.
static void ra_b32_x8_convert(int type, uint8_t *a, uint8_t *o, int64_t nb, int64_t r0, int64_t r1, const int to) {
    const int five = type == RA_Q5_0 || type == RA_Q5_1, min = type == RA_Q4_1 || type == RA_Q5_1, quartets = type == RA_Q8_0 ? 8 : 4;
    const b32x8_layout l = ra_b32x8_layout(five, min, quartets);
    const int64_t bb = ra_type_block_bytes(type);
    const int oqh = min ? 4 : 2, oqs = oqh + (five ? 4 : 0);   // offsets in the file's block (d, then m, qh, qs)
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t j = 0; j < nb; j++) {
            uint8_t *p = o + (row / 8 * nb + j) * l.bytes;
            uint8_t *b = a + ((row - (to ? 0 : r0)) * nb + j) * bb;
            uint32_t h;
            if (to) {
                memcpy(p + 2 * r, b, 2);
                if (min) memcpy(p + l.m + 2 * r, b + 2, 2);
                if (five) {
                    memcpy(&h, b + oqh, 4);
                    h = ra_b32x8_qh(h);
                    memcpy(p + l.qh + 4 * r, &h, 4);
                }
                for (int e = 0; e < quartets; e++) memcpy(p + l.qs + 32 * e + 4 * r, b + oqs + 4 * e, 4);
            } else {
                memcpy(b, p + 2 * r, 2);
                if (min) memcpy(b + 2, p + l.m + 2 * r, 2);
                if (five) {
                    memcpy(&h, p + l.qh + 4 * r, 4);
                    h = ra_b32x8_qh_back(h);
                    memcpy(b + oqh, &h, 4);
                }
                for (int e = 0; e < quartets; e++) memcpy(b + oqs + 4 * e, p + l.qs + 32 * e + 4 * r, 4);
            }
        }
    }
}

/// Q6_K: rows [r0, r1) repacked (to = 1) from the file's rows at a (row 0 first) into the groups at o, or back (to = 0)
/// into a (row r0 first); ns super-blocks a row. The layout: Q6X8_QUANTS, Q6X8_SC, Q6X8_D (kernels_internal.h).
static void ra_q6_k_x8_convert(uint8_t *a, uint8_t *o, int64_t ns, int64_t r0, int64_t r1, const int to) {
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t i = 0; i < ns; i++) {
            uint8_t *p = o + (row / 8 * ns + i) * RA_Q6_K_X8_GROUP_BYTES;
            blk_q6_k *b = (blk_q6_k *)(void *)(a + ((row - (to ? 0 : r0)) * ns + i) * (int64_t)sizeof(blk_q6_k));
            for (int h = 0; h < 2; h++) {
                for (int e = 0; e < 8; e++) {
                    uint8_t *v = p + Q6X8_QUANTS(h, e) + 4 * r;
                    uint8_t *f[3] = { b->ql + 64 * h + 4 * e, b->ql + 64 * h + 32 + 4 * e, b->qh + 32 * h + 4 * e };
                    for (int s = 0; s < 3; s++) {
                        if (to) memcpy(v + 32 * s, f[s], 4);
                        else memcpy(f[s], v + 32 * s, 4);
                    }
                }
            }
            for (int j = 0; j < 16; j++) {
                if (to) p[Q6X8_SC + 8 * j + r] = (uint8_t)b->scales[j];
                else b->scales[j] = (int8_t)p[Q6X8_SC + 8 * j + r];
            }
            if (to) memcpy(p + Q6X8_D + 2 * r, &b->d, 2);
            else memcpy(&b->d, p + Q6X8_D + 2 * r, 2);
        }
    }
}

// A Q3_K hmask byte's bits (bit 4h + c: the third bit of quant c of a byte of half h's qs) in Q3X8_HM's order (to = 1)
// or back (to = 0): bit 4h + c at Q3X8_HM_BIT(h, c).
static uint8_t q3x8_hm_bits(const uint8_t v, const int to) {
    uint8_t o = 0;
    for (int h = 0; h < 2; h++)
        for (int c = 0; c < 4; c++) {
            const int from = to ? 4 * h + c : Q3X8_HM_BIT(h, c), at = to ? Q3X8_HM_BIT(h, c) : 4 * h + c;
            o |= (uint8_t)(((v >> from) & 1) << at);
        }
    return o;
}

/// Q3_K (three = 1) and Q2_K: rows [r0, r1) repacked (to = 1) from the file's rows at a (row 0 first) into the groups at o,
/// or back (to = 0) into a (row r0 first); ns super-blocks a row. The layouts: K16X8_QS, Q3X8_*, Q2X8_* (kernels_internal.h).
static void ra_k16_low_x8_convert(uint8_t *a, uint8_t *o, int64_t ns, int64_t r0, int64_t r1, const int to, const int three) {
    const int64_t gb = three ? RA_Q3_K_X8_GROUP_BYTES : RA_Q2_K_X8_GROUP_BYTES;
    const int64_t bb = three ? (int64_t)sizeof(blk_q3_k) : (int64_t)sizeof(blk_q2_k);
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t i = 0; i < ns; i++) {
            uint8_t *p = o + (row / 8 * ns + i) * gb;
            uint8_t *b = a + ((row - (to ? 0 : r0)) * ns + i) * bb;
            uint8_t *qs = three ? ((blk_q3_k *)(void *)b)->qs : ((blk_q2_k *)(void *)b)->qs;
            for (int h = 0; h < 2; h++)
                for (int e = 0; e < 8; e++) {
                    if (to) memcpy(p + K16X8_QS(h, e) + 4 * r, qs + 32 * h + 4 * e, 4);
                    else memcpy(qs + 32 * h + 4 * e, p + K16X8_QS(h, e) + 4 * r, 4);
                }
            if (three) {
                blk_q3_k *q3 = (blk_q3_k *)(void *)b;
                for (int k = 0; k < 32; k++) {   // hmask byte k: dword k / 4, its byte k % 4 (Q3X8_HM's bit order)
                    uint8_t *x = p + Q3X8_HM + 32 * (k / 4) + 4 * r + k % 4;
                    if (to) *x = q3x8_hm_bits(q3->hmask[k], 1);
                    else q3->hmask[k] = q3x8_hm_bits(*x, 0);
                }
                if (to) {
                    int8_t sc[16];
                    ra_unpack_scales_q3_k(q3->scales, sc);
                    for (int j = 0; j < 16; j++) p[Q3X8_SC + 8 * j + r] = (uint8_t)sc[j];
                    memcpy(p + Q3X8_D + 2 * r, &q3->d, 2);
                } else {
                    // the inverse of ra_unpack_scales_q3_k: scale j + 32 (six bits), its low four bits in the nibble
                    // j / 8 of byte j % 8, its top two in bits 2 (j / 4) of byte 8 + j % 4
                    memset(q3->scales, 0, sizeof q3->scales);
                    for (int j = 0; j < 16; j++) {
                        const int v = (int8_t)p[Q3X8_SC + 8 * j + r] + 32;
                        q3->scales[j % 8] |= (uint8_t)((v & 15) << (4 * (j / 8)));
                        q3->scales[8 + j % 4] |= (uint8_t)((v >> 4) << (2 * (j / 4)));
                    }
                    memcpy(&q3->d, p + Q3X8_D + 2 * r, 2);
                }
            } else {
                blk_q2_k *q2 = (blk_q2_k *)(void *)b;
                for (int j = 0; j < 16; j++) {
                    if (to) p[Q2X8_SC + 8 * j + r] = q2->scales[j];
                    else q2->scales[j] = p[Q2X8_SC + 8 * j + r];
                }
                if (to) {
                    memcpy(p + Q2X8_D + 2 * r, &q2->d, 2);
                    memcpy(p + Q2X8_DMIN + 2 * r, &q2->dmin, 2);
                } else {
                    memcpy(&q2->d, p + Q2X8_D + 2 * r, 2);
                    memcpy(&q2->dmin, p + Q2X8_DMIN + 2 * r, 2);
                }
            }
        }
    }
}

/// IQ4_XS: rows [r0, r1) repacked (to = 1) from the file's rows at a (row 0 first) into the groups at o, or back (to = 0)
/// into a (row r0 first); ns super-blocks a row. The layout: IQ4X8_* (kernels_internal.h).
static void ra_iq4_xs_x8_convert(uint8_t *a, uint8_t *o, int64_t ns, int64_t r0, int64_t r1, const int to) {
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t i = 0; i < ns; i++) {
            uint8_t *p = o + (row / 8 * ns + i) * RA_IQ4_XS_X8_GROUP_BYTES;
            blk_iq4_xs *b = (blk_iq4_xs *)(void *)(a + ((row - (to ? 0 : r0)) * ns + i) * (int64_t)sizeof(blk_iq4_xs));
            for (int j = 0; j < 8; j++)
                for (int e = 0; e < 4; e++) {
                    if (to) memcpy(p + IQ4X8_QS(j, e) + 4 * r, b->qs + 16 * j + 4 * e, 4);
                    else memcpy(b->qs + 16 * j + 4 * e, p + IQ4X8_QS(j, e) + 4 * r, 4);
                }
            if (to) {
                for (int j = 0; j < 8; j++) p[IQ4X8_SC + 8 * j + r] = (uint8_t)(int8_t)ra_iq4_xs_scale(b, j);
                memcpy(p + IQ4X8_D + 2 * r, &b->d, 2);
            } else {
                // the inverse of ra_iq4_xs_scale: scale j + 32 (six bits), its low four bits in nibble j % 2 of
                // scales_l[j / 2], its top two in bits 2j of scales_h
                memset(b->scales_l, 0, sizeof b->scales_l);
                b->scales_h = 0;
                for (int j = 0; j < 8; j++) {
                    const int v = (int8_t)p[IQ4X8_SC + 8 * j + r] + 32;
                    b->scales_l[j / 2] |= (uint8_t)((v & 15) << (4 * (j % 2)));
                    b->scales_h |= (uint16_t)((v >> 4) << (2 * j));
                }
                memcpy(&b->d, p + IQ4X8_D + 2 * r, 2);
            }
        }
    }
}

/// IQ4_NL: rows [r0, r1) repacked (to = 1) from the file's rows at a (row 0 first) into the groups at o, or back (to = 0)
/// into a (row r0 first); nb blocks a row. The layout: IQ4NLX8_QS (kernels_internal.h).
static void ra_iq4_nl_x8_convert(uint8_t *a, uint8_t *o, int64_t nb, int64_t r0, int64_t r1, const int to) {
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t i = 0; i < nb; i++) {
            uint8_t *p = o + (row / 8 * nb + i) * RA_IQ4_NL_X8_GROUP_BYTES;
            blk_iq4_nl *b = (blk_iq4_nl *)(void *)(a + ((row - (to ? 0 : r0)) * nb + i) * (int64_t)sizeof(blk_iq4_nl));
            for (int e = 0; e < 4; e++) {
                if (to) memcpy(p + IQ4NLX8_QS(e) + 4 * r, b->qs + 4 * e, 4);
                else memcpy(b->qs + 4 * e, p + IQ4NLX8_QS(e) + 4 * r, 4);
            }
            if (to) memcpy(p + 2 * r, &b->d, 2);
            else memcpy(&b->d, p + 2 * r, 2);
        }
    }
}

int ra_x8_repack(int type, const void *src, int64_t n, int64_t rows, void *dst) {
    if (ra_x8_bytes(type, n, rows) < 0) return 0;
    if (type == RA_IQ4_NL) {
        ra_iq4_nl_x8_convert((uint8_t *)(uintptr_t)src, dst, n / 32, 0, rows, 1);
        return 1;
    }
    if (ra_type_block_size(type) == 32) {   // Q4_0, Q5_0, Q4_1, Q5_1, Q8_0 (ra_x8_bytes took only the repacked types)
        ra_b32_x8_convert(type, (uint8_t *)(uintptr_t)src, dst, n / 32, 0, rows, 1);
        return 1;
    }
    if (type == RA_Q6_K) {
        ra_q6_k_x8_convert((uint8_t *)(uintptr_t)src, dst, n / QK_K, 0, rows, 1);
        return 1;
    }
    if (type == RA_Q3_K || type == RA_Q2_K) {
        ra_k16_low_x8_convert((uint8_t *)(uintptr_t)src, dst, n / QK_K, 0, rows, 1, type == RA_Q3_K);
        return 1;
    }
    if (type == RA_IQ4_XS) {
        ra_iq4_xs_x8_convert((uint8_t *)(uintptr_t)src, dst, n / QK_K, 0, rows, 1);
        return 1;
    }
    const int five = type == RA_Q5_K;
    const int64_t ns = n / QK_K, bb = ra_type_block_bytes(type), gb = 8 * ra_type_block_bytes(ra_x8_type(type));
    const int64_t qso = five ? (int64_t)offsetof(blk_q5_k, qs) : (int64_t)offsetof(blk_q4_k, qs), oqs = five ? K4X8_QS5 : K4X8_QS4;
    const uint8_t *a = src;
    uint8_t *o = dst;
    for (int64_t g8 = 0; g8 < rows / 8; g8++) {
        for (int64_t i = 0; i < ns; i++) {
            uint8_t *p = o + (g8 * ns + i) * gb;
            k4x8_head *h = (k4x8_head *)(void *)p;
            for (int r = 0; r < 8; r++) {
                const uint8_t *b = a + ((g8 * 8 + r) * ns + i) * bb;
                const blk_q4_k *head = (const blk_q4_k *)(const void *)b;   // d, dmin, scales: the same in Q5_K
                uint8_t sc[8], m[8];
                ra_unpack_scales_k4(head->scales, sc, m);
                h->d[r] = head->d;
                h->dmin[r] = head->dmin;
                for (int j = 0; j < 8; j++) {
                    h->sc[j][r] = sc[j];
                    h->mn[j][r] = m[j];
                }
                for (int g = 0; g < 4; g++)
                    for (int e = 0; e < 8; e++) memcpy(p + oqs + 256 * g + 32 * e + 4 * r, b + qso + 32 * g + 4 * e, 4);
                if (five)
                    for (int e = 0; e < 8; e++) memcpy(p + K4X8_QH + 32 * e + 4 * r, ((const blk_q5_k *)(const void *)b)->qh + 4 * e, 4);
            }
        }
    }
    return 1;
}

/// Rows [r0, r1) of a repacked matrix (ns blocks a row: super-blocks of the K types) back in the file's layout (`type`)
/// at dst.
static void ra_x8_unpack(int type, const uint8_t *w, int64_t ns, int64_t r0, int64_t r1, uint8_t *dst) {
    if (type == RA_IQ4_NL) {
        ra_iq4_nl_x8_convert(dst, (uint8_t *)(uintptr_t)w, ns, r0, r1, 0);
        return;
    }
    if (ra_type_block_size(type) == 32) {
        ra_b32_x8_convert(type, dst, (uint8_t *)(uintptr_t)w, ns, r0, r1, 0);
        return;
    }
    if (type == RA_Q6_K) {
        ra_q6_k_x8_convert(dst, (uint8_t *)(uintptr_t)w, ns, r0, r1, 0);
        return;
    }
    if (type == RA_Q3_K || type == RA_Q2_K) {
        ra_k16_low_x8_convert(dst, (uint8_t *)(uintptr_t)w, ns, r0, r1, 0, type == RA_Q3_K);
        return;
    }
    if (type == RA_IQ4_XS) {
        ra_iq4_xs_x8_convert(dst, (uint8_t *)(uintptr_t)w, ns, r0, r1, 0);
        return;
    }
    const int five = type == RA_Q5_K;
    const int64_t bb = ra_type_block_bytes(type), gb = 8 * ra_type_block_bytes(ra_x8_type(type));
    const int64_t qso = five ? (int64_t)offsetof(blk_q5_k, qs) : (int64_t)offsetof(blk_q4_k, qs), oqs = five ? K4X8_QS5 : K4X8_QS4;
    for (int64_t row = r0; row < r1; row++) {
        const int r = (int)(row % 8);
        for (int64_t i = 0; i < ns; i++) {
            const uint8_t *p = w + (row / 8 * ns + i) * gb;
            const k4x8_head *h = (const k4x8_head *)(const void *)p;
            uint8_t *b = dst + ((row - r0) * ns + i) * bb;
            blk_q4_k *head = (blk_q4_k *)(void *)b;
            head->d = h->d[r];
            head->dmin = h->dmin[r];
            for (int j = 0; j < 4; j++) {   // the inverse of ra_unpack_scales_k4: 16 values of 6 bits in 12 bytes
                head->scales[j] = (uint8_t)(h->sc[j][r] | ((h->sc[j + 4][r] >> 4) << 6));
                head->scales[j + 4] = (uint8_t)(h->mn[j][r] | ((h->mn[j + 4][r] >> 4) << 6));
                head->scales[j + 8] = (uint8_t)((h->sc[j + 4][r] & 15) | ((h->mn[j + 4][r] & 15) << 4));
            }
            for (int g = 0; g < 4; g++)
                for (int e = 0; e < 8; e++) memcpy(b + qso + 32 * g + 4 * e, p + oqs + 256 * g + 32 * e + 4 * r, 4);
            if (five)
                for (int e = 0; e < 8; e++) memcpy(((blk_q5_k *)(void *)b)->qh + 4 * e, p + K4X8_QH + 32 * e + 4 * r, 4);
        }
    }
}


int ra_x8_kernel(int path) {
#if defined(__x86_64__)
    // Every x86 path with AVX2: the AVX-512 paths take the quantized dots from the AVX2 table too, and on a Zen 4 EPYC
    // the groups decode 1.2-1.3x as fast as those one-row kernels (engine-notes.md, "Stop 44"). AVX-512 VNNI runs the
    // groups' kernels with vpdpbusd (x8_rows_vnni.c), the others the AVX2 ones (x8_rows_avx2.c).
    return ra_path_is_x86_simd(path);
#else
    (void)path;
    return 0;
#endif
}

// Bytes of the longest file row of any repacked type (RA_X8_MAX_COLUMNS of Q8_0, 34 KiB, the widest per element), for
// rows converted back on the stack.
enum { X8_FILE_ROW_MAX = RA_X8_MAX_COLUMNS / 32 * sizeof(blk_q8_0) };
_Static_assert(X8_FILE_ROW_MAX >= RA_X8_MAX_COLUMNS / QK_K * sizeof(blk_q5_k) &&
               sizeof(blk_q8_0) >= sizeof(blk_q5_1) && sizeof(blk_q8_0) >= sizeof(blk_q5_0) &&
               sizeof(blk_q8_0) >= sizeof(blk_q4_1) && sizeof(blk_q8_0) >= sizeof(blk_q4_0) &&
               sizeof(blk_q5_k) >= sizeof(blk_q4_k) && X8_FILE_ROW_MAX >= RA_X8_MAX_COLUMNS / QK_K * sizeof(blk_q6_k) &&
               sizeof(blk_q6_k) >= sizeof(blk_iq4_xs),
               "a file row of any repacked type fits X8_FILE_ROW_MAX");

void ra_x8_dequantize_row(int x8, const void *w, int64_t n, int64_t r, float *dst) {
    const int type = ra_x8_source(x8);
    if (type < 0 || n <= 0 || n % ra_type_block_size(type) != 0 || n > RA_X8_MAX_COLUMNS || r < 0) return;
    _Alignas(64) uint8_t row[X8_FILE_ROW_MAX];
    ra_x8_unpack(type, w, n / ra_type_block_size(type), r, r + 1, row);
    ra_dequantize_row(type, row, dst, n);
}

void ra_x8_rows(int x8, const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                int64_t r0, int64_t r1) {
    const int type = ra_x8_source(x8);
    const uint8_t *W = w;
    if (type < 0 || n <= 0 || n % ra_type_block_size(type) != 0 || n > RA_X8_MAX_COLUMNS || r1 <= r0 || nb <= 0) return;
    const int64_t ns = n / ra_type_block_size(type);
#if defined(__x86_64__)
    const int path = ra_kernel_path();
    if (nb == 1 && r0 % 8 == 0 && r1 % 8 == 0 && ra_x8_kernel(path)) {
        const uint8_t *w0 = W + r0 * ra_row_bytes(x8, n);
        const ra_x8_rows_fn rows = path == RA_PATH_AVX512_VNNI ? ra_x8_rows_vnni(type) : ra_x8_rows_avx2(type);
        rows(n, w0, (r1 - r0) / 8, x, side, out + r0, ra_x8_prefetch(type));
        return;
    }
#endif
    // Any other path or shape: the rows back in the file's layout, 64 at a time, through the path's own kernels (so a
    // batch still reaches the path's panels).
    enum { ROWS = 64 };
    const int64_t wrow = ra_row_bytes(type, n);
    uint8_t *rows = ra_thread_unpack_buffer(ROWS * wrow);
    if (!rows) {
        // No heap for the buffer: one row at a time from the stack.
        _Alignas(64) uint8_t one[X8_FILE_ROW_MAX];
        for (int64_t r = r0; r < r1; r++) {
            ra_x8_unpack(type, W, ns, r, r + 1, one);
            ra_matmul_rows_side(type, one, n, x, side, nb, out + r, out_stride, 0, 1);
        }
        return;
    }
    for (int64_t ra = r0; ra < r1; ra += ROWS) {
        const int64_t rb = ra + ROWS < r1 ? ra + ROWS : r1;
        ra_x8_unpack(type, W, ns, ra, rb, rows);
        ra_matmul_rows_side(type, rows, n, x, side, nb, out + ra, out_stride, 0, rb - ra);
    }
}
