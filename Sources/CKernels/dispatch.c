// CPU feature detection, path selection, ra_vec_dot and ra_matmul_rows.
#include "kernels_internal.h"
#include <stdatomic.h>

static atomic_int g_features = -1;     // detected features (-1: not yet)
static atomic_int g_mask = -1;         // allowed by ra_set_cpu_features_mask

static int detect_features(void) {
    int f = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) f |= RA_CPU_AVX2;
    if (__builtin_cpu_supports("fma")) f |= RA_CPU_FMA;
    if (__builtin_cpu_supports("f16c")) f |= RA_CPU_F16C;
    if (__builtin_cpu_supports("avx512f")) f |= RA_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw")) f |= RA_CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vl")) f |= RA_CPU_AVX512VL;
    if (__builtin_cpu_supports("avx512vnni")) f |= RA_CPU_AVX512VNNI;
#elif defined(__aarch64__)
    f |= RA_CPU_NEON;
#endif
    return f;
}

int ra_cpu_features(void) {
    int f = atomic_load_explicit(&g_features, memory_order_acquire);
    if (f < 0) {
        f = detect_features();
        atomic_store_explicit(&g_features, f, memory_order_release);
    }
    return f;
}

void ra_set_cpu_features_mask(int mask) { atomic_store_explicit(&g_mask, mask, memory_order_release); }

static inline int has_all(int f, int need) { return (f & need) == need; }

int ra_kernel_path(void) {
    const int f = ra_cpu_features() & atomic_load_explicit(&g_mask, memory_order_acquire);
    const int avx2 = RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C;
    const int avx512 = avx2 | RA_CPU_AVX512F | RA_CPU_AVX512BW | RA_CPU_AVX512VL;
#if defined(__x86_64__)
    if (has_all(f, avx512 | RA_CPU_AVX512VNNI)) return RA_PATH_AVX512_VNNI;
    if (has_all(f, avx512)) return RA_PATH_AVX512;
    if (has_all(f, avx2)) return RA_PATH_AVX2;
#endif
    (void)f;
    return RA_PATH_SCALAR;
}

const char *ra_kernel_path_name(int path) {
    switch (path) {
    case RA_PATH_AVX2: return "avx2";
    case RA_PATH_AVX512: return "avx512";
    case RA_PATH_AVX512_VNNI: return "avx512-vnni";
    default: return "scalar";
    }
}

static int dot_index(int type) {
    switch (type) {
    case RA_F32: return RA_DI_F32;
    case RA_F16: return RA_DI_F16;
    case RA_BF16: return RA_DI_BF16;
    case RA_Q4_0: return RA_DI_Q4_0;
    case RA_Q4_1: return RA_DI_Q4_1;
    case RA_Q5_0: return RA_DI_Q5_0;
    case RA_Q5_1: return RA_DI_Q5_1;
    case RA_Q8_0: return RA_DI_Q8_0;
    case RA_Q4_K: return RA_DI_Q4_K;
    case RA_Q5_K: return RA_DI_Q5_K;
    case RA_Q6_K: return RA_DI_Q6_K;
    default: return -1;
    }
}

// Tables from the chosen path down to scalar; the first non-NULL entry wins.
static int path_tables(int path, const ra_dot_table *t[4]) {
    int k = 0;
#if defined(__x86_64__)
    if (path >= RA_PATH_AVX512_VNNI) t[k++] = &ra_dots_avx512vnni;
    if (path >= RA_PATH_AVX512) t[k++] = &ra_dots_avx512;
    if (path >= RA_PATH_AVX2) t[k++] = &ra_dots_avx2;
#else
    (void)path;
#endif
    t[k++] = &ra_dots_scalar;
    return k;
}

static void resolve(int type, ra_dot_fn *dot, ra_dot_multi_fn *multi) {
    *dot = NULL;
    *multi = NULL;
    const int di = dot_index(type);
    if (di < 0) return;
    const ra_dot_table *t[4];
    const int k = path_tables(ra_kernel_path(), t);
    for (int i = 0; i < k && !*dot; i++) {
        *dot = t[i]->dot[di];
        // a multi-row kernel is only used from the same path as the dot it stands for
        if (*dot) *multi = t[i]->multi[di];
    }
}

float ra_vec_dot(int weight_type, int64_t n, const void *w_row, const void *x_row) {
    ra_dot_fn dot;
    ra_dot_multi_fn multi;
    resolve(weight_type, &dot, &multi);
    if (!dot || ra_row_bytes(weight_type, n) < 0) return 0.0f;
    return dot(n, w_row, x_row);
}

void ra_matmul_rows(int weight_type, const void *w, int64_t n, const void *x, int64_t nb,
                    float *out, int64_t out_stride, int64_t r0, int64_t r1) {
    ra_dot_fn dot;
    ra_dot_multi_fn multi;
    resolve(weight_type, &dot, &multi);
    const int64_t wrow = ra_row_bytes(weight_type, n);
    const int64_t xrow = ra_row_bytes(ra_vec_dot_type(weight_type), n);
    if (!dot || wrow < 0 || xrow < 0 || r1 <= r0 || nb <= 0) return;
    const uint8_t *W = w, *X = x;
    if (nb == 1) {
        // decode: stream the weights once
        for (int64_t r = r0; r < r1; r++) out[r] = dot(n, W + r * wrow, X);
        return;
    }
    if (multi) {
        // one weight row against up to 8 activation rows at a time: the row is decoded once per group
        // while it sits in L1; the activation group (8 rows) stays in L1/L2 across all weight rows
        enum { NX = 8 };
        for (int64_t b0 = 0; b0 < nb; b0 += NX) {
            const int nx = (int)(nb - b0 < NX ? nb - b0 : NX);
            for (int64_t r = r0; r < r1; r++)
                multi(n, W + r * wrow, X + b0 * xrow, xrow, nx, out + b0 * out_stride + r, out_stride);
        }
        return;
    }
    // Tiles of weight rows small enough to stay in L1/L2 while every activation row passes over them.
    int64_t tile = (int64_t)(32 * 1024) / (wrow > 0 ? wrow : 1);
    if (tile < 1) tile = 1;
    if (tile > 64) tile = 64;
    for (int64_t rt = r0; rt < r1; rt += tile) {
        const int64_t re = rt + tile < r1 ? rt + tile : r1;
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t *xb = X + b * xrow;
            float *ob = out + b * out_stride;
            for (int64_t r = rt; r < re; r++) ob[r] = dot(n, W + r * wrow, xb);
        }
    }
}
