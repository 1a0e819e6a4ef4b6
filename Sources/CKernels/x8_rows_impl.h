// The decode kernels of the rows repacked at load (x8.c): one activation row against groups of 8 weight rows, a
// type's bits those of its one-row dots. Included once a target: x8_rows_avx2.c (the AVX2 instructions, every x86 path
// with AVX2) and x8_rows_vnni.c (AVX-512 VNNI's 256-bit vpdpbusd where it saves instructions, same bits), which define
//   X8_VNNI      0 or 1
//   X8_FN        the kernels' target attribute
//   X8_ROWS(t)   the name of type t's rows kernel (one function a type, so that a profile names the type)
//   X8_PICK      the name of the function that returns a type's rows kernel
#include "avx2_panel8.h"

#if defined(__x86_64__)

#define X8_INLINE X8_FN static inline __attribute__((always_inline))

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
// threads; bench/results/engine-notes.md "Stop 39"). On the Zen 4 the Q3_K and Q2_K groups, which compute the fewest
// bytes a cycle, decode faster with it after all: Qwen3-0.6B-shaped Q2_K 97-101 -> 109-117 tok/s on the AVX2 path and
// 103-114 -> 113-118 on AVX-512 VNNI, prefetching those two types' groups only ("Stop 46"). Hence a choice per CPU and
// type (dispatch.c, cpu_x8_prefetch).
RA_AVX2_INLINE void x8_prefetch(const uint8_t *p, int64_t bytes, int64_t pf) {
#ifdef RA_NO_PREFETCH
    (void)p, (void)bytes, (void)pf;
#else
    if (pf)
        for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + pf + o, 0, 3);
#endif
}

// Step k of a super-block's `positions` steps of work (a loop's iterations in order) through its gb bytes at p: at each
// quarter of the work, that quarter of the block's lines prefetched pf bytes ahead (x8_prefetch). Called from the loop
// whose iterations give the best code where pf is 0 too (x8_ab.sh in L2, engine-notes "Stop 40"). On the Zen 1 EPYC
// four such bursts a super-block decode faster than the whole block's 11-27 lines prefetched at its start, which seems
// to stall on the core's outstanding misses (Qwen3-0.6B-shaped files, tg64, 2 threads, bench/engine/ab.sh, medians of
// 7: Q4_K_M 1.26-1.40x, Q5_K_M 1.32x, Q3_K_M and Q2_K 1.17x, IQ4_XS 1.00x, Gemma 3 270M 1.04x); one line a step gave
// 1.17x the block's start; against 4 bursts, 8 gave 0.94x and 2 gave 0.92x. The 32-element types' blocks are 2-5 lines,
// prefetched at each block (b32x8_rows): a burst every 4 blocks was 0.64-0.98x (bench/results/engine-notes.md "Stop
// 40").
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

// Σ_j scale_j · Σ quant · activation over one super-block of 8 repacked Q4_K (five = 0) or Q5_K rows at pi for each
// row, the exact int32 of the one-row dots, prefetching pf bytes ahead (x8_prefetch_step).
#if X8_VNNI
// vpdpbusd sums a quartet's 4 products straight into int32, a sub-block's 8 quartets in one register, then times its 8
// rows' scales (vpmulld). Q4_K's high nibbles are taken in place (16 · quant: the bytes anded with 0xF0, a shift fewer
// a vector), their sums apart and shifted back exactly once (at most 4 · 63 · 32 · 240 · 128 < 2^31).
X8_INLINE __m256i k4x8_isum(const uint8_t *pi, const int8_t *y, const int five, const int64_t pf) {
    const int64_t gb = five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES, oqs = five ? K4X8_QS5 : K4X8_QS4;
    const k4x8_head *h = (const k4x8_head *)(const void *)pi;
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256i isum = _mm256_setzero_si256(), isum16 = _mm256_setzero_si256();
    RA_UNROLL
    for (int g = 0; g < 4; g++) {
        __m256i alo = _mm256_setzero_si256(), ahi = _mm256_setzero_si256();
        RA_UNROLL
        for (int e = 0; e < 8; e++) {
            x8_prefetch_step(pi, gb, pf, 8 * g + e, 32);
            const __m256i v = _mm256_load_si256((const __m256i *)(const void *)(pi + oqs + 256 * g + 32 * e));
            __m256i lo, hi;
            if (five) {
                split_quants(v, _mm256_load_si256((const __m256i *)(const void *)(pi + K4X8_QH + 32 * e)), 2 * g, 2 * g + 1, 1, &lo, &hi);
            } else {
                lo = _mm256_and_si256(v, m4);
                hi = _mm256_andnot_si256(m4, v);
            }
            alo = _mm256_dpbusd_epi32(alo, lo, bcast4(y + 64 * g + 4 * e));
            ahi = _mm256_dpbusd_epi32(ahi, hi, bcast4(y + 64 * g + 32 + 4 * e));
        }
        const __m256i s0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h->sc[2 * g]));
        const __m256i s1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)h->sc[2 * g + 1]));
        isum = _mm256_add_epi32(isum, _mm256_mullo_epi32(alo, s0));
        if (five) isum = _mm256_add_epi32(isum, _mm256_mullo_epi32(ahi, s1));
        else isum16 = _mm256_add_epi32(isum16, _mm256_mullo_epi32(ahi, s1));
    }
    return five ? isum : _mm256_add_epi32(isum, _mm256_srai_epi32(isum16, 4));
}
#else
// Quants are added in int16 before their scale: 8 quartets of 4-bit quants (at most 8 · 2 · 15 · 127 = 30480), 4 of
// 5-bit ones (4 · 2 · 31 · 127 = 31496).
X8_INLINE __m256i k4x8_isum(const uint8_t *pi, const int8_t *y, const int five, const int64_t pf) {
    const int64_t gb = five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES, oqs = five ? K4X8_QS5 : K4X8_QS4;
    const k4x8_head *h = (const k4x8_head *)(const void *)pi;
    const int run = five ? 4 : 8;
    const __m256i pick0 = k4x8_pick(0), pick1 = k4x8_pick(1);
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
    return isum;
}
#endif

// out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the activation row b, prefetching
// pf bytes ahead (x8_prefetch).
X8_INLINE void k4x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int five, const int64_t pf) {
    const int64_t gb = five ? RA_Q5_K_X8_GROUP_BYTES : RA_Q4_K_X8_GROUP_BYTES;
    const __m256i pair = k4x8_pair();
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * gb;
        const k4x8_head *h = (const k4x8_head *)(const void *)pi;
        const __m256i isum = k4x8_isum(pi, b[i].qs, five, pf);
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
    X8_FN static void X8_ROWS(name)(int64_t n, const void *w, int64_t groups, const void *x, const float *side, \
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

// Σ_j sc_j · Σ quant · activation over one super-block of 8 repacked Q6_K rows at pi (quants 0..63, the offset 32 left
// to the caller), each row's exact int32, prefetching pf bytes ahead. A quartet of 8 rows meets the activation's 4
// bytes broadcast: with VNNI a sub-block's 4 quartets go straight into int32 by vpdpbusd, then times the 8 rows' scales
// (vpmulld on the sign-extended bytes); without, one vpmaddubsw each, two quartets added in int16 (4 · 63 · 128 =
// 32256) before one vpmaddwd with the scales.
enum { Q6X8_RUN = X8_VNNI ? 4 : 2 };
X8_INLINE __m256i q6x8_isum(const uint8_t *pi, const int8_t *y, const int64_t pf) {
#if !X8_VNNI
    const __m256i pick0 = q6x8_pick(0, 0), pick1 = q6x8_pick(8, 8);
#endif
    __m256i isum = _mm256_setzero_si256();
    RA_UNROLL
    for (int h = 0; h < 2; h++) {
        RA_UNROLL
        for (int a = 0; a < 2; a++) {   // quartets 4a .. 4a + 3 of each 32-element vector: sub-blocks 8h + 2c + a
            x8_prefetch_step(pi, RA_Q6_K_X8_GROUP_BYTES, pf, 2 * h + a, 4);
            RA_UNROLL
            for (int e0 = 4 * a; e0 < 4 * a + 4; e0 += Q6X8_RUN) {
                __m256i t[4] = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256() };
                RA_UNROLL
                for (int e = e0; e < e0 + Q6X8_RUN; e++) {
                    const uint8_t *v = pi + Q6X8_QUANTS(h, e);
                    __m256i q[4];
                    q6_k_quants_v(_mm256_loadu_si256((const __m256i *)(const void *)v), _mm256_loadu_si256((const __m256i *)(const void *)(v + 32)),
                                  _mm256_loadu_si256((const __m256i *)(const void *)(v + 64)), q);
                    RA_UNROLL
                    for (int c = 0; c < 4; c++)
#if X8_VNNI
                        t[c] = _mm256_dpbusd_epi32(t[c], q[c], bcast4(y + 128 * h + 32 * c + 4 * e));
#else
                        t[c] = _mm256_add_epi16(t[c], _mm256_maddubs_epi16(q[c], bcast4(y + 128 * h + 32 * c + 4 * e)));
#endif
                }
                RA_UNROLL
                for (int c = 0; c < 4; c++) {
#if X8_VNNI
                    const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(pi + Q6X8_SC + 8 * (8 * h + 2 * c + a))));
                    isum = _mm256_add_epi32(isum, _mm256_mullo_epi32(t[c], sc));
#else
                    const __m256i sc = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(pi + Q6X8_SC + 8 * (8 * h + 2 * c))));
                    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(t[c], _mm256_srai_epi16(_mm256_shuffle_epi8(sc, a ? pick1 : pick0), 8)));
#endif
                }
            }
        }
    }
    return isum;
}

// Q6_K: out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the activation row b, the bits
// of dot_q6_k: per super-block each row's exact int32 sum (q6x8_isum), the offset 32 taken off as
// 32 · Σ_j sc_j · bsums_j, then acc = fma(sum, d · d_x, acc).
X8_INLINE void q6x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int64_t pf) {
    const __m256i pair = q6x8_pick(0, 8);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * RA_Q6_K_X8_GROUP_BYTES;
        const __m256i isum = q6x8_isum(pi, b[i].qs, pf);
        // the offset: Σ_j sc_j · bsums_j
        const __m256i corr = k16x8_bsum_dot(pi + Q6X8_SC, &b[i], pair, 1);
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pi + Q6X8_D)));
        const __m256 fi = _mm256_cvtepi32_ps(_mm256_sub_epi32(isum, _mm256_slli_epi32(corr, 5)));
        acc = _mm256_fmadd_ps(fi, _mm256_mul_ps(d, _mm256_set1_ps(b[i].d)), acc);
    }
    _mm256_storeu_ps(out, acc);
}

X8_FN static void X8_ROWS(q6_k)(int64_t n, const void *w, int64_t groups, const void *x, const float *side, float *out,
                                          const int64_t pf) {
    (void)side;
    const int64_t ns = n / QK_K;
    for (int64_t g8 = 0; g8 < groups; g8++) q6x8_group(ns, (const uint8_t *)w + g8 * ns * RA_Q6_K_X8_GROUP_BYTES, x, out + 8 * g8, pf);
}

#if X8_VNNI
// q3x8_quants_v with AVX-512's vpternlogd, for vpdpbusd: one vpternlogd takes the two-bit fields from v (or v >> 2) where
// 0x33 has bits and everything else from the third bits' vector, which also leaves the other runs' third bits at bits 3
// and 7; the masks 0x07 and 0x70 drop them. Runs 0 and 1 come out as quants (0..7), runs 2 and 3 in place as 16 times
// theirs (no shift; the caller shifts their int32 sums back exactly). 8-10 operations against 14-15.
X8_INLINE void q3x8_quants_vnni(__m256i v, __m256i hm, const int h, __m256i q[4]) {
    enum { A_WHERE_C_ELSE_B = 0xE4 };   // vpternlogd's table of (c ? a : b), bit by bit; a is the index's high bit
    const __m256i m33 = _mm256_set1_epi8(0x33), m07 = _mm256_set1_epi8(7), m70 = _mm256_set1_epi8(0x70);
    const __m256i w = _mm256_ternarylogic_epi32(v, h ? _mm256_slli_epi16(hm, 2) : hm, m33, A_WHERE_C_ELSE_B);
    const __m256i z = _mm256_ternarylogic_epi32(_mm256_srli_epi16(v, 2), h ? _mm256_slli_epi16(hm, 1) : _mm256_srli_epi16(hm, 1), m33,
                                                A_WHERE_C_ELSE_B);
    q[0] = _mm256_and_si256(w, m07);
    q[1] = _mm256_and_si256(z, m07);
    q[2] = _mm256_and_si256(w, m70);
    q[3] = _mm256_and_si256(z, m70);
}
#endif

// Σ_j sc_j · Σ quant · activation over one super-block of 8 repacked Q3_K (three = 1) or Q2_K rows at pi, each row's
// exact int32, into *isum; Q2_K's runs 1 and 3 (4 times their quants, q2x8_quants_v: two operations fewer a vector)
// into *isum4 (4 times an integer). Per 16 elements of a sub-block, 4 quartets of 8 rows against the activation's 4
// bytes broadcast: with VNNI straight into int32 by vpdpbusd, then times the 8 rows' scales (vpmulld); without, one
// vpmaddubsw each, added in int16 (at most 4 · 2 · 12 · 127 = 12192) before one vpmaddwd with the scales.
X8_INLINE void k16x8_isum(const uint8_t *pi, const int8_t *y, const int three, const int64_t pf, __m256i *isum_out, __m256i *isum4_out) {
    const int64_t gb = three ? RA_Q3_K_X8_GROUP_BYTES : RA_Q2_K_X8_GROUP_BYTES;
    const int osc = three ? Q3X8_SC : Q2X8_SC;
#if !X8_VNNI
    // a sub-block's 8 scale bytes [j][0..7] and the next's [j + 1][0..7]: Q3_K into each int16's high byte (then vpsraw
    // 8 sign-extends), Q2_K into its low byte (then the low nibble is the scale)
    const __m256i pick0 = three ? q6x8_pick(0, 0) : k4x8_pick(0), pick1 = three ? q6x8_pick(8, 8) : k4x8_pick(1);
    const __m256i low4 = _mm256_set1_epi16(15);
#endif
    __m256i isum = _mm256_setzero_si256(), isum4 = _mm256_setzero_si256();
#if X8_VNNI
    __m256i isum16 = _mm256_setzero_si256();   // Q3_K's runs 2 and 3, 16 times their quants (q3x8_quants_vnni)
#endif
    RA_UNROLL
    for (int h = 0; h < 2; h++) {
        RA_UNROLL
        for (int a = 0; a < 2; a++) {   // quartets 4a .. 4a + 3 of each 32-element run c: sub-block 8h + 2c + a
            x8_prefetch_step(pi, gb, pf, 2 * h + a, 4);
#if X8_VNNI
            __m256i t[4] = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256() };
#else
            __m256i t[4];
#endif
            RA_UNROLL
            for (int e = 4 * a; e < 4 * a + 4; e++) {
                __m256i q[4];
                const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(pi + K16X8_QS(h, e)));
#if X8_VNNI
                if (three) q3x8_quants_vnni(v, _mm256_loadu_si256((const __m256i *)(const void *)(pi + Q3X8_HM + 32 * e)), h, q);
#else
                if (three) q3x8_quants_v(v, _mm256_loadu_si256((const __m256i *)(const void *)(pi + Q3X8_HM + 32 * e)), h, q);
#endif
                else q2x8_quants_v(v, q);
                RA_UNROLL
                for (int c = 0; c < 4; c++) {
#if X8_VNNI
                    t[c] = _mm256_dpbusd_epi32(t[c], q[c], bcast4(y + 128 * h + 32 * c + 4 * e));
#else
                    const __m256i s = _mm256_maddubs_epi16(q[c], bcast4(y + 128 * h + 32 * c + 4 * e));
                    t[c] = e == 4 * a ? s : _mm256_add_epi16(t[c], s);
#endif
                }
            }
            RA_UNROLL
            for (int c = 0; c < 4; c++) {
#if X8_VNNI
                const __m128i sb = _mm_loadl_epi64((const __m128i *)(const void *)(pi + osc + 8 * (8 * h + 2 * c + a)));
                const __m256i sc = three ? _mm256_cvtepi8_epi32(sb) : _mm256_and_si256(_mm256_cvtepu8_epi32(sb), _mm256_set1_epi32(15));
                const __m256i prod = _mm256_mullo_epi32(t[c], sc);
#else
                const __m256i sb = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(pi + osc + 8 * (8 * h + 2 * c)))),
                                                       a ? pick1 : pick0);
                const __m256i sc = three ? _mm256_srai_epi16(sb, 8) : _mm256_and_si256(sb, low4);
                const __m256i prod = _mm256_madd_epi16(t[c], sc);
#endif
                if (!three && (c & 1)) isum4 = _mm256_add_epi32(isum4, prod);
#if X8_VNNI
                else if (three && c >= 2) isum16 = _mm256_add_epi32(isum16, prod);
#endif
                else isum = _mm256_add_epi32(isum, prod);
            }
        }
    }
#if X8_VNNI
    if (three) isum = _mm256_add_epi32(isum, _mm256_srai_epi32(isum16, 4));
#endif
    *isum_out = isum;
    *isum4_out = isum4;
}

// Q3_K (three = 1) and Q2_K: out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the
// activation row b, the bits of the one-row dots (k16_dot): per super-block each row's exact int32 sum I of scale ·
// quant · activation over the unsigned quants (Q3_K 0..7, Q2_K 0..3; k16x8_isum), Q3_K's offset 4 taken off as 4 · Σ_j
// sc_j · bsums_j, Q2_K's M = Σ_j min_j · bsums_j; then acc = fma(I, d · d_x, acc) (Q2_K: acc = fnmadd(M, dmin · d_x,
// acc)). Q2_K's isum4 is shifted back exactly once per super-block.
X8_INLINE void k16x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int three, const int64_t pf) {
    const int64_t gb = three ? RA_Q3_K_X8_GROUP_BYTES : RA_Q2_K_X8_GROUP_BYTES;
    const int osc = three ? Q3X8_SC : Q2X8_SC;
    const __m256i pair = three ? q6x8_pick(0, 8) : k4x8_pair();
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * gb;
        __m256i isum, isum4;
        k16x8_isum(pi, b[i].qs, three, pf, &isum, &isum4);
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
// levels against y[0..4), the high ones' against y[16..20), each through vpsignb (the activations' signs onto the
// levels) and vpmaddubsw with their magnitudes ya; each half's pair sums (at most 2 · 127 · 127) meet w (row r's int16
// block scale, or 1) in its own vpmaddwd, as two of them would overflow int16.
X8_INLINE __m256i iq4x8_quartet(const uint8_t *q, const int8_t *y, const int8_t *ya, const __m256i lut, const __m256i w) {
    const __m256i m4 = _mm256_set1_epi8(15), v = _mm256_loadu_si256((const __m256i *)(const void *)q);
    const __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, m4));
    const __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
    const __m256i tlo = _mm256_maddubs_epi16(bcast4(ya), _mm256_sign_epi8(lo, bcast4(y)));
    const __m256i thi = _mm256_maddubs_epi16(bcast4(ya + 16), _mm256_sign_epi8(hi, bcast4(y + 16)));
    return _mm256_add_epi32(_mm256_madd_epi16(tlo, w), _mm256_madd_epi16(thi, w));
}

#if X8_VNNI
// One block of 32 levels of 8 rows (its 4 quartet vectors at q, 32 bytes apart) against the activations y: the levels
// looked up +128 (unsigned bytes, as vpdpbusd multiplies them by the signed activations; lut: iq4_levels256(1)) and
// summed straight into int32, then off = 128 · Σ y taken off: each row's exact Σ level · activation.
X8_INLINE __m256i iq4x8_vnni_block(const uint8_t *q, const int8_t *y, const __m256i lut, const int32_t off) {
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    RA_UNROLL
    for (int e = 0; e < 4; e++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e));
        a0 = _mm256_dpbusd_epi32(a0, _mm256_shuffle_epi8(lut, _mm256_and_si256(v, m4)), bcast4(y + 4 * e));
        a1 = _mm256_dpbusd_epi32(a1, _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4)), bcast4(y + 16 + 4 * e));
    }
    return _mm256_sub_epi32(_mm256_add_epi32(a0, a1), _mm256_set1_epi32(off));
}
#endif

// IQ4_XS: out[0..8) = the dots of one group of 8 repacked rows (ns super-blocks at p) with the activation row b, the
// bits of dot_iq4_xs: per super-block each row's exact int32 sum I = Σ_j scale_j · Σ level · activation, then acc =
// fma(I, d · d_x, acc).
#if X8_VNNI
// Each block's exact sum (iq4x8_vnni_block, 128 · Σ y from Q8_K's block sums) times the 8 rows' scales (vpmulld).
X8_INLINE __m256i iq4x8_isum(const uint8_t *pi, const blk_q8_k *b, const __m256i lut, const int64_t pf) {
    const int8_t *y = b->qs;
    __m256i isum = _mm256_setzero_si256();
    RA_UNROLL
    for (int j = 0; j < 8; j++) {
        x8_prefetch_step(pi, RA_IQ4_XS_X8_GROUP_BYTES, pf, j, 8);
        const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(pi + IQ4X8_SC + 8 * j)));
        isum = _mm256_add_epi32(isum, _mm256_mullo_epi32(iq4x8_vnni_block(pi + IQ4X8_QS(j, 0), y + 32 * j, lut,
                                                                          128 * ((int32_t)b->bsums[2 * j] + b->bsums[2 * j + 1])), sc));
    }
    return isum;
}
#else
// The levels are signed: a quartet of 8 rows (looked up by vpshufb) takes the activations' signs (vpsignb) and meets
// their magnitudes, computed once per super-block for all 8 rows, in vpmaddubsw (iq4x8_quartet; Q8_K activations are
// -127..127 and no level is 0 or -128, so vpsignb and vpabsb lose nothing).
X8_INLINE __m256i iq4x8_isum(const uint8_t *pi, const blk_q8_k *b, const __m256i lut, const int64_t pf) {
    const __m256i pick0 = q6x8_pick(0, 0), pick1 = q6x8_pick(8, 8);
    const int8_t *y = b->qs;
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
    return isum;
}
#endif

X8_INLINE void iq4x8_group(int64_t ns, const uint8_t *p, const blk_q8_k *b, float *out, const int unused, const int64_t pf) {
    (void)unused;
    const __m256i lut = iq4_levels256(X8_VNNI);   // (+128 in the VNNI build, for vpdpbusd)
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < ns; i++) {
        const uint8_t *pi = p + i * RA_IQ4_XS_X8_GROUP_BYTES;
        const __m256i isum = iq4x8_isum(pi, &b[i], lut, pf);
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pi + IQ4X8_D)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_set1_ps(b[i].d)), acc);
    }
    _mm256_storeu_ps(out, acc);
}

RA_KX8_ROWS(iq4_xs, iq4x8_group, RA_IQ4_XS_X8_GROUP_BYTES, 0)

// IQ4_NL: out[0..8) = the dots of each of `groups` groups of 8 repacked rows (nb blocks each) with the activation row x
// (Q8_0), the bits of dot_iq4_nl: per block each row's exact int32 sum, then acc = fma(I, d · d_x, acc), block after
// block. The levels meet the activations as in iq4x8_group (Q8_0 activations are -127..127 too): with VNNI
// iq4x8_vnni_block, 128 · Σ y of each activation block summed once a call; without, iq4x8_quartet.
X8_FN static void X8_ROWS(iq4_nl)(int64_t n, const void *w, int64_t groups, const void *x, const float *side, float *out,
                                            const int64_t pf) {
    (void)side;
    const int64_t nb = n / 32;
    const blk_q8_0 *b = x;
    const __m256i lut = iq4_levels256(X8_VNNI);   // (+128 in the VNNI build, for vpdpbusd)
#if X8_VNNI
    int32_t off[RA_X8_MAX_COLUMNS / 32];
    for (int64_t i = 0; i < nb; i++) off[i] = 128 * sum_i8x32(b[i].qs);
#else
    const __m256i ones = _mm256_set1_epi16(1);
#endif
    for (int64_t g8 = 0; g8 < groups; g8++) {
        const uint8_t *p = (const uint8_t *)w + g8 * nb * RA_IQ4_NL_X8_GROUP_BYTES;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t i = 0; i < nb; i++) {
            const uint8_t *pi = p + i * RA_IQ4_NL_X8_GROUP_BYTES;
            x8_prefetch(pi, RA_IQ4_NL_X8_GROUP_BYTES, pf);
            const int8_t *y = b[i].qs;
#if X8_VNNI
            const __m256i isum = iq4x8_vnni_block(pi + IQ4NLX8_QS(0), y, lut, off[i]);
#else
            _Alignas(32) int8_t ya[32];
            _mm256_store_si256((__m256i *)(void *)ya, _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(const void *)y)));
            __m256i isum = _mm256_setzero_si256();
            RA_UNROLL
            for (int e = 0; e < 4; e++) isum = _mm256_add_epi32(isum, iq4x8_quartet(pi + IQ4NLX8_QS(e), y + 4 * e, ya + 4 * e, lut, ones));
#endif
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)pi));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_set1_ps(ra_f16_table[b[i].d])), acc);
        }
        _mm256_storeu_ps(out + 8 * g8, acc);
    }
}

#if X8_VNNI
// A block of 8 rows (quartets at q, fifth bits at qh) against the activation's 32 bytes y with vpdpbusd, which sums a
// quartet's 4 products straight into int32: for the 4-bit types the low nibbles' sum and the high nibbles' taken in
// place (16 · quant, the bytes anded with 0xF0: a shift fewer a vector), apart, the second shifted back exactly; the
// 5-bit ones split as split_quants does; Q8_0's quants +128 as unsigned bytes (vpdpbusd multiplies unsigned by signed),
// the caller taking 128 · Σ y off in float as it takes 8 · Σ y off Q4_0's (the same exact integer, so the same bits).
X8_INLINE __m256i b32x8_vnni_block(const uint8_t *q, const uint8_t *qh_at, const int8_t *y, const int t) {
    const int five = t == B32_Q5_0 || t == B32_Q5_1;
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    if (t == B32_Q8_0) {
        const __m256i flip = _mm256_set1_epi8((char)0x80);
        RA_UNROLL
        for (int e = 0; e < 8; e += 2) {
            a0 = _mm256_dpbusd_epi32(a0, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e)), flip), bcast4(y + 4 * e));
            a1 = _mm256_dpbusd_epi32(a1, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e + 32)), flip), bcast4(y + 4 * e + 4));
        }
        return _mm256_add_epi32(a0, a1);
    }
    if (!five) {
        const __m256i m4 = _mm256_set1_epi8(15);
        RA_UNROLL
        for (int e = 0; e < 4; e++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e));
            a0 = _mm256_dpbusd_epi32(a0, _mm256_and_si256(v, m4), bcast4(y + 4 * e));
            a1 = _mm256_dpbusd_epi32(a1, _mm256_andnot_si256(m4, v), bcast4(y + 16 + 4 * e));
        }
        return _mm256_add_epi32(a0, _mm256_srai_epi32(a1, 4));
    }
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(const void *)qh_at);
    RA_UNROLL
    for (int e = 0; e < 4; e++) {
        __m256i lo, hi;
        split_quants(_mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * e)), qh, e, 4 + e, 1, &lo, &hi);
        a0 = _mm256_dpbusd_epi32(a0, lo, bcast4(y + 4 * e));
        a1 = _mm256_dpbusd_epi32(a1, hi, bcast4(y + 16 + 4 * e));
    }
    return _mm256_add_epi32(a0, a1);
}
#endif

// The 32-element types (t: B32_Q4_0, _Q5_0, _Q4_1, _Q5_1, _Q8_0; avx2_internal.h): out[0..8) = the dots of each of
// `groups` groups of 8 repacked rows (nb blocks each) with the activation row x (Q8_0 or Q8_1). Per block the 4
// quartets of unsigned quants of both nibbles (with their fifth bits) against the activation's 4 bytes broadcast, added
// in int16 (4-bit: 8 products of pairs, at most 8 · 2 · 15 · 127 = 30480; 5-bit: two runs of 4, 4 · 2 · 31 · 127 =
// 31496), then to int32 by vpmaddwd; the signed types' I = that sum - (8 or 16) · Σ x, exact in float (|.| < 2^24).
// Q8_0: its 8 quartets as dot_b32 takes them, |w| against the activation with w's sign, each pair sum (up to
// 2 · 128 · 127) to int32 at once. Then chain block mod 4 of each row gets fma(I, d · d_x) (and fma(m, s_x)), as
// dot_b32 sums a row.
// side: the activation row's d and s (or Σ x) as floats (ra_matmul_side: nb of each), or NULL to convert them here.
X8_INLINE void b32x8_rows(int64_t n, const uint8_t *w, int64_t groups, const uint8_t *x, const float *side, float *out, const int t,
                               const int64_t pf) {
    const int five = t == B32_Q5_0 || t == B32_Q5_1, min = b32_min(t), xb = b32_xbytes(t), xq = b32_xqs(t);
    const b32x8_layout l = ra_b32x8_layout(five, min, t == B32_Q8_0 ? 8 : 4);
    const int64_t nb = n / 32;
    const float off = (float)(X8_VNNI && t == B32_Q8_0 ? 128 : b32_offset(t));
    float own[2 * (RA_X8_MAX_COLUMNS / 32)];
    if (!side) {
        b32_xscales(x, nb, own, own + nb, t);
        side = own;
    }
#if !X8_VNNI
    const __m256i ones = _mm256_set1_epi16(1);
#endif
    for (int64_t g8 = 0; g8 < groups; g8++) {
        const uint8_t *g = w + g8 * nb * l.bytes;
        __m256 c[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (int64_t j = 0; j < nb; j++) {
            const int8_t *y = (const int8_t *)(x + j * xb + xq);
            const uint8_t *p = g + j * l.bytes, *q = p + l.qs;
            x8_prefetch(p, l.bytes, pf);
            __m256i isum;
#if X8_VNNI
            isum = b32x8_vnni_block(q, p + l.qh, y, t);
#else
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
#endif
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
    X8_FN static void X8_ROWS(name)(int64_t n, const void *w, int64_t groups, const void *x, const float *side, \
                                                 float *out, const int64_t pf) {                                       \
        b32x8_rows(n, w, groups, x, side, out, t, pf);                                                                 \
    }
RA_B32X8_ROWS(q4_0, B32_Q4_0)
RA_B32X8_ROWS(q5_0, B32_Q5_0)
RA_B32X8_ROWS(q4_1, B32_Q4_1)
RA_B32X8_ROWS(q5_1, B32_Q5_1)
RA_B32X8_ROWS(q8_0, B32_Q8_0)

ra_x8_rows_fn X8_PICK(int type) {
    switch (type) {
    case RA_Q4_K: return X8_ROWS(q4_k);
    case RA_Q5_K: return X8_ROWS(q5_k);
    case RA_Q6_K: return X8_ROWS(q6_k);
    case RA_Q3_K: return X8_ROWS(q3_k);
    case RA_Q2_K: return X8_ROWS(q2_k);
    case RA_IQ4_XS: return X8_ROWS(iq4_xs);
    case RA_IQ4_NL: return X8_ROWS(iq4_nl);
    case RA_Q4_0: return X8_ROWS(q4_0);
    case RA_Q5_0: return X8_ROWS(q5_0);
    case RA_Q4_1: return X8_ROWS(q4_1);
    case RA_Q5_1: return X8_ROWS(q5_1);
    case RA_Q8_0: return X8_ROWS(q8_0);
    default: return NULL;
    }
}

#undef X8_INLINE
#endif
