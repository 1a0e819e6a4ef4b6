// Private to CKernels: ggml block layouts and the per-path dot-product tables.
#ifndef RUNANYWHERE_KERNELS_INTERNAL_H
#define RUNANYWHERE_KERNELS_INTERNAL_H
#include "ckernels.h"
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "CKernels reads ggml's little-endian blocks with native loads: little-endian targets only"
#endif

#define QK4_0 32
#define QK8_0 32
#define QK_K 256

// Block layouts (byte-exact with ggml). Halves are stored as raw uint16_t bits.
typedef struct { uint16_t d; uint8_t qs[16]; } blk_q4_0;                  // x = (nibble - 8) * d
typedef struct { uint16_t d, m; uint8_t qs[16]; } blk_q4_1;               // x = nibble * d + m
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; } blk_q5_0;   // x = (nibble | bit << 4) - 16) * d
typedef struct { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; } blk_q5_1;
typedef struct { uint16_t d; int8_t qs[32]; } blk_q8_0;                   // x = q * d
typedef struct { uint16_t d, s; int8_t qs[32]; } blk_q8_1;                // s = d * sum(q)
// Q2_K: x = d · (scale & 15) · q - dmin · (scale >> 4), q two bits, a scale byte per 16 elements.
typedef struct { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; } blk_q2_k;
// Q3_K: x = d · (s - 32) · (q - 4 · !hbit), q two low bits, hbit in hmask, s six bits a 16 elements (12 bytes).
typedef struct { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; } blk_q3_k;
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; } blk_q4_k;
// IQ4_NL: x = d · kvalues[nibble] (low nibbles elements 0-15, high 16-31), kvalues the 16 non-linear levels below.
typedef struct { uint16_t d; uint8_t qs[16]; } blk_iq4_nl;
// IQ4_XS: IQ4_NL's nibbles in 8 blocks of 32 under one d, each with a six-bit scale (low four bits in scales_l, two
// bits at 2j of scales_h) minus 32.
typedef struct { uint16_t d, scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } blk_iq4_xs;
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; } blk_q5_k;
typedef struct { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; } blk_q6_k;
typedef struct { float d; int8_t qs[256]; int16_t bsums[16]; } blk_q8_k;

_Static_assert(sizeof(blk_q4_0) == 18, "q4_0");
_Static_assert(sizeof(blk_q4_1) == 20, "q4_1");
_Static_assert(sizeof(blk_q5_0) == 22, "q5_0");
_Static_assert(sizeof(blk_q5_1) == 24, "q5_1");
_Static_assert(sizeof(blk_q8_0) == 34, "q8_0");
_Static_assert(sizeof(blk_q8_1) == 36, "q8_1");
_Static_assert(sizeof(blk_q2_k) == 84, "q2_K");
_Static_assert(sizeof(blk_q3_k) == 110, "q3_K");
_Static_assert(sizeof(blk_q4_k) == 144, "q4_K");
_Static_assert(sizeof(blk_iq4_nl) == 18, "iq4_nl");
_Static_assert(sizeof(blk_iq4_xs) == 136, "iq4_xs");
_Static_assert(sizeof(blk_q5_k) == 176, "q5_K");
_Static_assert(sizeof(blk_q6_k) == 210, "q6_K");
_Static_assert(sizeof(blk_q8_k) == 292, "q8_K");

static inline uint32_t ra_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ra_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float ra_h2f(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0) {
        // zero or subnormal: mant * 2^-24 is exact in float
        const float v = (float)mant * 0x1p-24f;
        return ra_bits_f32(sign | ra_f32_bits(v));
    }
    if (exp == 31) return ra_bits_f32(sign | 0x7f800000u | (mant ? 0x400000u : 0) | (mant << 13));
    return ra_bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

static inline float ra_bf2f(uint16_t h) { return ra_bits_f32((uint32_t)h << 16); }

// Unpacks the 12-byte 6-bit scales/mins of Q4_K/Q5_K: sub-block j has scale sc[j] and min m[j].
static inline void ra_unpack_scales_k4(const uint8_t *s, uint8_t sc[8], uint8_t m[8]) {
    for (int j = 0; j < 4; j++) {
        sc[j] = s[j] & 63;
        m[j] = s[j + 4] & 63;
        sc[j + 4] = (uint8_t)((s[j + 8] & 0x0f) | ((s[j] >> 6) << 4));
        m[j + 4] = (uint8_t)((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
    }
}

// The 16 six-bit scales of a Q3_K super-block as 16 bytes 0..63 (scale k weights elements 16k..16k+15 with offset 32):
// the 12 bytes hold the low four bits of scales 0-7 in the low nibbles of bytes 0-7 and of 8-15 in their high nibbles,
// the top two bits of scale k in bits 2(k/4), 2(k/4)+1 of byte 8 + k%4.
static inline void ra_unpack_scales_q3_k_words(const uint8_t *s, uint32_t u[4]) {
    const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
    uint32_t a, b, c;
    memcpy(&a, s, 4);
    memcpy(&b, s + 4, 4);
    memcpy(&c, s + 8, 4);
    u[0] = (a & m4) | ((c & m2) << 4);                    // scales 0..3
    u[1] = (b & m4) | (((c >> 2) & m2) << 4);             // scales 4..7
    u[2] = ((a >> 4) & m4) | (((c >> 4) & m2) << 4);      // scales 8..11
    u[3] = ((b >> 4) & m4) | (((c >> 6) & m2) << 4);      // scales 12..15
}

// The same scales as int8 with the offset removed: sc[k] in -32..31.
static inline void ra_unpack_scales_q3_k(const uint8_t *s, int8_t sc[16]) {
    uint32_t u[4];
    ra_unpack_scales_q3_k_words(s, u);
    const uint8_t *b = (const uint8_t *)u;
    for (int k = 0; k < 16; k++) sc[k] = (int8_t)(b[k] - 32);
}

// The 16 levels of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl), a nibble's value before the scale.
static const int8_t ra_iq4_levels[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

// Block j's scale of an IQ4_XS super-block, offset 32 removed (-32..31).
static inline int ra_iq4_xs_scale(const blk_iq4_xs *b, int j) {
    return (((b->scales_l[j / 2] >> (4 * (j % 2))) & 15) | (((b->scales_h >> (2 * j)) & 3) << 4)) - 32;
}

// The 256 quants of a Q2_K (0..3) or Q3_K (-4..3) super-block in element order: run c of half h (elements 128h + 32c +
// l) is bits 2c, 2c + 1 of qs[32h + l], Q3_K's less 4 where bit 4h + c of hmask[l] is clear. (The scalar dots and the
// dequantizers; the SIMD kernels unpack the same bits in registers.)
static inline void ra_q2_k_quants(const blk_q2_k *b, int8_t q[256]) {
    for (int e = 0; e < QK_K; e++) q[e] = (int8_t)((b->qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
}
static inline void ra_q3_k_quants(const blk_q3_k *b, int8_t q[256]) {
    for (int e = 0; e < QK_K; e++) {
        const int h = e / 128, c = (e % 128) / 32, l = e % 32;
        q[e] = (int8_t)(((b->qs[32 * h + l] >> (2 * c)) & 3) - (((b->hmask[l] >> (4 * h + c)) & 1) ? 0 : 4));
    }
}

// The 32 values (levels) of an IQ4_NL block or of one block of 32 of an IQ4_XS super-block: qs[j]'s low nibble is
// element j, its high nibble element j + 16.
static inline void ra_iq4_values(const uint8_t qs[16], int8_t q[32]) {
    for (int j = 0; j < 16; j++) {
        q[j] = ra_iq4_levels[qs[j] & 15];
        q[j + 16] = ra_iq4_levels[qs[j] >> 4];
    }
}

// float value of every half (filled by ra_kernels_init; the dot paths load scales from it so that
// converting a block's scale is a plain memory load, as ggml does on x86)
extern float ra_f16_table[65536];
// byte b -> 8 bytes, byte i = 0x10 when bit i of b is set (the fifth bits of Q5_0/Q5_1, scalar path)
extern uint64_t ra_bit16_table[256];
// Fills the tables; idempotent and thread-safe. Called before any dot product runs.
void ra_kernels_init(void);

// Q4_K/Q5_K scales and mins as 16 bytes: bytes 0..7 = the 8 scales, bytes 8..15 = the 8 mins
// (the same values as ra_unpack_scales_k4, rearranged with word operations).
static inline void ra_unpack_scales_k4_words(const uint8_t *s, uint32_t u[4]) {
    const uint32_t m6 = 0x3f3f3f3fu, m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
    uint32_t a, b, c;
    memcpy(&a, s, 4);
    memcpy(&b, s + 4, 4);
    memcpy(&c, s + 8, 4);
    u[0] = a & m6;                                        // scales 0..3
    u[1] = (c & m4) | (((a >> 6) & m2) << 4);             // scales 4..7
    u[2] = b & m6;                                        // mins 0..3
    u[3] = ((c >> 4) & m4) | (((b >> 6) & m2) << 4);      // mins 4..7
}

// Unrolls the next loop completely where its trip count is a constant after inlining (the kernels' quartet, sub-block
// and activation-row loops). Apps build this package with SwiftPM's release default, clang -O2, whose unroller gives up
// on these loops where -O3's does not: the AVX2 Q4_K prompt panel ran 1.3x slower at -O2 (bench/kernels/bench.c),
// the loop left in place with its sums on the stack. gcc and clang both read this pragma.
#define RA_UNROLL _Pragma("GCC unroll 16")

// The x86 paths with AVX2, FMA and F16C (all but scalar): their element-wise ops, attention and the AVX2 table run.
static inline int ra_path_is_x86_simd(int path) {
    return path == RA_PATH_AVX2 || path == RA_PATH_AVX2_VNNI || path == RA_PATH_AVX512 || path == RA_PATH_AVX512_VNNI;
}

// Decode (one activation row) streams every weight once per token, so the row·vector kernels prefetch the
// weights RA_PREFETCH_DISTANCE bytes ahead of the block they work on. On the 2-core Xeon VM of the engine
// benchmark the hardware prefetcher alone kept a thread at ~7.5 GB/s (it stops at every 4 KiB page);
// prefetching 4 KiB ahead, interleaved with the work, reached ~11 GB/s on one thread and ~19 GB/s on two
// (bench/results/engine-notes.md). Prefetches never fault, so running past the end of a matrix is harmless.
#define RA_PREFETCH_DISTANCE 4096

// Prefetches the cache lines of [p, p + bytes) RA_PREFETCH_DISTANCE bytes ahead (bytes: a constant). Building with
// -DRA_NO_PREFETCH leaves them out (only bench/kernels/arm-mca.sh does, to show what they cost a loop statically).
static inline __attribute__((always_inline)) void ra_prefetch_ahead(const void *p, size_t bytes) {
#ifdef RA_NO_PREFETCH
    (void)p;
    (void)bytes;
#else
    const uintptr_t a = (uintptr_t)p + RA_PREFETCH_DISTANCE;
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch((const void *)(a + o), 0, 3);
#endif
}

// Decode's rows kernels (one activation row against a run of weight rows) also prefetch one line RA_PREFETCH_FAR
// bytes ahead once per weight row, into a page the 4 KiB-ahead prefetches reach only later. Its TLB miss (and on a
// VM the nested page walk) then overlaps the streaming instead of stalling it: on the AVX2 EPYC VM the Q8_0 rows
// kernel streamed a Qwen3-0.6B-shaped file at ~1.2x the rate from 4 KiB pages (and ~1.1x from 2 MiB ones), with
// 8, 16 or 32 KiB alike (bench/results/engine-notes.md, "TLB").
#define RA_PREFETCH_FAR 16384

static inline __attribute__((always_inline)) void ra_prefetch_far(const void *p) {
#ifdef RA_NO_PREFETCH
    (void)p;
#else
    __builtin_prefetch((const void *)((uintptr_t)p + RA_PREFETCH_FAR), 0, 3);
#endif
}

// Prefetch for a batch panel's packing, which is the first touch of the weights in a batch and waits on memory
// without it (the rows are `rows` streams a row apart, which the hardware prefetchers follow late): the blocks of bb
// bytes it will read about RA_PREFETCH_DISTANCE bytes later, block i + ahead of the panel's rows, or past the rows'
// end the same block of the next panel's rows (the chunk of rows goes on there; a prefetch past the matrix is
// harmless). The AVX2 panels take 8 rows, the AVX-512 VNNI ones 16.
static inline __attribute__((always_inline)) void ra_panel_prefetch(const uint8_t *W, int64_t wrow, int64_t nblk, int64_t i, int64_t bb,
                                                                    const int rows) {
    const int64_t ahead = (RA_PREFETCH_DISTANCE + rows * bb - 1) / (rows * bb);
    const int64_t j = i + ahead;
    const uintptr_t base = (uintptr_t)W + (uintptr_t)(j < nblk ? j * bb : rows * wrow + (j - nblk) * bb);
#ifndef RA_NO_PREFETCH
    for (int r = 0; r < rows; r++)
        for (int64_t o = 0; o < bb; o += 64) __builtin_prefetch((const void *)(base + (uintptr_t)(r * wrow + o)), 0, 3);
#else
    (void)base;
#endif
}

// The layouts of rows repacked at load (x8.c; the AVX2 panels are packed from them, matmul_avx2_k.c and _b32.c).
// The head of one super-block of 8 repacked rows; then Q5_K's fifth bits qh[8][8][4] ([quartet e][row r]: bytes
// 4e .. 4e + 3 of row r's qh), then the quants qs[4][8][8][4] ([group g][quartet e][row r]: bytes 32g + 4e .. 32g + 4e + 3
// of row r's qs). 1184 bytes for Q4_K against 8 × 144 in the file (+2.8%), 1440 for Q5_K against 8 × 176 (+2.3%): the
// 6-bit scales and mins are kept one a byte, so that a shuffle reaches them.
typedef struct {
    uint16_t d[8], dmin[8];     // halves of row r
    uint8_t sc[8][8];           // [sub-block j][row r]: scale (0..63)
    uint8_t mn[8][8];           // [sub-block j][row r]: min (0..63)
} k4x8_head;
enum { K4X8_QH = sizeof(k4x8_head), K4X8_QS4 = sizeof(k4x8_head), K4X8_QS5 = sizeof(k4x8_head) + 256 };
_Static_assert(sizeof(k4x8_head) == 160, "the repacked head is 160 bytes");
_Static_assert(K4X8_QS4 + 1024 == RA_Q4_K_X8_GROUP_BYTES && K4X8_QS5 + 1024 == RA_Q5_K_X8_GROUP_BYTES,
               "ckernels.h states the repacked super-blocks' sizes");
_Static_assert(RA_Q4_K_X8_GROUP_BYTES % 32 == 0 && RA_Q5_K_X8_GROUP_BYTES % 32 == 0 && K4X8_QS5 % 32 == 0,
               "repacked super-blocks keep 32-byte alignment");
_Static_assert(offsetof(blk_q4_k, scales) == offsetof(blk_q5_k, scales) && offsetof(blk_q4_k, dmin) == offsetof(blk_q5_k, dmin),
               "Q4_K and Q5_K share the head");

// One super-block of 8 repacked Q6_K rows (1680 bytes, 8 × the file's 210): first, per half h (128 elements) and dword e
// (0..7), three 32-byte vectors [row r][4 bytes]: bytes 4e .. 4e + 3 of row r's ql[64h ..], of its ql[64h + 32 ..] and
// of its qh[32h ..] (Q6X8_QUANTS(h, e)); then the scales sc[16][8] ([sub-block j][row r], int8, Q6X8_SC); then d[8]
// (halves, Q6X8_D). The bit operations that take a file row's ql and qh vectors to its quants (q6_k_quants_v) act on each
// byte where it is, so on these vectors they give 8 rows' quartets side by side, as the dot and the panels take them.
// 1680 is not a multiple of 32, so every other super-block starts 16 bytes off: the kernels load unaligned.
enum { Q6X8_SC = 1536, Q6X8_D = 1536 + 128 };
#define Q6X8_QUANTS(h, e) (96 * (8 * (h) + (e)))
_Static_assert(Q6X8_D + 16 == RA_Q6_K_X8_GROUP_BYTES && RA_Q6_K_X8_GROUP_BYTES == 8 * sizeof(blk_q6_k),
               "ckernels.h states the repacked Q6_K super-block's size");

// One super-block of 8 repacked Q3_K rows (912 bytes, 8 × 114 against the file's 110): per half h and dword e (0..7) a
// 32-byte vector [row r][4 bytes] of bytes 4e .. 4e + 3 of row r's qs[32h ..] (K16X8_QS(h, e)); then per dword e one of its
// hmask[4e ..] (Q3X8_HM + 32e, both halves' third bits, each byte's bits reordered: the file's bit 4h + c at
// Q3X8_HM_BIT(h, c), where q3x8_quants_v merges them with the two-bit fields without a shift of its own for h = 0); then
// the scales minus 32, int8 [sub-block j][row r] (Q3X8_SC: the file's six-bit scales unpacked once, as the kernel takes
// them); then d[8] (Q3X8_D).
// Q2_K (672 bytes, 8 × the file's 84): the same qs vectors, then the file's scale bytes [sub-block j][row r] (Q2X8_SC:
// scale in the low nibble, min in the high one), then d[8], then dmin[8].
// Each bit operation that takes a file row's qs (and hmask) vector to its quants acts on each byte where it is, so on
// these vectors it gives 8 rows' quartets side by side. 912 and 672 are not multiples of 32: the kernels load unaligned.
#define K16X8_QS(h, e) (32 * (8 * (h) + (e)))
// Half 0: quants 0 and 2 at bits 2 and 6, 1 and 3 at bits 3 and 7; half 1 the same two bits lower.
#define Q3X8_HM_BIT(h, c) (((h) ? 0 : 2) + ((c) & 1) + 4 * ((c) >> 1))
enum { Q3X8_HM = 512, Q3X8_SC = 512 + 256, Q3X8_D = 512 + 256 + 128, Q2X8_SC = 512, Q2X8_D = 512 + 128, Q2X8_DMIN = 512 + 128 + 16 };
_Static_assert(Q3X8_D + 16 == RA_Q3_K_X8_GROUP_BYTES && Q2X8_DMIN + 16 == RA_Q2_K_X8_GROUP_BYTES &&
               RA_Q2_K_X8_GROUP_BYTES == 8 * sizeof(blk_q2_k), "ckernels.h states the repacked Q3_K and Q2_K super-blocks' sizes");

// One super-block of 8 repacked IQ4_XS rows (1104 bytes, 8 × 138 against the file's 136): d[8] (IQ4X8_D), the blocks'
// scales minus 32, int8 [block j][row r] (IQ4X8_SC: unpacked once from the file's six bits), then per block j and dword e
// (0..3) a 32-byte vector [row r][4 bytes] of bytes 4e .. 4e + 3 of row r's qs[16j ..] (IQ4X8_QS(j, e)): low nibbles
// elements 4e .. 4e + 3 of block j, high nibbles 16 + 4e .. 16 + 4e + 3. The kernels load unaligned.
enum { IQ4X8_D = 0, IQ4X8_SC = 16, IQ4X8_QS0 = 80 };
#define IQ4X8_QS(j, e) (IQ4X8_QS0 + 128 * (j) + 32 * (e))
_Static_assert(IQ4X8_QS(8, 0) == RA_IQ4_XS_X8_GROUP_BYTES, "ckernels.h states the repacked IQ4_XS super-block's size");
// One block of 8 repacked IQ4_NL rows (144 bytes, 8 × the file's 18): d[8], then per dword e (0..3) a 32-byte vector
// [row r][4 bytes] of bytes 4e .. 4e + 3 of row r's qs (IQ4NLX8_QS(e)), as one block of IQ4_XS's groups.
#define IQ4NLX8_QS(e) (16 + 32 * (e))
_Static_assert(IQ4NLX8_QS(4) == RA_IQ4_NL_X8_GROUP_BYTES && RA_IQ4_NL_X8_GROUP_BYTES == 8 * sizeof(blk_iq4_nl),
               "ckernels.h states the repacked IQ4_NL block's size");

// One block of 32 elements of a group of 8 repacked rows of the 32-element types (Q4_0, Q5_0, Q4_1, Q5_1, Q8_0), the blocks
// of a group one after the other so that a group is one sequential stream (a layout of separate regions for quants and
// scales read 3.6x slower from memory: the hardware prefetcher restarts at every region):
//   d[8]              halves of row r;
//   m[8]              Q4_1, Q5_1: halves of row r;
//   qh[8]             Q5_0, Q5_1: row r's fifth bits as one uint32 whose byte k holds, in bit e, the bit of element
//                     4e + k and, in bit 4 + e, that of element 16 + 4e + k (ra_b32x8_qh), so that one shift and one
//                     mask put quartet e's fifth bits at bit 4 of its bytes;
//   qs[Q][8][4]       [quartet e][row r]: bytes 4e .. 4e + 3 of row r's qs, so that a quartet of the 8 rows is one
//                     32-byte vector; Q = 4 for the 4- and 5-bit types (elements 4e.. in the low nibbles, 16 + 4e.. in
//                     the high ones), 8 for Q8_0 (elements 4e .. 4e + 3).
// 8 × the file's block: 144, 176, 160, 192 and 272 bytes (RA_*_X8_GROUP_BYTES); each part at a multiple of 16 bytes.
_Static_assert(RA_Q4_0_X8_GROUP_BYTES == 8 * sizeof(blk_q4_0) && RA_Q5_0_X8_GROUP_BYTES == 8 * sizeof(blk_q5_0) &&
               RA_Q4_1_X8_GROUP_BYTES == 8 * sizeof(blk_q4_1) && RA_Q5_1_X8_GROUP_BYTES == 8 * sizeof(blk_q5_1) &&
               RA_Q8_0_X8_GROUP_BYTES == 8 * sizeof(blk_q8_0),
               "ckernels.h states the repacked blocks' sizes: 8 of the file's");
typedef struct {
    int64_t bytes;              // of the block
    int m, qh, qs;              // offsets of the parts (m and qh meaningful only for the types that have them)
} b32x8_layout;
static inline b32x8_layout ra_b32x8_layout(int five, int min, int quartets) {
    b32x8_layout l;
    l.m = 16;
    l.qh = 16 + 16 * min;
    l.qs = l.qh + 32 * five;
    l.bytes = l.qs + 32 * quartets;
    return l;
}
// The file's qh of a block (bit i: element i) rearranged as the repacked blocks keep it (byte k, bit 4h + e: element
// 16h + 4e + k), and back. Each nibble of the packed form is bit k of the 4 nibbles of a file half: (v >> k) & 0x1111
// times 0x249 puts bit 4e at 9 + e with no two partial products on one bit, so no carries.
static inline uint32_t ra_b32x8_qh(uint32_t qh) {
    uint32_t o = 0;
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++) o |= (((((qh >> (16 * h + k)) & 0x1111u) * 0x249u) >> 9) & 0xFu) << (8 * k + 4 * h);
    return o;
}
static inline uint32_t ra_b32x8_qh_back(uint32_t o) {
    // nibble value -> its 4 bits at bits 0, 4, 8, 12
    static const uint16_t spread[16] = { 0x0000, 0x0001, 0x0010, 0x0011, 0x0100, 0x0101, 0x0110, 0x0111,
                                         0x1000, 0x1001, 0x1010, 0x1011, 0x1100, 0x1101, 0x1110, 0x1111 };
    uint32_t qh = 0;
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++) qh |= (uint32_t)spread[(o >> (8 * k + 4 * h)) & 0xFu] << (16 * h + k);
    return qh;
}

// The file's type of a repacked one (RA_Q4_K for RA_Q4_K_X8, ...), or -1 for a type that is not repacked.
int ra_x8_source(int x8);
// Products of repacked rows (type x8, RA_*_X8; x8.c), as ra_matmul_rows takes them: the decode kernels (ra_x8_rows_fn),
// or the rows converted back to the file's type in the thread's unpack buffer. side: the activation rows' scales from
// ra_matmul_side (the 32-element types), or NULL.
void ra_x8_rows(int x8, const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                int64_t r0, int64_t r1);
// The calling thread's buffer for rows converted back to their file layout (at least `bytes`), or NULL.
uint8_t *ra_thread_unpack_buffer(int64_t bytes);
// A repacked type's decode kernel (x8_rows_impl.h): one activation row x (Q8_K, or Q8_0/Q8_1 with side as above)
// against `groups` groups of 8 rows (n columns) at w into out[0 .. 8 · groups), prefetching pf bytes ahead
// (ra_x8_prefetch).
typedef void (*ra_x8_rows_fn)(int64_t n, const void *w, int64_t groups, const void *x, const float *side, float *out, int64_t pf);
// The file type's kernel in AVX2 (x8_rows_avx2.c) and with AVX-512 VNNI (x8_rows_vnni.c), or NULL off x86 or for a
// type that is not repacked.
ra_x8_rows_fn ra_x8_rows_avx2(int type);
ra_x8_rows_fn ra_x8_rows_vnni(int type);

typedef float (*ra_dot_fn)(int64_t n, const void *w, const void *x);
// Computes nx dot products of one weight row with nx activation rows x_stride bytes apart.
typedef void (*ra_dot_multi_fn)(int64_t n, const void *w, const void *x, int64_t x_stride, int nx, float *out, int64_t out_stride);

// Index of a type in the dot tables (dense), or -1.
enum { RA_DI_F32, RA_DI_F16, RA_DI_BF16, RA_DI_Q4_0, RA_DI_Q4_1, RA_DI_Q5_0, RA_DI_Q5_1, RA_DI_Q8_0,
       RA_DI_Q4_K, RA_DI_Q5_K, RA_DI_Q6_K, RA_DI_Q2_K, RA_DI_Q3_K, RA_DI_IQ4_NL, RA_DI_IQ4_XS, RA_DI_COUNT };

// Decode: out[r] = the dot of weight row r (rows of wrow bytes from w) with one activation row, r < rows, bit for bit
// what the same table's dot gives. side: the activation row's scales from ra_matmul_side (converted once per product),
// or NULL for the kernel to convert them per call.
typedef void (*ra_dot_rows_fn)(int64_t n, const void *w, int64_t wrow, int64_t rows, const void *x, const float *side, float *out);

typedef struct {
    ra_dot_fn dot[RA_DI_COUNT];          // NULL: fall back to the next lower path
    ra_dot_multi_fn multi[RA_DI_COUNT];  // NULL: loop over dot
    ra_dot_rows_fn rows[RA_DI_COUNT];    // NULL: loop over dot
} ra_dot_table;

extern const ra_dot_table ra_dots_scalar;
#if defined(__aarch64__)
extern const ra_dot_table ra_dots_neon;           // plain ARMv8 NEON (every aarch64 core)
extern const ra_dot_table ra_dots_neon_dotprod;   // ARMv8.2 SDOT, only called when RA_CPU_DOTPROD is detected
#endif
#if defined(__x86_64__)
#include <immintrin.h>
extern const ra_dot_table ra_dots_avx2;
extern const ra_dot_table ra_dots_avx512;
extern const ra_dot_table ra_dots_avx512vnni;
// Scratch of the Q8_0 batch kernels for n columns and nb activation rows: per block of 32 columns two weight panels
// (at most RA_Q8_0_BATCH_PANEL_BYTES each; the AVX2 ones run 16 rows at once), and per block and activation row its 32
// elements in int16 (the AVX2 panels) and its scales (8 bytes), plus alignment.
#define RA_Q8_0_BATCH_PANEL_BYTES 576
#define RA_Q8_0_BATCH_SCRATCH(n, nb) ((n) / 32 * (2 * RA_Q8_0_BATCH_PANEL_BYTES + 72 * (nb)) + 64)
// The AVX2 batches of Q4_0, Q5_0, Q4_1 and Q5_1: room for two panels of 8 rows (Q4_1 runs 16 weight rows at once) and
// the activation scales when the caller has none converted.
#define RA_B32_PANEL_BYTES 320
#define RA_B32_BATCH_SCRATCH(n, nb) ((n) / 32 * (2 * RA_B32_PANEL_BYTES + 8 * (nb)) + 64)
// The 32-element block types' weights × nb activation rows (Q8_0 or Q8_1, ra_vec_dot_type) on the VNNI path (panels
// of 16 weight rows), rows [r0, r1); scratch: at least RA_B32_VNNI_SCRATCH(n, nb) bytes. Returns 0 (nothing done)
// when n is not a multiple of 64 or the scratch is too small.
#define RA_B32_VNNI_PANEL_BYTES 640
#define RA_B32_VNNI_SCRATCH(n, nb) ((n) / 32 * (RA_B32_VNNI_PANEL_BYTES + 8 * (nb)) + 64)
int ra_matmul_q8_0_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_0_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_0_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_1_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_1_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Rows of IQ4_XS repacked at load (RA_IQ4_XS_X8) × nb Q8_K activation rows with VNNI: panels of 16 rows (two groups) ×
// 8 activation rows on Q6_K's panels (dot_avx512_impl.h); r0 and r1 multiples of 8 (else 0, nothing done); xu and
// scratch as ra_matmul_q6_k_vnni's. The bits of the one-row dot (ra_avx2_dot_iq4_xs).
int ra_matmul_iq4_xs_x8_vnni(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out,
                             int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Rows of Q4_K or Q5_K repacked at load (x8: RA_Q4_K_X8, RA_Q5_K_X8) × nb Q8_K activation rows with VNNI: the 16-row
// panels above packed from two groups (scratch RA_Q4_K_BATCH_SCRATCH(n, nb)); r0 and r1 multiples of 8 (else 0,
// nothing done). The bits of ra_matmul_q4_k_vnni / q5_k on the file's rows.
int ra_matmul_k4_x8_vnni(int x8, const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                         int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Rows of Q6_K repacked at load (RA_Q6_K_X8) × nb Q8_K activation rows with VNNI: the 16-row panels of
// ra_matmul_q6_k_vnni packed from two groups (its scratch); r0 and r1 multiples of 8 (else 0, nothing done); its bits.
int ra_matmul_q6_k_x8_vnni(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// The same with the activation scales given (ra_matmul_side) or NULL, for weight_type Q8_0, Q4_0, Q5_0, Q4_1 or Q5_1, or
// those rows repacked at load (RA_*_X8; r0 and r1 multiples of 8).
int ra_matmul_b32_side_vnni(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                            float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// The same on the AVX2 path (panels of 8 weight rows × 4 activation rows, matmul_avx2_b32.c); n a multiple of 32. The
// other 32-element block types have the same kernels (and scratch) on the AVX2 path.
int ra_matmul_q4_0_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_0_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_1_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_1_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q8_0_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// The same 8-row panels with AVX-VNNI's 256-bit vpdpbusd (the RA_PATH_AVX2_VNNI path; same scratch), and with the
// activation scales given.
int ra_matmul_q8_0_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_0_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_0_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_1_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_1_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Q4_K and Q5_K on the same path: matmul_avx2_k.c's 8-row panels with vpdpbusd (same scratch as the AVX2 ones).
int ra_matmul_q4_k_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_k_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_b32_side_avxvnni(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                               float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// The activation scales the 32-element panels take (per row: n/32 d, then n/32 s of Q8_1, 0 for Q8_0), as floats,
// of nb activation rows in ra_vec_dot_type(weight_type); and the panel product with them given, so a product split
// in chunks of rows converts them once (ra_matmul_rows_side) instead of once per chunk.
void ra_b32_side_avx2(int weight_type, const void *x, int64_t n, int64_t nb, float *side);
// nb Q8_0 activation rows of n as int16 (the AVX2 Q8_0 panels' operands; ra_matmul_side puts them after the scales).
void ra_q8_0_widen_avx2(const void *x, int64_t n, int64_t nb, int16_t *dst);
int ra_matmul_b32_side_avx2(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                            float *out, int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Scratch of the Q4_K batch kernels for n columns and nb activation rows: per super-block a weight panel
// (at most RA_Q4_K_BATCH_PANEL_BYTES) and nb activation sums (at most RA_Q4_K_BATCH_XSUM_BYTES each), plus
// 16 unpacked rows and alignment.
#define RA_Q4_K_BATCH_PANEL_BYTES 5120
#define RA_Q4_K_BATCH_XSUM_BYTES 32
#define RA_Q4_K_BATCH_SCRATCH(n, nb) ((n) / 256 * (RA_Q4_K_BATCH_PANEL_BYTES + RA_Q4_K_BATCH_XSUM_BYTES * (nb)) + 8192)
// One super-block of a Q8_K activation row as the Q4_K panel kernels (AVX2 and VNNI) take it: the sums of its 8
// sub-blocks of 32 as int16 pairs (sub-blocks 2p and 2p+1 in the low and high half of bs[p]) and d.
typedef struct { uint32_t bs[4]; float d; } ra_q4_k_xsum;
_Static_assert(sizeof(ra_q4_k_xsum) <= RA_Q4_K_BATCH_XSUM_BYTES, "RA_Q4_K_BATCH_SCRATCH covers the activation sums");
// The sub-block sums and d of nb activation rows xrow bytes apart: dst[b * ns + i] (a sum of 32 int8 fits int16).
// bs is the 16 block sums of 16 added in pairs, in order: one vphaddw (each batch call makes these for all its
// activation rows, and a prompt's product is split into many calls: the scalar loop was ~4.5% of a Q5_K_M prompt).
__attribute__((target("avx2"))) static inline void ra_q4_k_xsums(const uint8_t *X, int64_t xrow, int64_t ns, int64_t nb, ra_q4_k_xsum *dst) {
    for (int64_t b = 0; b < nb; b++) {
        const blk_q8_k *y = (const blk_q8_k *)(const void *)(X + b * xrow);
        for (int64_t i = 0; i < ns; i++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)y[i].bsums);
            _mm_storeu_si128((__m128i *)(void *)dst[b * ns + i].bs, _mm_hadd_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
            dst[b * ns + i].d = y[i].d;
        }
    }
}
// The 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a Q4_K or Q5_K super-block's 12 packed bytes, the integers
// ra_unpack_scales_k4_words gives, computed in a vector register (the 16-byte load reads 4 bytes of what follows the
// scales in the block). The AVX2 decode dots use it: the scalar unpack and its
// four-word insert sat at the head of each super-block's dependency chain (clang, 1 thread from memory: Q4_K layers
// ~1.2x; engine-notes.md).
__attribute__((target("avx2"), always_inline)) static inline __m128i ra_k4_scales_mins(const uint8_t *s) {
    const __m128i v = _mm_loadu_si128((const __m128i *)s);
    const __m128i x = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));   // words a, c, b, c
    const __m128i y = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));   // words a, a, b, b
    // scales 0..3 = a & 0x3f.., scales 4..7 = (c & 0x0f..) | top 2 bits of a's bytes, mins 0..3 = b & 0x3f..,
    // mins 4..7 = (c >> 4 & 0x0f..) | top 2 bits of b's bytes
    const __m128i lo = _mm_and_si128(_mm_srlv_epi32(x, _mm_setr_epi32(0, 0, 0, 4)),
                                     _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m128i hi = _mm_and_si128(_mm_srli_epi32(y, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
    return _mm_or_si128(lo, hi);
}

// ra_k4_scales_mins of two blocks' scales at once: s0's in the low 128 bits, s1's in the high ones (the steps are
// in-lane).
__attribute__((target("avx2"), always_inline)) static inline __m256i ra_k4_scales_mins2(const uint8_t *s0, const uint8_t *s1) {
    const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)s0)), _mm_loadu_si128((const __m128i *)s1), 1);
    const __m256i x = _mm256_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));
    const __m256i y = _mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));
    const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(x, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                        _mm256_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi32(y, 2), _mm256_setr_epi32(0, 0x30303030, 0, 0x30303030, 0, 0x30303030, 0, 0x30303030));
    return _mm256_or_si256(lo, hi);
}

// Q4_K weights × nb Q8_K activation rows on the AVX-512 (VNNI) path, rows [r0, r1); scratch: at least
// RA_Q4_K_BATCH_SCRATCH(n, nb) bytes.
// Returns 0 (nothing done) when n is not a multiple of 256 or the scratch is too small.
// (ra_matmul_batch_fn: the signature of every batch kernel here.)
typedef int (*ra_matmul_batch_fn)(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                                  int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_k_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Q5_K weights on the VNNI path: the same panels with the fifth bit, 4 activation rows per step, in dot_q5_k's order.
int ra_matmul_q5_k_vnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// The same on the AVX2 path (panels of 8 weight rows × 4 activation rows, matmul_avx2_k.c); also what the
// AVX-512 path without VNNI runs (measured faster there than 512-bit kernels without vpdpbusd).
int ra_matmul_q4_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// RA_Q4_K_X8 / RA_Q5_K_X8 weights (repacked at load, k4_x8.c) × nb Q8_K activation rows on the AVX2, AVX2_VNNI and
// AVX512 paths (AVX512_VNNI has its 16-row panels, ra_matmul_k4_x8_vnni): the same panels and scratch as Q4_K's and
// Q5_K's, packed from the repacked groups; rows [r0, r1) must start and end at multiples of 8 (else 0, nothing done).
// The bits of ra_matmul_q4_k_avx2 / q5_k / _avxvnni on the same rows.
int ra_matmul_q4_k_x8_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q4_k_x8_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_k_x8_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
int ra_matmul_q5_k_x8_avxvnni(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                              int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// RA_Q6_K_X8 weights × nb Q8_K activation rows: the AVX2 Q6_K panels (scratch RA_Q6_K_BATCH_SCRATCH(n)) packed from the
// repacked groups, what the x86 paths but AVX512_VNNI (ra_matmul_q6_k_x8_vnni) run for them; rows as above. The bits
// of ra_matmul_q6_k_avx2.
int ra_matmul_q6_k_x8_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                           int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// RA_Q3_K_X8 (three = 1) or RA_Q2_K_X8 weights × nb Q8_K activation rows on the same panels (packed from the groups:
// quants 0..7 / 0..3, the offset 4 or the mins through the block sums), rows as above; the bits of the one-row dots.
// vnni: the panels run with AVX-512 VNNI's 256-bit vpdpbusd (only where the CPU has AVX-512 VNNI).
int ra_matmul_k16_low_x8_avx2(int three, int vnni, const void *w, int64_t n, const void *x, int64_t nb, float *out,
                              int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// RA_Q4_0_X8 / RA_Q5_0_X8 / RA_Q4_1_X8 / RA_Q5_1_X8 / RA_Q8_0_X8 weights (type x8) × nb Q8_0 or Q8_1 activation rows: the AVX2
// panels of the file's type packed from the repacked groups (matmul_avx2_b32.c; scratch RA_B32_BATCH_SCRATCH(n, nb)),
// also what the AVX2_VNNI path runs for them (its panels give the same bits). Rows [r0, r1) must start and end at
// multiples of 8 (else 0, nothing done). side: the activation rows' scales (ra_matmul_side), or NULL to convert them here.
int ra_matmul_b32_x8_avx2(int x8, const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out,
                          int64_t out_stride, int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Q5_K weights × nb Q8_K activation rows (the same panels and scratch as Q4_K's, matmul_avx2_k.c), in dot_q5_k's order,
// which every x86 path's Q5_K dot shares: what all x86 paths run for Q5_K batches.
int ra_matmul_q5_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// Scratch of the Q6_K batch kernel for n columns: a weight panel per super-block plus alignment.
#define RA_Q6_K_BATCH_PANEL_BYTES 5696
#define RA_Q6_K_BATCH_SCRATCH(n) ((n) / 256 * RA_Q6_K_BATCH_PANEL_BYTES + 64)
// Q6_K weights × nb Q8_K activation rows on the VNNI path (panels of 16 weight rows), rows [r0, r1). xu: the
// activations' quants plus 128 (ra_q8_k_plus128, converted once per product), with scratch of RA_Q6_K_BATCH_SCRATCH(n)
// bytes; or NULL to convert them into the scratch, which then needs RA_Q6_K_VNNI_SCRATCH(n, nb). Returns 0 (nothing
// done) when n is not a multiple of 256 or the scratch is too small.
int ra_matmul_q6_k_vnni(const void *w, int64_t n, const void *x, const uint8_t *xu, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
#define RA_Q6_K_VNNI_SCRATCH(n, nb) (RA_Q6_K_BATCH_SCRATCH(n) + (n) * (nb))
// The quants of nb Q8_K activation rows of n plus 128, as unsigned bytes (n a row, back to back): the operand that the
// VNNI panels of Q6_K and IQ4_XS multiply by their signed quants.
void ra_q8_k_plus128(const void *x, int64_t n, int64_t nb, uint8_t *dst);
// The same on the AVX2 path (panels of 8 weight rows × 4 activation rows, matmul_avx2_k.c).
int ra_matmul_q6_k_avx2(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride,
                        int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// IQ4_XS weights × nb Q8_K activation rows on 16-row int16 panels (matmul_avx2_iq4.c), rows [r0, r1), in dot_iq4_xs's
// order (every x86 path's IQ4_XS dot): what every x86 path runs for IQ4_XS batches. side: per activation row its ns
// scales, then the rows' quants widened to int16 (ra_iq4_xs_side_avx2; n x nb), or NULL to make them here in the
// scratch. Returns 0 (nothing done) when n is not a multiple of 256 or the scratch is smaller than
// RA_IQ4_XS_BATCH_SCRATCH(n, side ? 0 : nb).
#define RA_IQ4_XS_BATCH_PANEL_BYTES 4128
#define RA_IQ4_XS_BATCH_SCRATCH(n, nb) ((n) / 256 * (2 * RA_IQ4_XS_BATCH_PANEL_BYTES + (4 + 512) * (nb)) + 64)
int ra_matmul_iq4_xs_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                          int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// IQ4_NL weights × nb Q8_0 activation rows on Q8_0's int16 panels (matmul_avx2_b32.c) in dot_iq4_nl's order; side: Q8_0's
// (the scales, then the rows widened: ra_b32_side_avx2 and ra_q8_0_widen_avx2) or NULL; scratch RA_Q8_0_BATCH_SCRATCH(n, nb).
int ra_matmul_iq4_nl_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                          int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// The same for rows repacked at load (RA_IQ4_XS_X8; r0 and r1 multiples of 8, else 0), the panels packed from the groups.
int ra_matmul_iq4_xs_x8_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                             int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
// IQ4_NL rows repacked at load (RA_IQ4_NL_X8; r0, r1 multiples of 8, else 0) on the same panels, packed from the groups.
int ra_matmul_iq4_nl_x8_avx2(const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out, int64_t out_stride,
                             int64_t r0, int64_t r1, uint8_t *scratch, int64_t scratch_bytes);
void ra_iq4_xs_side_avx2(const void *x, int64_t n, int64_t nb, float *side);
// Attention kernels (ops_attention_avx2.c; head_dim % 8 == 0, AVX2/FMA/F16C). Scores of `group` query rows (q: rows
// of hd) against n_kv K rows kv_stride apart, times scale, into scores[h * ss + j]:
void ra_attn_scores_avx2(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                         int64_t hd, float scale, float *scores, int64_t ss);
// out[h] = sum_j w[h * ws + j] * V[j] for `group` rows (out is overwritten):
void ra_attn_values_avx2(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                         int64_t group, int64_t hd, float *out);
// The same two with AVX-512 (the avx512 and avx512-vnni paths), head_dim % 16 == 0:
void ra_attn_scores_avx512(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                           int64_t hd, float scale, float *scores, int64_t ss);
void ra_attn_values_avx512(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                           int64_t group, int64_t hd, float *out);
// y[i] = x[i] * f rounded to F16 precision (y may be x):
void ra_scale_round_f16_avx2(const float *x, float *y, int64_t n, float f);
// The largest of n floats, NaN ignored (-inf for none):
float ra_max_avx2(const float *x, int64_t n);
// x[i] = e^(x[i] - mx) over n values (|error| < 2 ulp); returns their sum in double:
double ra_exp_sub_avx2(float *x, int64_t n, float mx);
// SwiGLU g[i] = g[i] / (1 + e^-g[i]) * u[i] over [lo, hi) with that exp, and n floats to F16 (F16C):
void ra_silu_mul_avx2(float *g, const float *u, int64_t lo, int64_t hi);
void ra_gelu_mul_avx2(float *g, const float *u, int64_t lo, int64_t hi);   // ops_rows.c
// Q8_0 and Q8_1 rows (n a multiple of 32) with the bytes of quants.c's scalar code (dot_avx2.c); 0 for other types:
int ra_quantize_row_avx2(int type, const float *x, void *dst, int64_t n);
void ra_f32_to_f16_row_avx2(const float *x, uint16_t *y, int64_t n);
/// 1 when the calling thread's kernel path has AVX2, FMA and F16C (the x86 SIMD element-wise ops run).
static inline int ra_x86_simd_ops(void) { return ra_path_is_x86_simd(ra_kernel_path()); }
#endif

// Products whose activation scales are converted once (ops_matmul.c): the AVX2 batches and decode rows of the
// 32-element types; a Q8_0 batch that may run the AVX2 panels takes its activations widened to int16 after the scales
// (ra_q8_0_widen_avx2, n × nb int16). ra_matmul_side_floats: how many floats of these ra_matmul_rows_side takes for
// this product on the calling thread's path (0: none, pass NULL; the buffer needs 4 floats more, which kernels may read
// but not use);
// ra_matmul_side fills them; ra_thread_side_buffer: the calling thread's buffer for them (grown on demand, NULL when
// out of memory). ra_matmul_rows_side is ra_matmul_rows with those scales (or NULL) given.
int64_t ra_matmul_side_floats(int weight_type, int64_t n, int64_t nb);
void ra_matmul_side(int weight_type, const void *x, int64_t n, int64_t nb, float *side);
// How a product's side data is laid out: two products on the same activations may share it only when these are equal
// (and the one shared has at least as many floats): the activations' type (ra_vec_dot_type), whose layouts extend one
// another (Q8_0's scales, then its int16 rows), or RA_SIDE_Q8_K_PLUS128 for the Q8_K quants plus 128 that the VNNI
// panels of Q6_K and IQ4_XS take (ra_q8_k_plus128).
enum { RA_SIDE_Q8_K_PLUS128 = -2 };
int ra_matmul_side_layout(int weight_type, int64_t n, int64_t nb);
float *ra_thread_side_buffer(int64_t floats);
void ra_matmul_rows_side(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                         float *out, int64_t out_stride, int64_t r0, int64_t r1);

// RMSNorm of `count` (1..8) rows of n, x[k] into y[k] (may be the same rows), with ra_rms_norm's bits; on the x86 SIMD
// paths the 8 rows' double sums run in vector lanes, each in the scalar loop's order (ops_rows.c).
void ra_rms_norm_rows8(float *const x[], const float *w, float *const y[], int count, int64_t n, float eps);

// GELU through the F16 table (ops.c): call ra_gelu_table_ready() once before a loop of ra_gelu_lookup; inputs of
// 10 and above are the caller's (ggml passes them through unrounded).
#include "ra_ops.h"
extern uint16_t ra_gelu_table_f16[1 << 16];
void ra_gelu_table_ready(void);
static inline float ra_gelu_lookup(float x) {
    if (x <= -10.0f) return 0.0f;
    return ra_ops_f16_to_f32(ra_gelu_table_f16[ra_ops_f32_to_f16(x)]);
}

#endif
