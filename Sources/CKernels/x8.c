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
// acc = fma(I - 32 · Σ_j sc_j · bsums_j, d · d_x, acc); the
// 32-element types c = fma(I, d · d_x, c) (then c = fma(m, s_x, c) with a min) into chain c = block mod 4,
// (c0 + c1) + (c2 + c3) at the end, where Q4_0's and Q5_0's I is the unsigned quants' sum less 8 or 16 · Σ x. Paths
// and shapes without these kernels convert a range of rows back to the file's layout in a per-thread buffer and run
// the path's own kernels on them, so every path keeps its results exactly.
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

#include "avx2_panel8.h"

#if defined(__x86_64__)

// Dword lane r of a vector from a 128-bit source s holding bytes [v(j, 0..7), v(j + 1, 0..7)] broadcast to both halves:
// k4x8_pick(odd) gives (v(j + odd, r), v(j + odd, r)) as two int16 (a sub-block's scale for vpmaddwd against the two
// pair sums of a lane), k4x8_pair gives (v(j, r), v(j + 1, r)) (two sub-blocks' mins against two block sums).
// The lines of [p + pf, p + pf + bytes) prefetched, or none with pf 0 (ra_x8_prefetch: the CPU's choice, taken once a
// call of ra_x8_rows). Prefetches never fault, so running past a matrix's end is harmless.
// A group is one sequential stream. On a Zen 4 EPYC the hardware prefetcher follows it better alone (x8_ab from memory
// in huge pages, 1 thread: Q4_K 23.8 -> 30.7 GB/s, Q5_K 17.5 -> 26.9 without the one-row dots' 4 KiB-ahead prefetch;
// 1 KiB ahead 24.9 and 21.0, 16 KiB 22.0 and 15.3). On a Zen 1 EPYC, whose hardware prefetcher keeps a plain stream
// at ~0.8x what a 4 KiB-ahead prefetch reaches (bench/engine/bandwidth.c, 2 threads: 13.4 against 16.3 GB/s), decode
// with the 4 KiB prefetch in the groups ran 1.00-1.37x as fast over 11 files (Qwen3-0.6B-shaped Q8_0 1.14x, Q4_K_M
// 1.01-1.12x, Q2_K 1.37x; bench/engine/ab.sh, engine-bench --x8-prefetch 0 against the CPU's choice, 7 rounds, 2
// threads; bench/results/engine-notes.md "Stop 39"). Hence a choice per CPU (dispatch.c, cpu_x8_prefetch).
RA_AVX2_INLINE void x8_prefetch(const uint8_t *p, int64_t bytes, int64_t pf) {
#ifdef RA_NO_PREFETCH
    (void)p, (void)bytes, (void)pf;
#else
    if (pf)
        for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + pf + o, 0, 3);
#endif
}

// Step k of a super-block's `positions` steps of work (a loop's iterations in order) through its gb bytes at p: at each
// quarter of the work, that quarter of the block's lines prefetched pf bytes ahead (x8_prefetch). Called from the
// loop whose iterations give the best code where pf is 0 too (x8_ab.sh in L2, engine-notes "Stop 40"). On the Zen 1 EPYC
// four such bursts a super-block decode faster than the whole block's 11-27 lines prefetched at its start, which seems
// to stall on the core's outstanding misses (Qwen3-0.6B-shaped files, tg64, 2 threads, bench/engine/ab.sh, medians of
// 7: Q4_K_M 1.26-1.40x, Q5_K_M 1.32x, Q3_K_M and Q2_K 1.17x, IQ4_XS 1.00x, Gemma 3 270M 1.04x); one line a step gave
// 1.17x the block's start; against 4 bursts, 8 gave 0.94x and 2 gave 0.92x. The 32-element types' blocks are 2-5
// lines, prefetched at each block (b32x8_rows): a burst every 4 blocks was 0.64-0.98x (bench/results/engine-notes.md
// "Stop 40").
enum { X8_PREFETCH_BURSTS = 4 };
RA_AVX2_INLINE void x8_prefetch_step(const uint8_t *p, int64_t gb, int64_t pf, int k, int positions) {
    const int per = positions / X8_PREFETCH_BURSTS;
    if (k % per) return;
    const int64_t j = k / per, lines = (gb + 63) / 64;
    const int64_t a = (j * lines + X8_PREFETCH_BURSTS - 1) / X8_PREFETCH_BURSTS, b = ((j + 1) * lines + X8_PREFETCH_BURSTS - 1) / X8_PREFETCH_BURSTS;
    x8_prefetch(p + 64 * a, 64 * (b - a), pf);
}

RA_AVX2_INLINE __m256i k4x8_pick(const int odd) {
    const char o = (char)(odd ? 8 : 0), z = (char)0x80;
    return _mm256_setr_epi8(o, z, o, z, (char)(o + 1), z, (char)(o + 1), z, (char)(o + 2), z, (char)(o + 2), z, (char)(o + 3), z, (char)(o + 3), z,
                            (char)(o + 4), z, (char)(o + 4), z, (char)(o + 5), z, (char)(o + 5), z, (char)(o + 6), z, (char)(o + 6), z, (char)(o + 7), z, (char)(o + 7), z);
}
RA_AVX2_INLINE __m256i k4x8_pair(void) {
    const char z = (char)0x80;
    return _mm256_setr_epi8(0, z, 8, z, 1, z, 9, z, 2, z, 10, z, 3, z, 11, z, 4, z, 12, z, 5, z, 13, z, 6, z, 14, z, 7, z, 15, z);
}

// out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks of gb bytes at p) with the activation row b,
// prefetching pf bytes ahead (x8_prefetch). Quants are added in int16 before their scale: 8 quartets of 4-bit quants (at most 8 · 2 · 15 · 127 = 30480), 4 of
// 5-bit ones (4 · 2 · 31 · 127 = 31496).
RA_AVX2_INLINE void k4x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int five, const int64_t pf) {
    const int64_t gb = five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES, oqs = five ? K4X8_QS5 : K4X8_QS4;
    const int run = five ? 4 : 8;
    const __m256i pick0 = k4x8_pick(0), pick1 = k4x8_pick(1), pair = k4x8_pair();
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * gb;
        const k4x8_head *h = (const k4x8_head *)(const void *)pi;
        const int8_t *y = b[i].qs;
        __m256i isum = _mm256_setzero_si256();
        RA_UNROLL
        for (int g = 0; g < 4; g++) {
            const __m256i sc = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)(const void *)h->sc[2 * g]));
            const __m256i s0 = _mm256_shuffle_epi8(sc, pick0), s1 = _mm256_shuffle_epi8(sc, pick1);
            RA_UNROLL
            for (int e0 = 0; e0 < 8; e0 += run) {
                __m256i slo = _mm256_setzero_si256(), shi = _mm256_setzero_si256();
                RA_UNROLL
                for (int e = e0; e < e0 + run; e++) {
                    x8_prefetch_step(pi, gb, pf, 8 * g + e, 32);
                    const __m256i v = _mm256_load_si256((const __m256i *)(const void *)(pi + oqs + 256 * g + 32 * e));
                    const __m256i qh = five ? _mm256_load_si256((const __m256i *)(const void *)(pi + K4X8_QH + 32 * e))
                                            : _mm256_setzero_si256();
                    __m256i lo, hi;
                    split_quants(v, qh, 2 * g, 2 * g + 1, five, &lo, &hi);
                    slo = _mm256_add_epi16(slo, _mm256_maddubs_epi16(lo, bcast4(y + 64 * g + 4 * e)));
                    shi = _mm256_add_epi16(shi, _mm256_maddubs_epi16(hi, bcast4(y + 64 * g + 32 + 4 * e)));
                }
                isum = _mm256_add_epi32(isum, _mm256_add_epi32(_mm256_madd_epi16(slo, s0), _mm256_madd_epi16(shi, s1)));
            }
        }
        // mins: M = sum_j m[j] · (bsums[2j] + bsums[2j + 1]), a pair of sub-blocks a vpmaddwd
        const __m256i bs = _mm256_loadu_si256((const __m256i *)b[i].bsums);
        const __m256i bs2 = _mm256_broadcastsi128_si256(_mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        __m256i msum = _mm256_setzero_si256();
        RA_UNROLL
        for (int q = 0; q < 4; q++) {
            const __m256i mn = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)(const void *)h->mn[2 * q])), pair);
            const __m256i bq = q == 0 ? _mm256_shuffle_epi32(bs2, 0x00) : q == 1 ? _mm256_shuffle_epi32(bs2, 0x55)
                             : q == 2 ? _mm256_shuffle_epi32(bs2, 0xAA) : _mm256_shuffle_epi32(bs2, 0xFF);
            msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mn, bq));
        }
        const __m256 dy = _mm256_set1_ps(b[i].d);
        const __m256 d = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(const void *)h->d));
        const __m256 dmin = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(const void *)h->dmin));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, dy), acc);
        if (five) accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(dmin, dy), accm);
        else acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(dmin, dy), acc);
    }
    _mm256_storeu_ps(out, five ? _mm256_sub_ps(acc, accm) : acc);
}

// The decode rows kernel of a K type's groups (`group` with its last argument `arg`, super-blocks of `bytes`): one
// function a type, so that a profile names the type (bench/engine/profile_summary.py).
#define RA_KX8_ROWS(name, group, bytes, arg)                                                                           \
    RA_AVX2 static void ra_avx2_rows_##name##_x8(int64_t n, const void *w, int64_t groups, const void *x, const float *side, \
                                                 float *out, const int64_t pf) {                                   \
        (void)side;                                                                                                    \
        const int64_t ns = n / QK_K;                                                                                   \
        for (int64_t g8 = 0; g8 < groups; g8++) group(ns, (const uint8_t *)w + g8 * ns * (bytes), x, out + 8 * g8, arg, pf); \
    }
RA_KX8_ROWS(q4_k, k4x8_group, RA_Q4_K_X8_GROUP_BYTES, 0)
RA_KX8_ROWS(q5_k, k4x8_group, RA_Q5_K_X8_GROUP_BYTES, 1)

// A vpshufb control over 16 bytes [sc[j][0..7], sc[j + 1][0..7]] in both 128-bit halves: dword r (row r) gets byte
// lo + r in the high byte of its low int16 and byte hi + r in that of its high one; vpsraw 8 then sign-extends them.
RA_AVX2_INLINE __m256i q6x8_pick(const int lo, const int hi) {
    const char z = (char)0x80;
#define Q6X8_P(r) z, (char)(lo + (r)), z, (char)(hi + (r))
    return _mm256_setr_epi8(Q6X8_P(0), Q6X8_P(1), Q6X8_P(2), Q6X8_P(3), Q6X8_P(4), Q6X8_P(5), Q6X8_P(6), Q6X8_P(7));
#undef Q6X8_P
}

// Σ_j w_j · bsums_j for each of 8 rows, w_j the bytes [sub-block j][row r] at s: int8 scales (sign = 1, with pair =
// q6x8_pick(0, 8): Q6_K, Q3_K) or the min in the high nibble (sign = 0, pair = k4x8_pair(): Q2_K); a pair of
// sub-blocks a vpmaddwd.
RA_AVX2_INLINE __m256i k16x8_bsum_dot(const uint8_t *s, const blk_q8_k *b, const __m256i pair, const int sign) {
    __m256i sum = _mm256_setzero_si256();
    RA_UNROLL
    for (int q = 0; q < 8; q++) {
        int32_t b2;
        memcpy(&b2, b->bsums + 2 * q, 4);
        const __m256i w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(s + 16 * q))), pair);
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(sign ? _mm256_srai_epi16(w, 8) : _mm256_srli_epi16(w, 4), _mm256_set1_epi32(b2)));
    }
    return sum;
}

// Q6_K: out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the activation row b, the bits
// of dot_q6_k: per super-block each row's exact int32 sum, the offset 32 taken off as 32 · Σ_j sc_j · bsums_j, then
// acc = fma(sum, d · d_x, acc). A quartet of 8 rows is one vpmaddubsw against the activation's 4 bytes broadcast; two
// quartets are added in int16 (4 · 63 · 128 = 32256) before one vpmaddwd with the sub-block's scales of the 8 rows.
RA_AVX2_INLINE void q6x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int64_t pf) {
    const __m256i pick0 = q6x8_pick(0, 0), pick1 = q6x8_pick(8, 8), pair = q6x8_pick(0, 8);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * RA_Q6_K_X8_GROUP_BYTES;
        const int8_t *y = b[i].qs;
        __m256i isum = _mm256_setzero_si256();
        RA_UNROLL
        for (int h = 0; h < 2; h++) {
            RA_UNROLL
            for (int a = 0; a < 2; a++) {   // quartets 4a .. 4a + 3 of each 32-element vector: sub-blocks 8h + 2c + a
                x8_prefetch_step(pi, RA_Q6_K_X8_GROUP_BYTES, pf, 2 * h + a, 4);
                RA_UNROLL
                for (int e0 = 4 * a; e0 < 4 * a + 4; e0 += 2) {
                    __m256i t[4];
                    RA_UNROLL
                    for (int e = e0; e < e0 + 2; e++) {
                        const uint8_t *v = pi + Q6X8_QUANTS(h, e);
                        __m256i q[4];
                        q6_k_quants_v(_mm256_loadu_si256((const __m256i *)(const void *)v), _mm256_loadu_si256((const __m256i *)(const void *)(v + 32)),
                                      _mm256_loadu_si256((const __m256i *)(const void *)(v + 64)), q);
                        RA_UNROLL
                        for (int c = 0; c < 4; c++) {
                            const __m256i s = _mm256_maddubs_epi16(q[c], bcast4(y + 128 * h + 32 * c + 4 * e));
                            t[c] = e == e0 ? s : _mm256_add_epi16(t[c], s);
                        }
                    }
                    RA_UNROLL
                    for (int c = 0; c < 4; c++) {
                        const __m256i sc = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(pi + Q6X8_SC + 8 * (8 * h + 2 * c))));
                        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(t[c], _mm256_srai_epi16(_mm256_shuffle_epi8(sc, a ? pick1 : pick0), 8)));
                    }
                }
            }
        }
        // the offset: Σ_j sc_j · bsums_j
        const __m256i corr = k16x8_bsum_dot(pi + Q6X8_SC, &b[i], pair, 1);
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pi + Q6X8_D)));
        const __m256 fi = _mm256_cvtepi32_ps(_mm256_sub_epi32(isum, _mm256_slli_epi32(corr, 5)));
        acc = _mm256_fmadd_ps(fi, _mm256_mul_ps(d, _mm256_set1_ps(b[i].d)), acc);
    }
    _mm256_storeu_ps(out, acc);
}

RA_AVX2 static void ra_avx2_rows_q6_k_x8(int64_t n, const void *w, int64_t groups, const void *x, const float *side, float *out,
                                          const int64_t pf) {
    (void)side;
    const int64_t ns = n / QK_K;
    for (int64_t g8 = 0; g8 < groups; g8++) q6x8_group(ns, (const uint8_t *)w + g8 * ns * RA_Q6_K_X8_GROUP_BYTES, x, out + 8 * g8, pf);
}

// Q3_K (three = 1) and Q2_K: out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the
// activation row b, the bits of the one-row dots (k16_dot): per super-block each row's exact int32 sum I of scale · quant
// · activation over the unsigned quants (Q3_K 0..7, Q2_K 0..3), Q3_K's offset 4 taken off as 4 · Σ_j sc_j · bsums_j, Q2_K's
// M = Σ_j min_j · bsums_j; then acc = fma(I, d · d_x, acc) (Q2_K: acc = fnmadd(M, dmin · d_x, acc)). Per 16 elements of
// a sub-block the 4 quartets of 8 rows are one vpmaddubsw each against the activation's 4 bytes broadcast, added in int16
// (at most 4 · 2 · 7 · 127 = 7112) before one vpmaddwd with the sub-block's scales of the 8 rows. Q2_K's runs 1 and 3 stay
// 4 times their quants (q2x8_quants_v: two operations fewer a vector; at most 4 · 2 · 12 · 127 = 12192 in int16), their
// int32 sums apart in isum4, which holds 4 times an integer and is shifted back exactly once per super-block.
RA_AVX2_INLINE void k16x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int three, const int64_t pf) {
    const int64_t gb = three ? RA_Q3_K_X8_GROUP_BYTES : RA_Q2_K_X8_GROUP_BYTES;
    const int osc = three ? Q3X8_SC : Q2X8_SC;
    // a sub-block's 8 scale bytes [j][0..7] and the next's [j + 1][0..7]: Q3_K into each int16's high byte (then vpsraw 8
    // sign-extends), Q2_K into its low byte (then the low nibble is the scale, the byte >> 4 the min)
    const __m256i pick0 = three ? q6x8_pick(0, 0) : k4x8_pick(0), pick1 = three ? q6x8_pick(8, 8) : k4x8_pick(1);
    const __m256i pair = three ? q6x8_pick(0, 8) : k4x8_pair();
    const __m256i low4 = _mm256_set1_epi16(15);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * gb;
        const int8_t *y = b[i].qs;
        __m256i isum = _mm256_setzero_si256(), isum4 = _mm256_setzero_si256();
        RA_UNROLL
        for (int h = 0; h < 2; h++) {
            RA_UNROLL
            for (int a = 0; a < 2; a++) {   // quartets 4a .. 4a + 3 of each 32-element run c: sub-block 8h + 2c + a
                x8_prefetch_step(pi, gb, pf, 2 * h + a, 4);
                __m256i t[4];
                RA_UNROLL
                for (int e = 4 * a; e < 4 * a + 4; e++) {
                    __m256i q[4];
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(pi + K16X8_QS(h, e)));
                    if (three) q3x8_quants_v(v, _mm256_loadu_si256((const __m256i *)(const void *)(pi + Q3X8_HM + 32 * e)), h, q);
                    else q2x8_quants_v(v, q);
                    RA_UNROLL
                    for (int c = 0; c < 4; c++) {
                        const __m256i s = _mm256_maddubs_epi16(q[c], bcast4(y + 128 * h + 32 * c + 4 * e));
                        t[c] = e == 4 * a ? s : _mm256_add_epi16(t[c], s);
                    }
                }
                RA_UNROLL
                for (int c = 0; c < 4; c++) {
                    const __m256i sb = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(pi + osc + 8 * (8 * h + 2 * c)))),
                                                           a ? pick1 : pick0);
                    const __m256i sc = three ? _mm256_srai_epi16(sb, 8) : _mm256_and_si256(sb, low4);
                    if (!three && (c & 1)) isum4 = _mm256_add_epi32(isum4, _mm256_madd_epi16(t[c], sc));
                    else isum = _mm256_add_epi32(isum, _mm256_madd_epi16(t[c], sc));
                }
            }
        }
        // Q3_K's offset (Σ_j sc_j · bsums_j) or Q2_K's mins (Σ_j min_j · bsums_j)
        const __m256i corr = k16x8_bsum_dot(pi + osc, &b[i], pair, three);
        const __m256 dy = _mm256_set1_ps(b[i].d);
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pi + (three ? Q3X8_D : Q2X8_D))));
        if (three) {
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(isum, _mm256_slli_epi32(corr, 2))), _mm256_mul_ps(d, dy), acc);
        } else {
            const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pi + Q2X8_DMIN)));
            isum = _mm256_add_epi32(isum, _mm256_srai_epi32(isum4, 2));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, dy), acc);
            acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(corr), _mm256_mul_ps(dmin, dy), acc);
        }
    }
    _mm256_storeu_ps(out, acc);
}

RA_KX8_ROWS(q3_k, k16x8_group, RA_Q3_K_X8_GROUP_BYTES, 1)
RA_KX8_ROWS(q2_k, k16x8_group, RA_Q2_K_X8_GROUP_BYTES, 0)

// One quartet vector of 8 IQ4 rows at q (dword r: 4 bytes of row r's nibbles) against its activations: the low nibbles'
// levels against y[0..4), the high ones' against y[16..20), each through vpsignb (the activations' signs onto the levels)
// and vpmaddubsw with their magnitudes ya; each half's pair sums (at most 2 · 127 · 127) meet w (row r's int16 block
// scale, or 1) in its own vpmaddwd, as two of them would overflow int16.
RA_AVX2_INLINE __m256i iq4x8_quartet(const uint8_t *q, const int8_t *y, const int8_t *ya, const __m256i lut, const __m256i w) {
    const __m256i m4 = _mm256_set1_epi8(15), v = _mm256_loadu_si256((const __m256i *)(const void *)q);
    const __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, m4));
    const __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
    const __m256i tlo = _mm256_maddubs_epi16(bcast4(ya), _mm256_sign_epi8(lo, bcast4(y)));
    const __m256i thi = _mm256_maddubs_epi16(bcast4(ya + 16), _mm256_sign_epi8(hi, bcast4(y + 16)));
    return _mm256_add_epi32(_mm256_madd_epi16(tlo, w), _mm256_madd_epi16(thi, w));
}

// IQ4_XS: out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the activation row b, the bits
// of dot_iq4_xs: per super-block each row's exact int32 sum I = Σ_j scale_j · Σ level · activation, then acc = fma(I,
// d · d_x, acc). The levels are signed: a quartet of 8 rows (looked up by vpshufb) takes the activations' signs
// (vpsignb) and meets their magnitudes, computed once per super-block for all 8 rows, in vpmaddubsw (iq4x8_quartet; Q8_K
// activations are -127..127 and no level is 0 or -128, so vpsignb and vpabsb lose nothing).
RA_AVX2_INLINE void iq4x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int unused, const int64_t pf) {
    (void)unused;
    const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)ra_iq4_levels));
    const __m256i pick0 = q6x8_pick(0, 0), pick1 = q6x8_pick(8, 8);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * RA_IQ4_XS_X8_GROUP_BYTES;
        const int8_t *y = b[i].qs;
        _Alignas(32) int8_t ya[QK_K];
        for (int h = 0; h < QK_K; h += 32)
            _mm256_store_si256((__m256i *)(void *)(ya + h), _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(y + h))));
        __m256i isum = _mm256_setzero_si256();
        RA_UNROLL
        for (int j = 0; j < 8; j++) {
            x8_prefetch_step(pi, RA_IQ4_XS_X8_GROUP_BYTES, pf, j, 8);
            const __m256i sb = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(pi + IQ4X8_SC + 8 * (j & ~1))));
            const __m256i sc = _mm256_srai_epi16(_mm256_shuffle_epi8(sb, j & 1 ? pick1 : pick0), 8);
            RA_UNROLL
            for (int e = 0; e < 4; e++) isum = _mm256_add_epi32(isum, iq4x8_quartet(pi + IQ4X8_QS(j, e), y + 32 * j + 4 * e, ya + 32 * j + 4 * e, lut, sc));
        }
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pi + IQ4X8_D)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_set1_ps(b[i].d)), acc);
    }
    _mm256_storeu_ps(out, acc);
}

RA_KX8_ROWS(iq4_xs, iq4x8_group, RA_IQ4_XS_X8_GROUP_BYTES, 0)

// IQ4_NL: out[0..8) = the dots of each of `groups` groups of 8 repacked rows (nb blocks each) with the activation row x
// (Q8_0), the bits of dot_iq4_nl: per block each row's exact int32 sum, then acc = fma(I, d · d_x, acc), block after
// block. The levels meet the activations as in iq4x8_group (iq4x8_quartet; Q8_0 activations are -127..127 too).
RA_AVX2 static void ra_avx2_rows_iq4_nl_x8(int64_t n, const void *w, int64_t groups, const void *x, const float *side, float *out,
                                            const int64_t pf) {
    (void)side;
    const int64_t nb = n / 32;
    const blk_q8_0 *b = x;
    const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)ra_iq4_levels));
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t g8 = 0; g8 < groups; g8++) {
        const uint8_t *p = (const uint8_t *)w + g8 * nb * RA_IQ4_NL_X8_GROUP_BYTES;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t i = 0; i < nb; i++) {
            const uint8_t *pi = p + i * RA_IQ4_NL_X8_GROUP_BYTES;
            x8_prefetch(pi, RA_IQ4_NL_X8_GROUP_BYTES, pf);
            const int8_t *y = b[i].qs;
            _Alignas(32) int8_t ya[32];
            _mm256_store_si256((__m256i *)(void *)ya, _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(const void *)y)));
            __m256i isum = _mm256_setzero_si256();
            RA_UNROLL
            for (int e = 0; e < 4; e++) isum = _mm256_add_epi32(isum, iq4x8_quartet(pi + IQ4NLX8_QS(e), y + 4 * e, ya + 4 * e, lut, ones));
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)pi));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_set1_ps(ra_f16_table[b[i].d])), acc);
        }
        _mm256_storeu_ps(out + 8 * g8, acc);
    }
}

// The 32-element types (t: B32_Q4_0, _Q5_0, _Q4_1, _Q5_1, _Q8_0; avx2_internal.h): out[0..8) = the dots of each of
// `groups` groups of 8 repacked rows (nb blocks each) with the activation row x (Q8_0 or Q8_1). Per block the 4
// quartets of unsigned quants of both nibbles (with their fifth bits) against the activation's 4 bytes broadcast, added
// in int16 (4-bit: 8 products of pairs, at most 8 · 2 · 15 · 127 = 30480; 5-bit: two runs of 4, 4 · 2 · 31 · 127 =
// 31496), then to int32 by vpmaddwd; the signed types' I = that sum - (8 or 16) · Σ x, exact in float (|.| < 2^24).
// Q8_0: its 8 quartets as dot_b32 takes them, |w| against the activation with w's sign, each pair sum (up to
// 2 · 128 · 127) to int32 at once. Then chain block mod 4 of each row gets fma(I, d · d_x) (and fma(m, s_x)), as
// dot_b32 sums a row.
// side: the activation row's d and s (or Σ x) as floats (ra_matmul_side: nb of each), or NULL to convert them here.
RA_AVX2_INLINE void b32x8_rows(int64_t n, const uint8_t *w, int64_t groups, const uint8_t *x, const float *side, float *out, const int t,
                               const int64_t pf) {
    const int five = t == B32_Q5_0 || t == B32_Q5_1, min = b32_min(t), xb = b32_xbytes(t), xq = b32_xqs(t);
    const b32x8_layout l = ra_b32x8_layout(five, min, t == B32_Q8_0 ? 8 : 4);
    const int64_t nb = n / 32;
    const float off = (float)b32_offset(t);
    float own[2 * (RA_X8_MAX_COLUMNS / 32)];
    if (!side) {
        b32_xscales(x, nb, own, own + nb, t);
        side = own;
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t g8 = 0; g8 < groups; g8++) {
        const uint8_t *g = w + g8 * nb * l.bytes;
        __m256 c[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (int64_t j = 0; j < nb; j++) {
            const int8_t *y = (const int8_t *)(x + j * xb + xq);
            const uint8_t *p = g + j * l.bytes, *q = p + l.qs;
            x8_prefetch(p, l.bytes, pf);
            __m256i isum;
            if (t == B32_Q8_0) {
                isum = _mm256_setzero_si256();
                RA_UNROLL
                for (int e = 0; e < 8; e++) {
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e));
                    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(bcast4(y + 4 * e), v));
                    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, ones));
                }
            } else {
                const __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(const void *)(p + l.qh)) : _mm256_setzero_si256();
                __m256i slo = _mm256_setzero_si256(), shi = _mm256_setzero_si256();
                RA_UNROLL
                for (int e = 0; e < 4; e++) {
                    __m256i lo, hi;
                    split_quants(_mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e)), qh, e, 4 + e, five, &lo, &hi);
                    slo = _mm256_add_epi16(slo, _mm256_maddubs_epi16(lo, bcast4(y + 4 * e)));
                    shi = _mm256_add_epi16(shi, _mm256_maddubs_epi16(hi, bcast4(y + 16 + 4 * e)));
                }
                isum = five ? _mm256_add_epi32(_mm256_madd_epi16(slo, ones), _mm256_madd_epi16(shi, ones))
                            : _mm256_madd_epi16(_mm256_add_epi16(slo, shi), ones);
            }
            __m256 fi = _mm256_cvtepi32_ps(isum);
            if (off != 0.0f) fi = _mm256_sub_ps(fi, _mm256_set1_ps(off * side[nb + j]));
            const int k = (int)(j & 3);
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
            c[k] = _mm256_fmadd_ps(fi, _mm256_mul_ps(d, _mm256_broadcast_ss(side + j)), c[k]);
            if (min) c[k] = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + l.m))),
                                            _mm256_broadcast_ss(side + nb + j), c[k]);
        }
        _mm256_storeu_ps(out + 8 * g8, _mm256_add_ps(_mm256_add_ps(c[0], c[1]), _mm256_add_ps(c[2], c[3])));
    }
}
// One function a type, so that a profile names the type (bench/engine/profile_summary.py).
#define RA_B32X8_ROWS(name, t)                                                                                         \
    RA_AVX2 static void ra_avx2_rows_##name##_x8(int64_t n, const void *w, int64_t groups, const void *x, const float *side, \
                                                 float *out, const int64_t pf) {                                       \
        b32x8_rows(n, w, groups, x, side, out, t, pf);                                                                 \
    }
RA_B32X8_ROWS(q4_0, B32_Q4_0)
RA_B32X8_ROWS(q5_0, B32_Q5_0)
RA_B32X8_ROWS(q4_1, B32_Q4_1)
RA_B32X8_ROWS(q5_1, B32_Q5_1)
RA_B32X8_ROWS(q8_0, B32_Q8_0)
#endif

int ra_x8_kernel(int path) {
#if defined(__x86_64__)
    // Every x86 path with AVX2: the AVX-512 paths take the quantized dots from the AVX2 table too, and on a Zen 4 EPYC
    // the groups decode 1.2-1.3x as fast as those one-row kernels (engine-notes.md, "Stop 44").
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
    if (nb == 1 && r0 % 8 == 0 && r1 % 8 == 0 && ra_x8_kernel(ra_kernel_path())) {
        const uint8_t *w0 = W + r0 * ra_row_bytes(x8, n);
        void (*rows)(int64_t, const void *, int64_t, const void *, const float *, float *, int64_t) =
            type == RA_Q4_K ? ra_avx2_rows_q4_k_x8 : type == RA_Q5_K ? ra_avx2_rows_q5_k_x8 : type == RA_Q6_K ? ra_avx2_rows_q6_k_x8
            : type == RA_Q3_K ? ra_avx2_rows_q3_k_x8 : type == RA_Q2_K ? ra_avx2_rows_q2_k_x8 : type == RA_IQ4_XS ? ra_avx2_rows_iq4_xs_x8
            : type == RA_IQ4_NL ? ra_avx2_rows_iq4_nl_x8
            : type == RA_Q4_0 ? ra_avx2_rows_q4_0_x8
            : type == RA_Q5_0 ? ra_avx2_rows_q5_0_x8 : type == RA_Q4_1 ? ra_avx2_rows_q4_1_x8 : type == RA_Q5_1 ? ra_avx2_rows_q5_1_x8
            : ra_avx2_rows_q8_0_x8;
        rows(n, w0, (r1 - r0) / 8, x, side, out + r0, ra_x8_prefetch());
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
