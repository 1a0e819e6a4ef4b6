// CPU feature detection, path selection, ra_vec_dot and ra_matmul_rows.
#include "kernels_internal.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)   // the kernel's bit for SDOT/UDOT (some libcs' headers lack the name)
#endif
#endif

// Number of RA_PATH_* values (the per-path dispatch arrays).
#define RA_PATH_COUNT 7

static atomic_int g_features = -1;     // detected features (-1: not yet)
static atomic_int g_mask = -1;         // allowed by ra_set_cpu_features_mask
static _Thread_local int t_mask = -1;  // allowed on this thread (ra_set_thread_features_mask)

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
    if (__builtin_cpu_supports("avxvnni")) f |= RA_CPU_AVXVNNI;
#elif defined(__aarch64__)
    f |= RA_CPU_NEON;   // Advanced SIMD is part of every ARMv8-A application core
#if defined(__APPLE__)
    int v = 0;
    size_t len = sizeof v;
    if (sysctlbyname("hw.optional.arm.FEAT_DotProd", &v, &len, NULL, 0) == 0 && v) f |= RA_CPU_DOTPROD;
#elif defined(__linux__)
    if (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) f |= RA_CPU_DOTPROD;
#endif
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

// The repacked groups' prefetch distance (ra_x8_prefetch): -1 until first use, and after ra_set_x8_prefetch(-1).
static atomic_int g_x8_prefetch = -1;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// A Zen 4 core: AMD family 19h, models 10h-1Fh, 60h-7Fh and A0h-AFh (the family's other models are Zen 3, not measured).
static int amd_zen4(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u || !__get_cpuid(1, &a, &b, &c, &d)) return 0;   // "Auth"enticAMD
    const unsigned family = ((a >> 8) & 0xFu) + ((a >> 20) & 0xFFu), model = ((a >> 4) & 0xFu) | ((a >> 12) & 0xF0u);
    return family == 0x19 && ((model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) || (model >= 0xA0 && model <= 0xAF));
}
#endif

// The CPU's choice for groups of `type` (x8.c has the measurements): Zen 1 and Zen+ (family 17h up to model 2Fh, which
// is what the compilers' "znver1" means) stream every group faster with the one-row kernels' 4 KiB-ahead prefetch; Zen 4
// the Q3_K and Q2_K groups (the most instructions a byte: 1.05-1.13x decode for files of them, engine-notes "Stop 46")
// and the others faster without. Other CPUs were not measured and keep the hardware prefetcher alone.
static int cpu_x8_prefetch(int type) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static atomic_int kind = -1;   // 0: no prefetch, 1: Zen 1, 2: Zen 4
    int k = atomic_load_explicit(&kind, memory_order_relaxed);
    if (k < 0) {
        __builtin_cpu_init();
        k = __builtin_cpu_is("znver1") ? 1 : amd_zen4() ? 2 : 0;
        atomic_store_explicit(&kind, k, memory_order_relaxed);
    }
    if (k == 1 || (k == 2 && (type == RA_Q3_K || type == RA_Q2_K))) return RA_PREFETCH_DISTANCE;
#else
    (void)type;
#endif
    return 0;
}

int ra_x8_prefetch(int type) {
    const int v = atomic_load_explicit(&g_x8_prefetch, memory_order_relaxed);
    return v >= 0 ? v : cpu_x8_prefetch(type);
}

void ra_set_x8_prefetch(int bytes) {
    atomic_store_explicit(&g_x8_prefetch, bytes < 0 ? -1 : (bytes > 65536 ? 65536 : bytes) / 64 * 64, memory_order_relaxed);
}

void ra_set_cpu_features_mask(int mask) { atomic_store_explicit(&g_mask, mask, memory_order_release); }

void ra_set_thread_features_mask(int mask) { t_mask = mask; }

int ra_thread_features_mask(void) { return t_mask; }

int ra_kernel_path(void) {
    const int f = ra_cpu_features() & atomic_load_explicit(&g_mask, memory_order_acquire) & t_mask;
    // the best path whose features are all allowed (ra_kernel_path_mask), best first
#if defined(__x86_64__)
    static const int order[] = { RA_PATH_AVX512_VNNI, RA_PATH_AVX512, RA_PATH_AVX2_VNNI, RA_PATH_AVX2 };
#elif defined(__aarch64__)
    static const int order[] = { RA_PATH_NEON_DOTPROD, RA_PATH_NEON };
#else
    static const int order[] = { RA_PATH_SCALAR };
#endif
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const int need = ra_kernel_path_mask(order[i]);
        if ((f & need) == need) return order[i];
    }
    return RA_PATH_SCALAR;
}

const char *ra_kernel_path_name(int path) {
    switch (path) {
    case RA_PATH_AVX2: return "avx2";
    case RA_PATH_AVX2_VNNI: return "avx2-vnni";
    case RA_PATH_AVX512: return "avx512";
    case RA_PATH_AVX512_VNNI: return "avx512-vnni";
    case RA_PATH_NEON: return "neon";
    case RA_PATH_NEON_DOTPROD: return "neon-dotprod";
    default: return "scalar";
    }
}

int ra_kernel_path_mask(int path) {
#if defined(__x86_64__)
    const int avx2 = RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C;
    const int avx512 = avx2 | RA_CPU_AVX512F | RA_CPU_AVX512BW | RA_CPU_AVX512VL;
    switch (path) {
    case RA_PATH_SCALAR: return 0;
    case RA_PATH_AVX2: return avx2;
    case RA_PATH_AVX2_VNNI: return avx2 | RA_CPU_AVXVNNI;
    case RA_PATH_AVX512: return avx512;
    case RA_PATH_AVX512_VNNI: return avx512 | RA_CPU_AVX512VNNI;
    default: return -1;
    }
#elif defined(__aarch64__)
    switch (path) {
    case RA_PATH_SCALAR: return 0;
    case RA_PATH_NEON: return RA_CPU_NEON;
    case RA_PATH_NEON_DOTPROD: return RA_CPU_NEON | RA_CPU_DOTPROD;
    default: return -1;
    }
#else
    return path == RA_PATH_SCALAR ? 0 : -1;
#endif
}

int ra_kernel_path_named(const char *name) {
    for (int path = 0; path < RA_PATH_COUNT; path++)
        if (ra_kernel_path_mask(path) >= 0 && strcmp(name, ra_kernel_path_name(path)) == 0) return path;
    return -1;
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
    case RA_IQ4_NL: return RA_DI_IQ4_NL;
    case RA_IQ4_XS: return RA_DI_IQ4_XS;
    case RA_Q2_K: return RA_DI_Q2_K;
    case RA_Q3_K: return RA_DI_Q3_K;
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
    if (path == RA_PATH_AVX512_VNNI) t[k++] = &ra_dots_avx512vnni;
    if (path == RA_PATH_AVX512_VNNI || path == RA_PATH_AVX512) t[k++] = &ra_dots_avx512;
    if (ra_path_is_x86_simd(path)) t[k++] = &ra_dots_avx2;   // AVX2_VNNI: the AVX2 dots; its panels are below
#elif defined(__aarch64__)
    if (path == RA_PATH_NEON_DOTPROD) t[k++] = &ra_dots_neon_dotprod;
    if (path == RA_PATH_NEON_DOTPROD || path == RA_PATH_NEON) t[k++] = &ra_dots_neon;
#else
    (void)path;
#endif
    t[k++] = &ra_dots_scalar;
    return k;
}

// Dot functions per path and type, resolved once (the first non-NULL entry from the path down).
static ra_dot_fn g_dot[RA_PATH_COUNT][RA_DI_COUNT];
static ra_dot_multi_fn g_multi[RA_PATH_COUNT][RA_DI_COUNT];
static ra_dot_rows_fn g_rows[RA_PATH_COUNT][RA_DI_COUNT];

static void build_dispatch(void) {
    ra_kernels_init();
    for (int path = 0; path < RA_PATH_COUNT; path++) {
        const ra_dot_table *t[4];
        const int k = path_tables(path, t);
        // The multi-row and decode rows kernels come from the same table as the single-row one, never from a lower
        // path: each table's kernels sum in its dot's order, so a prompt batch gives the logits that feeding the same
        // tokens one by one gives (a lower path's multi next to a higher path's dot would differ in the last bits,
        // and F16/Q8 activation rounding amplifies that). (A table could once lend a decode rows kernel to the dot of
        // a table below it; the one kernel that did, a 512-bit Q5_K, measured no faster and was dropped:
        // bench/results/engine-notes.md, "Stop 26".)
        for (int di = 0; di < RA_DI_COUNT; di++) {
            for (int i = 0; i < k; i++) {
                if (t[i]->dot[di]) {
                    g_dot[path][di] = t[i]->dot[di];
                    g_multi[path][di] = t[i]->multi[di];
                    g_rows[path][di] = t[i]->rows[di];
                    break;
                }
            }
        }
    }
}

// The dot, multi-row and decode-rows kernels of `type` on the current path (rows may be NULL when not wanted).
static inline void resolve(int type, ra_dot_fn *dot, ra_dot_multi_fn *multi, ra_dot_rows_fn *rows) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_dispatch);
    const int di = dot_index(type);
    if (di < 0) {
        *dot = NULL;
        *multi = NULL;
        if (rows) *rows = NULL;
        return;
    }
    const int path = ra_kernel_path();
    *dot = g_dot[path][di];
    *multi = g_multi[path][di];
    if (rows) *rows = g_rows[path][di];
}

ra_vec_dot_fn ra_vec_dot_function(int weight_type) {
    ra_dot_fn dot;
    ra_dot_multi_fn multi;
    resolve(weight_type, &dot, &multi, NULL);
    return dot;
}

float ra_vec_dot(int weight_type, int64_t n, const void *w_row, const void *x_row) {
    ra_dot_fn dot;
    ra_dot_multi_fn multi;
    resolve(weight_type, &dot, &multi, NULL);
    if (!dot || ra_row_bytes(weight_type, n) < 0) return 0.0f;
    return dot(n, w_row, x_row);
}

// Per-thread scratch, grown on demand and freed when the thread ends: slot 0 for repacked weight panels and
// activation sums (the x86 batch kernels), slot 1 for the activation scales of a product (ra_thread_side_buffer), slot 2
// for repacked rows converted back (ra_thread_unpack_buffer), which the kernels then run on with slot 0.
static pthread_key_t g_scratch_key[3];
typedef struct { int64_t size; uint8_t data[]; } ra_scratch;

static void scratch_free(void *p) { free(p); }
static void scratch_key_init(void) {
    pthread_key_create(&g_scratch_key[0], scratch_free);
    pthread_key_create(&g_scratch_key[1], scratch_free);
    pthread_key_create(&g_scratch_key[2], scratch_free);
}

static uint8_t *ra_thread_scratch_slot(int slot, int64_t bytes) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, scratch_key_init);
    ra_scratch *s = pthread_getspecific(g_scratch_key[slot]);
    if (s && s->size >= bytes) return s->data;
    free(s);
    s = malloc(sizeof(ra_scratch) + (size_t)bytes + 64);
    if (!s) { pthread_setspecific(g_scratch_key[slot], NULL); return NULL; }
    s->size = bytes;
    pthread_setspecific(g_scratch_key[slot], s);
    return s->data;
}

float *ra_thread_side_buffer(int64_t floats) {
    uint8_t *p = ra_thread_scratch_slot(1, floats * (int64_t)sizeof(float));
    return p ? (float *)(void *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;
}

uint8_t *ra_thread_unpack_buffer(int64_t bytes) {
    uint8_t *p = ra_thread_scratch_slot(2, bytes);
    return p ? (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;
}

#if defined(__x86_64__)
static uint8_t *ra_thread_scratch(int64_t bytes) { return ra_thread_scratch_slot(0, bytes); }
#endif

/// The 32-element block types, whose AVX2 panels take their activation scales as floats.
static int ra_is_b32(int weight_type) {
    return weight_type == RA_Q8_0 || weight_type == RA_Q4_0 || weight_type == RA_Q5_0 || weight_type == RA_Q4_1 || weight_type == RA_Q5_1;
}

#if defined(__x86_64__)
// Whether a batch kernel is one of the VNNI panels of the 32-element types.
static int b32_vnni_kernel(ra_matmul_batch_fn f) {
    return f == ra_matmul_q8_0_vnni || f == ra_matmul_q4_0_vnni || f == ra_matmul_q5_0_vnni || f == ra_matmul_q4_1_vnni ||
           f == ra_matmul_q5_1_vnni;
}

// Whether products in weight_type on path take the activation scales as floats: the AVX2 decode rows kernels and the
// panels (AVX2 and VNNI) of the 32-element types do.
static int b32_takes_side(int weight_type, int path) {
    return ra_is_b32(weight_type) && ra_path_is_x86_simd(path);
}

// Whether a batch of Q8_0 (file rows or repacked) may run the AVX2 int16 panels, which take the activations widened
// in the side data: every x86 path except AVX-512 VNNI where its 16-row panels take the product (batch_kernel).
static int q8_0_wide_side(int source_type, int64_t n, int64_t nb, int path) {
    return source_type == RA_Q8_0 && nb > 1 && !(path == RA_PATH_AVX512_VNNI && n % 64 == 0);
}

// Whether a batch of IQ4_XS runs the int16 panels (every x86 path), which take the activations' scales and their
// quants widened to int16 as side data (ra_iq4_xs_side_avx2).
static int iq4_xs_wide_side(int type, int64_t n, int64_t nb, int path) {
    return type == RA_IQ4_XS && nb > 1 && n % QK_K == 0 && ra_path_is_x86_simd(path);
}

// Whether a batch of weight_type (as the product has it: file rows or repacked) runs the VNNI panels that take the Q8_K
// activations plus 128 as side data (ra_q8_k_plus128): Q6_K's rows, file or repacked, and IQ4_XS's repacked rows on
// AVX-512 VNNI (IQ4_XS's file rows run the int16 panels, iq4_xs_wide_side).
static int q8_k_plus128_side(int weight_type, int64_t n, int64_t nb, int path) {
    return (weight_type == RA_Q6_K || weight_type == RA_Q6_K_X8 || weight_type == RA_IQ4_XS_X8) && nb > 1 && n % QK_K == 0 &&
           path == RA_PATH_AVX512_VNNI;
}

// Whether a batch of IQ4_NL runs Q8_0's int16 panels (every x86 path), with Q8_0's side data (scales, int16 rows).
static int iq4_nl_wide_side(int type, int64_t n, int64_t nb, int path) {
    return type == RA_IQ4_NL && nb > 1 && n % 32 == 0 && ra_path_is_x86_simd(path);
}
#endif

int64_t ra_matmul_side_floats(int weight_type, int64_t n, int64_t nb) {
#if defined(__x86_64__)
    // repacked 32-element types: their kernels take the file type's scales, on the paths that have them
    const int source = ra_x8_source(weight_type), path = ra_kernel_path();
    if (q8_k_plus128_side(weight_type, n, nb, path)) return n * nb / 4;   // (n a multiple of 256: whole floats)
    if (source >= 0) weight_type = ra_x8_kernel(path) ? source : -1;
    if (nb >= 1 && n % 32 == 0 && b32_takes_side(weight_type, path))
        return 2 * (n / 32) * nb + (q8_0_wide_side(weight_type, n, nb, path) ? n * nb / 2 : 0);
    if (iq4_xs_wide_side(weight_type, n, nb, path)) return (n / QK_K) * nb + n * nb / 2;
    if (iq4_nl_wide_side(weight_type, n, nb, path)) return 2 * (n / 32) * nb + n * nb / 2;
#else
    (void)weight_type; (void)n; (void)nb; (void)ra_is_b32;
#endif
    return 0;
}

int ra_matmul_side_layout(int weight_type, int64_t n, int64_t nb) {
#if defined(__x86_64__)
    if (q8_k_plus128_side(weight_type, n, nb, ra_kernel_path())) return RA_SIDE_Q8_K_PLUS128;
#else
    (void)n; (void)nb;
#endif
    return ra_vec_dot_type(weight_type);
}

void ra_matmul_side(int weight_type, const void *x, int64_t n, int64_t nb, float *side) {
#if defined(__x86_64__)
    const int source = ra_x8_source(weight_type), type = source >= 0 ? source : weight_type;
    if (q8_k_plus128_side(weight_type, n, nb, ra_kernel_path())) {
        ra_q8_k_plus128(x, n, nb, (uint8_t *)(void *)side);
        return;
    }
    if (iq4_xs_wide_side(type, n, nb, ra_kernel_path())) {
        ra_iq4_xs_side_avx2(x, n, nb, side);
        return;
    }
    if (iq4_nl_wide_side(type, n, nb, ra_kernel_path())) {   // Q8_0's
        ra_b32_side_avx2(RA_Q8_0, x, n, nb, side);
        ra_q8_0_widen_avx2(x, n, nb, (int16_t *)(void *)(side + 2 * (n / 32) * nb));
        return;
    }
    ra_b32_side_avx2(type, x, n, nb, side);
    if (q8_0_wide_side(type, n, nb, ra_kernel_path())) ra_q8_0_widen_avx2(x, n, nb, (int16_t *)(void *)(side + 2 * (n / 32) * nb));
#else
    (void)weight_type; (void)x; (void)n; (void)nb; (void)side;
#endif
}

#if defined(__x86_64__)
static int q6_k_vnni_own(const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t out_stride, int64_t r0, int64_t r1,
                         uint8_t *scratch, int64_t scratch_bytes) {
    return ra_matmul_q6_k_vnni(w, n, x, NULL, nb, out, out_stride, r0, r1, scratch, scratch_bytes);
}

// The panel batch kernel for `type` on `path` with this shape, and the scratch it needs in *bytes; NULL when
// there is none (the multi-row or single-row loops of ra_matmul_rows do the batch).
static ra_matmul_batch_fn batch_kernel(int type, int64_t n, int64_t nb, int path, int64_t *bytes) {
    // Every x86 path takes the quantized types' dots from the AVX2 table, and every batch kernel here sums in those
    // dots' order. The 256-bit panels of matmul_avx2_b32.c and matmul_avx2_k.c do the batches, except with VNNI,
    // where the 16-row vpdpbusd panels of dot_avx512_impl.h do every type (1.6-2.1x the prompt rate of the 256-bit
    // ones on a Xeon with AVX-512 VNNI; engine-notes.md, "AVX-512" and "Stop 27").
    if (!ra_path_is_x86_simd(path)) return NULL;
    const int vnni = path == RA_PATH_AVX512_VNNI;
    switch (type) {
    case RA_Q8_0:
    case RA_Q4_0:
    case RA_Q5_0:
    case RA_Q4_1:
    case RA_Q5_1:
        if (vnni && n % 64 == 0) {
            *bytes = RA_B32_VNNI_SCRATCH(n, nb);
            return type == RA_Q8_0 ? ra_matmul_q8_0_vnni : type == RA_Q4_0 ? ra_matmul_q4_0_vnni : type == RA_Q5_0 ? ra_matmul_q5_0_vnni
                 : type == RA_Q4_1 ? ra_matmul_q4_1_vnni : ra_matmul_q5_1_vnni;
        }
        *bytes = type == RA_Q8_0 ? RA_Q8_0_BATCH_SCRATCH(n, nb) : RA_B32_BATCH_SCRATCH(n, nb);
        if (path == RA_PATH_AVX2_VNNI)
            return type == RA_Q8_0 ? ra_matmul_q8_0_avxvnni : type == RA_Q4_0 ? ra_matmul_q4_0_avxvnni : type == RA_Q5_0 ? ra_matmul_q5_0_avxvnni
                 : type == RA_Q4_1 ? ra_matmul_q4_1_avxvnni : ra_matmul_q5_1_avxvnni;
        return type == RA_Q8_0 ? ra_matmul_q8_0_avx2 : type == RA_Q4_0 ? ra_matmul_q4_0_avx2 : type == RA_Q5_0 ? ra_matmul_q5_0_avx2
             : type == RA_Q4_1 ? ra_matmul_q4_1_avx2 : ra_matmul_q5_1_avx2;
    case RA_Q4_K:
        *bytes = RA_Q4_K_BATCH_SCRATCH(n, nb);
        if (n % 256 != 0) return NULL;
        return vnni ? ra_matmul_q4_k_vnni : path == RA_PATH_AVX2_VNNI ? ra_matmul_q4_k_avxvnni : ra_matmul_q4_k_avx2;
    case RA_Q5_K:
        *bytes = RA_Q4_K_BATCH_SCRATCH(n, nb);
        return n % 256 != 0 ? NULL : vnni ? ra_matmul_q5_k_vnni : path == RA_PATH_AVX2_VNNI ? ra_matmul_q5_k_avxvnni : ra_matmul_q5_k_avx2;
    case RA_Q6_K:
        // (256-bit panels: from 3 activation rows; for 2 the multi kernel is ~10% faster than packing Q6_K panels. The
        // VNNI panels here convert the activations themselves; given side data, ra_matmul_rows_side passes them it.)
        *bytes = vnni ? RA_Q6_K_VNNI_SCRATCH(n, nb) : RA_Q6_K_BATCH_SCRATCH(n);
        if (n % 256 != 0) return NULL;
        return vnni ? q6_k_vnni_own : nb >= 3 ? ra_matmul_q6_k_avx2 : NULL;
    default:
        return NULL;
    }
}
#endif

#if defined(__x86_64__)
// A batch of rows repacked at load (x8, of the file type source) on the AVX-512 VNNI path: the 16-row vpdpbusd panels
// packed straight from the groups, for the types that have them (the 32-element types, Q4_K, Q5_K, Q6_K, IQ4_XS), with
// the product's side data (the 32-element types' scales, Q6_K's and IQ4_XS's activations plus 128) or NULL.
// Returns 0 (nothing done) for the others and for rows that do not start and end at multiples of 8.
static int x8_batch_vnni(int x8, int source, const void *w, int64_t n, const void *x, const float *side, int64_t nb, float *out,
                         int64_t out_stride, int64_t r0, int64_t r1) {
    const int b32 = ra_is_b32(source), k4 = source == RA_Q4_K || source == RA_Q5_K;
    if (!(b32 && n % 64 == 0) && !k4 && source != RA_Q6_K && source != RA_IQ4_XS) return 0;
    const int64_t bytes = b32 ? RA_B32_VNNI_SCRATCH(n, nb) : k4 ? RA_Q4_K_BATCH_SCRATCH(n, nb)
                        : side ? RA_Q6_K_BATCH_SCRATCH(n) : RA_Q6_K_VNNI_SCRATCH(n, nb);
    uint8_t *scratch = ra_thread_scratch(bytes);
    if (!scratch) return 0;
    if (b32) return ra_matmul_b32_side_vnni(x8, w, n, x, side, nb, out, out_stride, r0, r1, scratch, bytes);
    if (k4) return ra_matmul_k4_x8_vnni(x8, w, n, x, nb, out, out_stride, r0, r1, scratch, bytes);
    return (source == RA_Q6_K ? ra_matmul_q6_k_x8_vnni : ra_matmul_iq4_xs_x8_vnni)(w, n, x, (const uint8_t *)(const void *)side, nb, out,
                                                                                  out_stride, r0, r1, scratch, bytes);
}
#endif

void ra_matmul_rows(int weight_type, const void *w, int64_t n, const void *x, int64_t nb,
                    float *out, int64_t out_stride, int64_t r0, int64_t r1) {
    ra_matmul_rows_side(weight_type, w, n, x, NULL, nb, out, out_stride, r0, r1);
}

void ra_matmul_rows_side(int weight_type, const void *w, int64_t n, const void *x, const float *side, int64_t nb,
                         float *out, int64_t out_stride, int64_t r0, int64_t r1) {
    const int source = ra_x8_source(weight_type);
#if defined(__x86_64__)
    // Side data of Q6_K's and IQ4_XS's VNNI panels (the activations plus 128) is theirs alone: where those decline, the
    // kernels below convert their own. (Batches only: decode's calls do not look up the path for it.)
    const int plus128 = nb > 1 && q8_k_plus128_side(weight_type, n, nb, ra_kernel_path());
#endif
    if (source >= 0) {
#if defined(__x86_64__)
        // batches on the paths that repack: panels packed straight from the repacked groups
        const int xpath = ra_kernel_path();
        if (nb > 1 && xpath == RA_PATH_AVX512_VNNI && x8_batch_vnni(weight_type, source, w, n, x, side, nb, out, out_stride, r0, r1))
            return;
        if (plus128) side = NULL;
        // The rest (Q3_K, Q2_K, IQ4_NL; every type on the other paths) on the 8-row panels packed from the groups: on a
        // Zen 4 EPYC, 16-row VNNI panels packed from Q3_K groups prompted no faster than those (engine-notes.md, "Stop 44");
        // on AVX-512 VNNI the Q3_K and Q2_K ones sum with 256-bit vpdpbusd ("Stop 45").
        if (nb > 1 && ra_x8_kernel(xpath)) {
            if (ra_is_b32(source)) {
                const int64_t bytes = source == RA_Q8_0 ? RA_Q8_0_BATCH_SCRATCH(n, nb) : RA_B32_BATCH_SCRATCH(n, nb);
                uint8_t *scratch = ra_thread_scratch(bytes);
                // (Q8_0's int16 panels read the widened activations after the scales, which the side data has only where
                // the VNNI panels do not take the product; else they convert their own, as with no side data)
                const float *s = source == RA_Q8_0 && !q8_0_wide_side(source, n, nb, xpath) ? NULL : side;
                if (scratch && ra_matmul_b32_x8_avx2(weight_type, w, n, x, s, nb, out, out_stride, r0, r1, scratch, bytes)) return;
            } else if (source == RA_Q6_K) {   // (the AVX2 panels on AVX2_VNNI too, as for the file's rows)
                const int64_t bytes = RA_Q6_K_BATCH_SCRATCH(n);
                uint8_t *scratch = ra_thread_scratch(bytes);
                if (scratch && ra_matmul_q6_k_x8_avx2(w, n, x, nb, out, out_stride, r0, r1, scratch, bytes)) return;
            } else if (source == RA_IQ4_NL) {
                const int64_t bytes = RA_Q8_0_BATCH_SCRATCH(n, nb);
                uint8_t *scratch = ra_thread_scratch(bytes);
                if (scratch && ra_matmul_iq4_nl_x8_avx2(w, n, x, side, nb, out, out_stride, r0, r1, scratch, bytes)) return;
            } else if (source == RA_IQ4_XS) {
                const int64_t bytes = RA_IQ4_XS_BATCH_SCRATCH(n, side ? 0 : nb);
                uint8_t *scratch = ra_thread_scratch(bytes);
                if (scratch && ra_matmul_iq4_xs_x8_avx2(w, n, x, side, nb, out, out_stride, r0, r1, scratch, bytes)) return;
            } else if (source == RA_Q3_K || source == RA_Q2_K) {   // (on the Q6_K panels; file rows have none)
                const int64_t bytes = RA_Q6_K_BATCH_SCRATCH(n);
                uint8_t *scratch = ra_thread_scratch(bytes);
                if (scratch && ra_matmul_k16_low_x8_avx2(source == RA_Q3_K, xpath == RA_PATH_AVX512_VNNI, w, n, x, nb, out, out_stride,
                                                         r0, r1, scratch, bytes))
                    return;
            } else {
                const int five = source == RA_Q5_K, vnni = xpath == RA_PATH_AVX2_VNNI;
                const int64_t bytes = RA_Q4_K_BATCH_SCRATCH(n, nb);
                uint8_t *scratch = ra_thread_scratch(bytes);
                const ra_matmul_batch_fn batch = five ? (vnni ? ra_matmul_q5_k_x8_avxvnni : ra_matmul_q5_k_x8_avx2)
                                                      : (vnni ? ra_matmul_q4_k_x8_avxvnni : ra_matmul_q4_k_x8_avx2);
                if (scratch && batch(w, n, x, nb, out, out_stride, r0, r1, scratch, bytes)) return;
            }
        }
#endif
        ra_x8_rows(weight_type, w, n, x, side, nb, out, out_stride, r0, r1);
        return;
    }
    ra_dot_fn dot;
    ra_dot_multi_fn multi;
    ra_dot_rows_fn rows;
    resolve(weight_type, &dot, &multi, &rows);
    const int64_t wrow = ra_row_bytes(weight_type, n);
    const int64_t xrow = ra_row_bytes(ra_vec_dot_type(weight_type), n);
    if (!dot || wrow < 0 || xrow < 0 || r1 <= r0 || nb <= 0) return;
    const uint8_t *W = w, *X = x;
    if (nb == 1) {
        // decode: stream the weights once
        if (rows) rows(n, W + r0 * wrow, wrow, r1 - r0, X, side, out + r0);
        else for (int64_t r = r0; r < r1; r++) out[r] = dot(n, W + r * wrow, X);
        return;
    }
#if defined(__x86_64__)
    int64_t bytes = 0;
    const int path = ra_kernel_path();
    if (plus128 && side) {   // (Q6_K's file rows)
        bytes = RA_Q6_K_BATCH_SCRATCH(n);
        uint8_t *scratch = ra_thread_scratch(bytes);
        if (scratch && ra_matmul_q6_k_vnni(w, n, x, (const uint8_t *)(const void *)side, nb, out, out_stride, r0, r1, scratch, bytes)) return;
    }
    if (plus128) side = NULL;
    if (iq4_xs_wide_side(weight_type, n, nb, path)) {
        bytes = RA_IQ4_XS_BATCH_SCRATCH(n, side ? 0 : nb);
        uint8_t *scratch = ra_thread_scratch(bytes);
        if (scratch && ra_matmul_iq4_xs_avx2(w, n, x, side, nb, out, out_stride, r0, r1, scratch, bytes)) return;
    }
    if (iq4_nl_wide_side(weight_type, n, nb, path)) {
        bytes = RA_Q8_0_BATCH_SCRATCH(n, nb);
        uint8_t *scratch = ra_thread_scratch(bytes);
        if (scratch && ra_matmul_iq4_nl_avx2(w, n, x, side, nb, out, out_stride, r0, r1, scratch, bytes)) return;
    }
    const ra_matmul_batch_fn batch = batch_kernel(weight_type, n, nb, path, &bytes);
    if (batch) {
        uint8_t *scratch = ra_thread_scratch(bytes);
        if (scratch && side && b32_takes_side(weight_type, path) &&
            (b32_vnni_kernel(batch) ? ra_matmul_b32_side_vnni : path == RA_PATH_AVX2_VNNI ? ra_matmul_b32_side_avxvnni
                                                                                           : ra_matmul_b32_side_avx2)(
                weight_type, w, n, x, side, nb, out, out_stride, r0, r1, scratch, bytes)) return;
        if (scratch && batch(w, n, x, nb, out, out_stride, r0, r1, scratch, bytes)) return;
    }
#else
    (void)side;
#endif
    if (multi) {
        // One weight row against 4 activation rows at a time: each weight block is decoded once per
        // group. Row tiles of ~256 KB stay in L2 while every group of activations passes over them.
        enum { NX = 4 };
        int64_t tile = (int64_t)(256 * 1024) / (wrow > 0 ? wrow : 1);
        if (tile < 4) tile = 4;
        for (int64_t rt = r0; rt < r1; rt += tile) {
            const int64_t re = rt + tile < r1 ? rt + tile : r1;
            for (int64_t b0 = 0; b0 < nb; b0 += NX) {
                const int nx = (int)(nb - b0 < NX ? nb - b0 : NX);
                for (int64_t r = rt; r < re; r++)
                    multi(n, W + r * wrow, X + b0 * xrow, xrow, nx, out + b0 * out_stride + r, out_stride);
            }
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
