// Portable scalar reference dot products (weight row × activation row in ra_vec_dot_type).
// Integer parts are exact; each block's integer sum is scaled once, as ggml's generic code does.
#include "kernels_internal.h"

static float dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = w, *b = x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return (float)s;
}

static float dot_f16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)(ra_h2f(a[i]) * ra_h2f(b[i]));
    return (float)s;
}

static float dot_bf16(int64_t n, const void *w, const void *x) {
    const uint16_t *a = w, *b = x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)(ra_bf2f(a[i]) * ra_bf2f(b[i]));
    return (float)s;
}

static float dot_q4_0(int64_t n, const void *w, const void *x) {
    const blk_q4_0 *a = w;
    const blk_q8_0 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            sumi += ((a[i].qs[j] & 15) - 8) * b[i].qs[j];
            sumi += ((a[i].qs[j] >> 4) - 8) * b[i].qs[j + 16];
        }
        s += (float)sumi * (ra_h2f(a[i].d) * ra_h2f(b[i].d));
    }
    return s;
}

static float dot_q4_1(int64_t n, const void *w, const void *x) {
    const blk_q4_1 *a = w;
    const blk_q8_1 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (a[i].qs[j] & 15) * b[i].qs[j];
            sumi += (a[i].qs[j] >> 4) * b[i].qs[j + 16];
        }
        s += (float)sumi * (ra_h2f(a[i].d) * ra_h2f(b[i].d)) + ra_h2f(a[i].m) * ra_h2f(b[i].s);
    }
    return s;
}

static float dot_q5_0(int64_t n, const void *w, const void *x) {
    const blk_q5_0 *a = w;
    const blk_q8_0 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        uint32_t qh;
        memcpy(&qh, a[i].qh, 4);
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            const int lo = ((a[i].qs[j] & 15) | (int)(((qh >> j) & 1) << 4)) - 16;
            const int hi = ((a[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4)) - 16;
            sumi += lo * b[i].qs[j] + hi * b[i].qs[j + 16];
        }
        s += (float)sumi * (ra_h2f(a[i].d) * ra_h2f(b[i].d));
    }
    return s;
}

static float dot_q5_1(int64_t n, const void *w, const void *x) {
    const blk_q5_1 *a = w;
    const blk_q8_1 *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        uint32_t qh;
        memcpy(&qh, a[i].qh, 4);
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            const int lo = (a[i].qs[j] & 15) | (int)(((qh >> j) & 1) << 4);
            const int hi = (a[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
            sumi += lo * b[i].qs[j] + hi * b[i].qs[j + 16];
        }
        s += (float)sumi * (ra_h2f(a[i].d) * ra_h2f(b[i].d)) + ra_h2f(a[i].m) * ra_h2f(b[i].s);
    }
    return s;
}

static float dot_q8_0(int64_t n, const void *w, const void *x) {
    const blk_q8_0 *a = w, *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
        int sumi = 0;
        for (int j = 0; j < 32; j++) sumi += a[i].qs[j] * b[i].qs[j];
        s += (float)sumi * (ra_h2f(a[i].d) * ra_h2f(b[i].d));
    }
    return s;
}

static float dot_q4_k(int64_t n, const void *w, const void *x) {
    const blk_q4_k *a = w;
    const blk_q8_k *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        int sumi = 0;
        for (int g = 0; g < 4; g++) {
            const uint8_t *q = a[i].qs + 32 * g;
            const int8_t *y = b[i].qs + 64 * g;
            int s1 = 0, s2 = 0;
            for (int l = 0; l < 32; l++) {
                s1 += (q[l] & 15) * y[l];
                s2 += (q[l] >> 4) * y[l + 32];
            }
            sumi += sc[2 * g] * s1 + sc[2 * g + 1] * s2;
        }
        int summ = 0;
        for (int j = 0; j < 8; j++) summ += m[j] * (b[i].bsums[2 * j] + b[i].bsums[2 * j + 1]);
        s += b[i].d * ra_h2f(a[i].d) * (float)sumi - b[i].d * ra_h2f(a[i].dmin) * (float)summ;
    }
    return s;
}

static float dot_q5_k(int64_t n, const void *w, const void *x) {
    const blk_q5_k *a = w;
    const blk_q8_k *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], m[8];
        ra_unpack_scales_k4(a[i].scales, sc, m);
        int sumi = 0;
        for (int g = 0; g < 4; g++) {
            const uint8_t *q = a[i].qs + 32 * g;
            const int8_t *y = b[i].qs + 64 * g;
            int s1 = 0, s2 = 0;
            for (int l = 0; l < 32; l++) {
                s1 += ((q[l] & 15) | (((a[i].qh[l] >> (2 * g)) & 1) << 4)) * y[l];
                s2 += ((q[l] >> 4) | (((a[i].qh[l] >> (2 * g + 1)) & 1) << 4)) * y[l + 32];
            }
            sumi += sc[2 * g] * s1 + sc[2 * g + 1] * s2;
        }
        int summ = 0;
        for (int j = 0; j < 8; j++) summ += m[j] * (b[i].bsums[2 * j] + b[i].bsums[2 * j + 1]);
        s += b[i].d * ra_h2f(a[i].d) * (float)sumi - b[i].d * ra_h2f(a[i].dmin) * (float)summ;
    }
    return s;
}

static float dot_q6_k(int64_t n, const void *w, const void *x) {
    const blk_q6_k *a = w;
    const blk_q8_k *b = x;
    float s = 0;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int sumi = 0;
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = a[i].ql + 64 * h, *qh = a[i].qh + 32 * h;
            const int8_t *sc = a[i].scales + 8 * h, *y = b[i].qs + 128 * h;
            int s4[8] = {0};
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                s4[is + 0] += (((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32) * y[l];
                s4[is + 2] += (((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32) * y[l + 32];
                s4[is + 4] += (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32) * y[l + 64];
                s4[is + 6] += (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32) * y[l + 96];
            }
            for (int k = 0; k < 8; k++) sumi += sc[k] * s4[k];
        }
        s += b[i].d * ra_h2f(a[i].d) * (float)sumi;
    }
    return s;
}

const ra_dot_table ra_dots_scalar = {
    .dot = {
        [RA_DI_F32] = dot_f32, [RA_DI_F16] = dot_f16, [RA_DI_BF16] = dot_bf16,
        [RA_DI_Q4_0] = dot_q4_0, [RA_DI_Q4_1] = dot_q4_1, [RA_DI_Q5_0] = dot_q5_0, [RA_DI_Q5_1] = dot_q5_1,
        [RA_DI_Q8_0] = dot_q8_0, [RA_DI_Q4_K] = dot_q4_k, [RA_DI_Q5_K] = dot_q5_k, [RA_DI_Q6_K] = dot_q6_k,
    },
};
