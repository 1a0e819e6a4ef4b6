// ggml block formats: type table, half/bfloat16 conversion, quantization and dequantization.
#include "kernels_internal.h"
#include "neon_internal.h"
#include <math.h>
#include <pthread.h>

float ra_f16_table[65536];
uint64_t ra_bit16_table[256];

static void fill_tables(void) {
    for (uint32_t h = 0; h < 65536; h++) ra_f16_table[h] = ra_h2f((uint16_t)h);
    for (uint32_t b = 0; b < 256; b++) {
        uint64_t t = 0;
        for (int i = 0; i < 8; i++)
            if ((b >> i) & 1) t |= (uint64_t)0x10 << (8 * i);
        ra_bit16_table[b] = t;
    }
}

void ra_kernels_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_tables);
}

int ra_type_supported(int type) {
    switch (type) {
    case RA_F32: case RA_F16: case RA_BF16: case RA_Q4_0: case RA_Q4_1: case RA_Q5_0: case RA_Q5_1:
    case RA_Q8_0: case RA_Q8_1: case RA_Q2_K: case RA_Q3_K: case RA_Q4_K: case RA_Q5_K: case RA_Q6_K: case RA_Q8_K:
    case RA_IQ4_NL: case RA_IQ4_XS:
        return 1;
    default:
        return 0;
    }
}

int64_t ra_type_block_size(int type) {
    switch (type) {
    case RA_F32: case RA_F16: case RA_BF16: return 1;
    case RA_Q4_0: case RA_Q4_1: case RA_Q5_0: case RA_Q5_1: case RA_Q8_0: case RA_Q8_1: case RA_IQ4_NL:
    case RA_Q4_0_X8: case RA_Q5_0_X8: case RA_Q4_1_X8: case RA_Q5_1_X8: case RA_Q8_0_X8: case RA_IQ4_NL_X8: return 32;
    case RA_Q2_K: case RA_Q3_K: case RA_Q4_K: case RA_Q5_K: case RA_Q6_K: case RA_Q8_K: case RA_IQ4_XS:
    case RA_Q4_K_X8: case RA_Q5_K_X8: case RA_Q6_K_X8: case RA_Q3_K_X8: case RA_Q2_K_X8: case RA_IQ4_XS_X8: return QK_K;
    default: return 0;
    }
}

int64_t ra_type_block_bytes(int type) {
    switch (type) {
    case RA_F32: return 4;
    case RA_F16: case RA_BF16: return 2;
    case RA_Q4_0: return sizeof(blk_q4_0);
    case RA_Q4_1: return sizeof(blk_q4_1);
    case RA_Q5_0: return sizeof(blk_q5_0);
    case RA_Q5_1: return sizeof(blk_q5_1);
    case RA_Q8_0: return sizeof(blk_q8_0);
    case RA_Q8_1: return sizeof(blk_q8_1);
    case RA_IQ4_NL: return sizeof(blk_iq4_nl);
    case RA_IQ4_XS: return sizeof(blk_iq4_xs);
    case RA_Q2_K: return sizeof(blk_q2_k);
    case RA_Q3_K: return sizeof(blk_q3_k);
    case RA_Q4_K: return sizeof(blk_q4_k);
    case RA_Q5_K: return sizeof(blk_q5_k);
    case RA_Q6_K: return sizeof(blk_q6_k);
    case RA_Q8_K: return sizeof(blk_q8_k);
    case RA_Q4_K_X8: return RA_Q4_K_X8_GROUP_BYTES / 8;
    case RA_Q5_K_X8: return RA_Q5_K_X8_GROUP_BYTES / 8;
    case RA_Q4_1_X8: return RA_Q4_1_X8_GROUP_BYTES / 8;
    case RA_Q4_0_X8: return RA_Q4_0_X8_GROUP_BYTES / 8;
    case RA_Q5_0_X8: return RA_Q5_0_X8_GROUP_BYTES / 8;
    case RA_Q5_1_X8: return RA_Q5_1_X8_GROUP_BYTES / 8;
    case RA_Q8_0_X8: return RA_Q8_0_X8_GROUP_BYTES / 8;
    case RA_Q6_K_X8: return RA_Q6_K_X8_GROUP_BYTES / 8;
    case RA_Q3_K_X8: return RA_Q3_K_X8_GROUP_BYTES / 8;
    case RA_Q2_K_X8: return RA_Q2_K_X8_GROUP_BYTES / 8;
    case RA_IQ4_XS_X8: return RA_IQ4_XS_X8_GROUP_BYTES / 8;
    case RA_IQ4_NL_X8: return RA_IQ4_NL_X8_GROUP_BYTES / 8;
    default: return 0;
    }
}

int64_t ra_row_bytes(int type, int64_t n) {
    const int64_t bs = ra_type_block_size(type);
    if (bs == 0) return 0;
    if (n < 0 || n % bs != 0) return -1;
    return n / bs * ra_type_block_bytes(type);
}

int ra_vec_dot_type(int weight_type) {
    switch (weight_type) {
    case RA_F32: return RA_F32;
    case RA_F16: return RA_F16;
    case RA_BF16: return RA_BF16;
    case RA_Q4_0: case RA_Q5_0: case RA_Q8_0: case RA_Q4_0_X8: case RA_Q5_0_X8: case RA_Q8_0_X8: case RA_IQ4_NL: case RA_IQ4_NL_X8:
        return RA_Q8_0;
    case RA_Q4_1: case RA_Q5_1: case RA_Q4_1_X8: case RA_Q5_1_X8: return RA_Q8_1;
    case RA_Q2_K: case RA_Q3_K: case RA_Q4_K: case RA_Q5_K: case RA_Q6_K: case RA_Q4_K_X8: case RA_Q5_K_X8: case RA_Q6_K_X8:
    case RA_Q3_K_X8: case RA_Q2_K_X8: case RA_IQ4_XS: case RA_IQ4_XS_X8:
        return RA_Q8_K;
    default: return -1;
    }
}

// ---------------------------------------------------------------------------------------------
// Half and bfloat16

float ra_fp16_to_fp32(uint16_t h) { return ra_h2f(h); }

uint16_t ra_fp32_to_fp16(float f) {
    uint32_t x = ra_f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((x >> 13) & 0x3ff));   // NaN: quiet, top payload bits
    if (x >= 0x477ff000u) return (uint16_t)(sign | 0x7c00);                          // rounds to >= 65536: inf
    if (x < 0x38800000u) {
        // Below the smallest normal half: adding 0.5 aligns the value so the FPU rounds it to
        // nearest even at the half-subnormal quantum (2^-24).
        const float v = ra_bits_f32(x) + 0.5f;
        return (uint16_t)(sign | (uint16_t)(ra_f32_bits(v) - 0x3f000000u));
    }
    const uint32_t odd = (x >> 13) & 1;
    x += 0xc8000fffu + odd;     // rebias the exponent (127 -> 15) and round to nearest even
    return (uint16_t)(sign | (uint16_t)(x >> 13));
}

float ra_bf16_to_fp32(uint16_t h) { return ra_bf2f(h); }

uint16_t ra_fp32_to_bf16(float f) {
    const uint32_t u = ra_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64);   // NaN: force quiet
    return (uint16_t)((u + (0x7fffu + ((u >> 16) & 1))) >> 16);
}

// ---------------------------------------------------------------------------------------------
// Quantization

// Round half to even for |v| < 2^22 (ggml's nearest_int).
static inline int ra_nearest_int(float v) {
    const float t = v + 12582912.f;
    int32_t i;
    memcpy(&i, &t, 4);
    return (i & 0x007fffff) - 0x00400000;
}

static float ra_absmax(const float *x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        amax = a > amax ? a : amax;
    }
    return amax;
}

// As ggml's x86 quantize_row_q8_0/q8_1: d = amax/127, multiplier 127/amax, round half to even.
static int ra_quant_q8_block(const float *x, int8_t *q, float *d_out) {
    const float amax = ra_absmax(x, 32);
    const float d = amax / 127.f;
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < 32; j++) {
        const int v = ra_nearest_int(x[j] * id);   // |x * id| <= 127: exact round-half-to-even
        q[j] = (int8_t)v;
        sum += v;
    }
    *d_out = d;
    return sum;
}

static void quantize_q8_0(const float *x, blk_q8_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d;
        ra_quant_q8_block(x + i * 32, y[i].qs, &d);
        y[i].d = ra_fp32_to_fp16(d);
    }
}

static void quantize_q8_1(const float *x, blk_q8_1 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        float d;
        const int sum = ra_quant_q8_block(x + i * 32, y[i].qs, &d);
        y[i].d = ra_fp32_to_fp16(d);
        y[i].s = ra_fp32_to_fp16(d * (float)sum);
    }
}

void ra_q8_k_plus128(const void *x, int64_t n, int64_t nb, uint8_t *dst) {
    const blk_q8_k *y = x;
    for (int64_t b = 0; b < nb * (n / QK_K); b++, dst += QK_K)
        for (int j = 0; j < QK_K; j++) dst[j] = (uint8_t)(y[b].qs[j] ^ 0x80);   // (two's complement: q + 128)
}

// As ggml's quantize_row_q8_K_ref.
static void quantize_q8_k(const float *x, blk_q8_k *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        // The value of largest magnitude, first one on ties (NaN never wins), in two passes the compiler
        // vectorises: the largest magnitude in 8 lanes, then the first element that has it.
        float lane[8] = { 0 };
        for (int j = 0; j < QK_K; j += 8)
            for (int t = 0; t < 8; t++) {
                const float a = fabsf(x[j + t]);
                lane[t] = a > lane[t] ? a : lane[t];
            }
        float amax = 0.0f, max = 0.0f;
        for (int t = 0; t < 8; t++) amax = lane[t] > amax ? lane[t] : amax;
        for (int j = 0; j < QK_K && amax > 0.0f; j++) {
            if (fabsf(x[j]) == amax) { max = x[j]; break; }
        }
        if (amax == 0.0f) {
            y[i].d = 0.0f;
            memset(y[i].qs, 0, sizeof y[i].qs);
            memset(y[i].bsums, 0, sizeof y[i].bsums);
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < QK_K; j++) {
            const int v = ra_nearest_int(iscale * x[j]);
            y[i].qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int g = 0; g < 16; g++) {
            int s = 0;
            for (int j = 0; j < 16; j++) s += y[i].qs[g * 16 + j];
            y[i].bsums[g] = (int16_t)s;
        }
        y[i].d = 1.0f / iscale;
    }
}

// Signed value of largest magnitude (first one on ties), as ggml's reference quantizers pick it.
static float ra_signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        if (a > amax) { amax = a; max = x[j]; }
    }
    return max;
}

static void ra_minmax(const float *x, int n, float *mn, float *mx) {
    float lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < n; j++) {
        lo = x[j] < lo ? x[j] : lo;
        hi = x[j] > hi ? x[j] : hi;
    }
    *mn = lo;
    *mx = hi;
}

static void quantize_q4_0(const float *x, blk_q4_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += 32) {
        const float d = ra_signed_absmax(x, 32) / -8.f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ra_fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int a = (int8_t)(x[j] * id + 8.5f), b = (int8_t)(x[j + 16] * id + 8.5f);
            a = a < 15 ? a : 15;
            b = b < 15 ? b : 15;
            y[i].qs[j] = (uint8_t)(a | (b << 4));
        }
    }
}

static void quantize_q4_1(const float *x, blk_q4_1 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += 32) {
        float mn, mx;
        ra_minmax(x, 32, &mn, &mx);
        const float d = (mx - mn) / 15.f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ra_fp32_to_fp16(d);
        y[i].m = ra_fp32_to_fp16(mn);
        for (int j = 0; j < 16; j++) {
            int a = (int8_t)((x[j] - mn) * id + 0.5f), b = (int8_t)((x[j + 16] - mn) * id + 0.5f);
            a = a < 15 ? a : 15;
            b = b < 15 ? b : 15;
            y[i].qs[j] = (uint8_t)(a | (b << 4));
        }
    }
}

static void quantize_q5_0(const float *x, blk_q5_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += 32) {
        const float d = ra_signed_absmax(x, 32) / -16.f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ra_fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            int a = (int8_t)(x[j] * id + 16.5f), b = (int8_t)(x[j + 16] * id + 16.5f);
            a = a < 31 ? a : 31;
            b = b < 31 ? b : 31;
            y[i].qs[j] = (uint8_t)((a & 15) | ((b & 15) << 4));
            qh |= (uint32_t)((a >> 4) & 1) << j;
            qh |= (uint32_t)((b >> 4) & 1) << (j + 16);
        }
        for (int k = 0; k < 4; k++) y[i].qh[k] = (uint8_t)(qh >> (8 * k));
    }
}

static void quantize_q5_1(const float *x, blk_q5_1 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += 32) {
        float mn, mx;
        ra_minmax(x, 32, &mn, &mx);
        const float d = (mx - mn) / 31.f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ra_fp32_to_fp16(d);
        y[i].m = ra_fp32_to_fp16(mn);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            const int a = (uint8_t)((x[j] - mn) * id + 0.5f), b = (uint8_t)((x[j + 16] - mn) * id + 0.5f);
            y[i].qs[j] = (uint8_t)((a & 15) | ((b & 15) << 4));
            qh |= (uint32_t)((a >> 4) & 1) << j;
            qh |= (uint32_t)((b >> 4) & 1) << (j + 16);
        }
        for (int k = 0; k < 4; k++) y[i].qh[k] = (uint8_t)(qh >> (8 * k));
    }
}

int ra_quantize_supported(int type) {
    switch (type) {
    case RA_F32: case RA_F16: case RA_BF16: case RA_Q8_0: case RA_Q8_1: case RA_Q8_K:
    case RA_Q4_0: case RA_Q4_1: case RA_Q5_0: case RA_Q5_1:
        return 1;
    default:
        return 0;
    }
}

void ra_quantize_row(int type, const float *x, void *dst, int64_t n) {
    if (!ra_quantize_supported(type) || ra_row_bytes(type, n) < 0) return;
#if defined(__aarch64__)
    if (ra_neon_quantize_row(type, x, dst, n)) return;   // the same bytes, on the NEON paths
#elif defined(__x86_64__)
    if (ra_x86_simd_ops() && ra_quantize_row_avx2(type, x, dst, n)) return;   // the same bytes, Q8_0/Q8_1/Q8_K on AVX2
#endif
    const int64_t nb = n / ra_type_block_size(type);
    switch (type) {
    case RA_F32: memmove(dst, x, (size_t)n * 4); break;
    case RA_F16: { uint16_t *h = dst; for (int64_t i = 0; i < n; i++) h[i] = ra_fp32_to_fp16(x[i]); break; }
    case RA_BF16: { uint16_t *h = dst; for (int64_t i = 0; i < n; i++) h[i] = ra_fp32_to_bf16(x[i]); break; }
    case RA_Q8_0: quantize_q8_0(x, dst, nb); break;
    case RA_Q8_1: quantize_q8_1(x, dst, nb); break;
    case RA_Q8_K: quantize_q8_k(x, dst, nb); break;
    case RA_Q4_0: quantize_q4_0(x, dst, nb); break;
    case RA_Q4_1: quantize_q4_1(x, dst, nb); break;
    case RA_Q5_0: quantize_q5_0(x, dst, nb); break;
    case RA_Q5_1: quantize_q5_1(x, dst, nb); break;
    default: break;
    }
}

// ---------------------------------------------------------------------------------------------
// Dequantization

static void dequant_q4_0(const blk_q4_0 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((b[i].qs[j] & 15) - 8) * d;
            y[j + 16] = (float)((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

static void dequant_q4_1(const blk_q4_1 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d), m = ra_h2f(b[i].m);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(b[i].qs[j] & 15) * d + m;
            y[j + 16] = (float)(b[i].qs[j] >> 4) * d + m;
        }
    }
}

static inline uint32_t ra_load_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void dequant_q5_0(const blk_q5_0 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d);
        const uint32_t qh = ra_load_u32le(b[i].qh);
        for (int j = 0; j < 16; j++) {
            const int a = (b[i].qs[j] & 15) | (int)(((qh >> j) & 1) << 4);
            const int c = (b[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
            y[j] = (float)(a - 16) * d;
            y[j + 16] = (float)(c - 16) * d;
        }
    }
}

static void dequant_q5_1(const blk_q5_1 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d), m = ra_h2f(b[i].m);
        const uint32_t qh = ra_load_u32le(b[i].qh);
        for (int j = 0; j < 16; j++) {
            const int a = (b[i].qs[j] & 15) | (int)(((qh >> j) & 1) << 4);
            const int c = (b[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
            y[j] = (float)a * d + m;
            y[j + 16] = (float)c * d + m;
        }
    }
}

static void dequant_q8_0(const blk_q8_0 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d);
        for (int j = 0; j < 32; j++) y[j] = (float)b[i].qs[j] * d;
    }
}

static void dequant_q8_1(const blk_q8_1 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d);
        for (int j = 0; j < 32; j++) y[j] = (float)b[i].qs[j] * d;
    }
}

static void dequant_q4_k(const blk_q4_k *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = ra_h2f(b[i].d), dmin = ra_h2f(b[i].dmin);
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(b[i].scales, sc, m);
        for (int g = 0; g < 4; g++, y += 64) {
            const uint8_t *q = b[i].qs + 32 * g;
            const float d1 = d * sc[2 * g], m1 = dmin * m[2 * g];
            const float d2 = d * sc[2 * g + 1], m2 = dmin * m[2 * g + 1];
            for (int l = 0; l < 32; l++) y[l] = d1 * (float)(q[l] & 15) - m1;
            for (int l = 0; l < 32; l++) y[l + 32] = d2 * (float)(q[l] >> 4) - m2;
        }
    }
}

static void dequant_q5_k(const blk_q5_k *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = ra_h2f(b[i].d), dmin = ra_h2f(b[i].dmin);
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(b[i].scales, sc, m);
        for (int g = 0; g < 4; g++, y += 64) {
            const uint8_t *q = b[i].qs + 32 * g;
            const float d1 = d * sc[2 * g], m1 = dmin * m[2 * g];
            const float d2 = d * sc[2 * g + 1], m2 = dmin * m[2 * g + 1];
            for (int l = 0; l < 32; l++) {
                const int hb = (b[i].qh[l] >> (2 * g)) & 1;
                y[l] = d1 * (float)((q[l] & 15) | (hb << 4)) - m1;
            }
            for (int l = 0; l < 32; l++) {
                const int hb = (b[i].qh[l] >> (2 * g + 1)) & 1;
                y[l + 32] = d2 * (float)((q[l] >> 4) | (hb << 4)) - m2;
            }
        }
    }
}

// Q2_K and Q3_K: per half (128 elements) four 32-element runs; run c of half h takes bits 2c, 2c+1 of qs[32h + l]
// (l < 32) and, Q3_K, bit 4h + c of hmask[l]; element 16k + j has scale k.
static void dequant_q2_k(const blk_q2_k *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = ra_h2f(b[i].d), dmin = ra_h2f(b[i].dmin);
        int8_t q[QK_K];
        ra_q2_k_quants(&b[i], q);
        for (int e = 0; e < QK_K; e++, y++) {
            const int sc = b[i].scales[e / 16];
            *y = d * (float)(sc & 15) * (float)q[e] - dmin * (float)(sc >> 4);
        }
    }
}

static void dequant_q3_k(const blk_q3_k *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = ra_h2f(b[i].d);
        int8_t q[QK_K], sc[16];
        ra_q3_k_quants(&b[i], q);
        ra_unpack_scales_q3_k(b[i].scales, sc);
        for (int e = 0; e < QK_K; e++, y++) *y = d * (float)sc[e / 16] * (float)q[e];
    }
}

static void dequant_iq4_nl(const blk_iq4_nl *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += 32) {
        const float d = ra_h2f(b[i].d);
        int8_t q[32];
        ra_iq4_values(b[i].qs, q);
        for (int j = 0; j < 32; j++) y[j] = d * (float)q[j];
    }
}

static void dequant_iq4_xs(const blk_iq4_xs *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = ra_h2f(b[i].d);
        for (int j = 0; j < 8; j++, y += 32) {
            const float dl = d * (float)ra_iq4_xs_scale(&b[i], j);
            int8_t q[32];
            ra_iq4_values(b[i].qs + 16 * j, q);
            for (int l = 0; l < 32; l++) y[l] = dl * (float)q[l];
        }
    }
}

static void dequant_q6_k(const blk_q6_k *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = ra_h2f(b[i].d);
        for (int h = 0; h < 2; h++, y += 128) {
            const uint8_t *ql = b[i].ql + 64 * h, *qh = b[i].qh + 32 * h;
            const int8_t *sc = b[i].scales + 8 * h;
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * (float)sc[is] * (float)q1;
                y[l + 32] = d * (float)sc[is + 2] * (float)q2;
                y[l + 64] = d * (float)sc[is + 4] * (float)q3;
                y[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

static void dequant_q8_k(const blk_q8_k *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += QK_K)
        for (int j = 0; j < QK_K; j++) y[j] = b[i].d * (float)b[i].qs[j];
}

void ra_dequantize_row(int type, const void *src, float *dst, int64_t n) {
    if (!ra_type_supported(type) || ra_row_bytes(type, n) < 0) return;
    const int64_t nb = n / ra_type_block_size(type);
    switch (type) {
    case RA_F32: memcpy(dst, src, (size_t)n * 4); break;
    case RA_F16: { const uint16_t *h = src; for (int64_t i = 0; i < n; i++) dst[i] = ra_h2f(h[i]); break; }
    case RA_BF16: { const uint16_t *h = src; for (int64_t i = 0; i < n; i++) dst[i] = ra_bf2f(h[i]); break; }
    case RA_Q4_0: dequant_q4_0(src, dst, nb); break;
    case RA_Q4_1: dequant_q4_1(src, dst, nb); break;
    case RA_Q5_0: dequant_q5_0(src, dst, nb); break;
    case RA_Q5_1: dequant_q5_1(src, dst, nb); break;
    case RA_Q8_0: dequant_q8_0(src, dst, nb); break;
    case RA_Q8_1: dequant_q8_1(src, dst, nb); break;
    case RA_IQ4_NL: dequant_iq4_nl(src, dst, nb); break;
    case RA_IQ4_XS: dequant_iq4_xs(src, dst, nb); break;
    case RA_Q2_K: dequant_q2_k(src, dst, nb); break;
    case RA_Q3_K: dequant_q3_k(src, dst, nb); break;
    case RA_Q4_K: dequant_q4_k(src, dst, nb); break;
    case RA_Q5_K: dequant_q5_k(src, dst, nb); break;
    case RA_Q6_K: dequant_q6_k(src, dst, nb); break;
    case RA_Q8_K: dequant_q8_k(src, dst, nb); break;
    default: break;
    }
}
