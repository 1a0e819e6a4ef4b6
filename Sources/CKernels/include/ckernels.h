// C kernels of the native GGUF engine: ggml block formats, activation quantization,
// quantized dot products and row-block matrix products with run-time CPU dispatch.
//
// Every block format is byte-exact with ggml/GGUF. Weight rows are multiplied with activation
// rows in the format ra_vec_dot_type(weight_type) (the same pairing as ggml's CPU backend), which
// ra_quantize_row produces with ggml's rounding.
//
// Paths: a portable scalar reference (always compiled), AVX2+FMA+F16C and AVX-512 (F/BW/VL, with
// and without VNNI) on x86-64, NEON (with and without the ARMv8.2 dot product) on aarch64, picked at
// run time from the CPU's features; ra_set_cpu_features_mask restricts the choice (tests compare every
// path with the scalar one).
//
// Files: quants.c (formats, conversions, quantize/dequantize), dot_scalar.c, dot_avx2.c + dot_avx2_k.c (dots, rows,
// multi-row kernels) and matmul_avx2_b32.c + matmul_avx2_k.c (batch panels), dot_avx512.c and dot_avx512vnni.c (both
// built from dot_avx512_impl.h), dot_neon.c and dot_neon_k.c (+ ops_neon.c for quantization and float ops on aarch64),
// x8.c (Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, the IQ4 and the 32-element types repacked at load; their decode kernels in
// x8_rows_impl.h, built as x8_rows_avx2.c and x8_rows_vnni.c), dispatch.c (CPU features, ra_vec_dot, ra_matmul_rows).
// All functions are thread-safe; weight and activation rows need only the alignment of their block (2 bytes; 4 for Q8_K
// and F32), except repacked rows (32 bytes, ra_x8_repack).
#ifndef RUNANYWHERE_CKERNELS_H
#define RUNANYWHERE_CKERNELS_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// ggml tensor type ids (the same numbers as GGMLType and the GGUF file format).
enum {
    RA_F32 = 0, RA_F16 = 1, RA_Q4_0 = 2, RA_Q4_1 = 3, RA_Q5_0 = 6, RA_Q5_1 = 7, RA_Q8_0 = 8, RA_Q8_1 = 9,
    RA_Q2_K = 10, RA_Q3_K = 11, RA_Q4_K = 12, RA_Q5_K = 13, RA_Q6_K = 14, RA_Q8_K = 15, RA_IQ4_NL = 20, RA_IQ4_XS = 23,
    RA_BF16 = 30
};

/// CPU feature bits reported by ra_cpu_features and accepted by ra_set_cpu_features_mask.
enum {
    RA_CPU_AVX2 = 1 << 0,
    RA_CPU_FMA = 1 << 1,
    RA_CPU_F16C = 1 << 2,
    RA_CPU_AVX512F = 1 << 3,
    RA_CPU_AVX512BW = 1 << 4,
    RA_CPU_AVX512VL = 1 << 5,
    RA_CPU_AVX512VNNI = 1 << 6,
    RA_CPU_NEON = 1 << 7,
    RA_CPU_DOTPROD = 1 << 8,     // ARMv8.2 dot product (SDOT/UDOT), reported on aarch64 only
    RA_CPU_AVXVNNI = 1 << 9      // AVX-VNNI: 256-bit vpdpbusd without AVX-512 (Intel since Alder Lake)
};

/// Kernel paths reported by ra_kernel_path.
/// x86-64: AVX2 < AVX2_VNNI (AVX-VNNI, chosen only without AVX-512) < AVX512 < AVX512_VNNI; aarch64: NEON (plain
/// ARMv8) < NEON_DOTPROD. Each path falls back to the lower ones of its architecture, then scalar, for the types it has
/// no kernel of. (The values are not in that order: AVX2_VNNI came last.)
enum { RA_PATH_SCALAR = 0, RA_PATH_AVX2 = 1, RA_PATH_AVX512 = 2, RA_PATH_AVX512_VNNI = 3,
       RA_PATH_NEON = 4, RA_PATH_NEON_DOTPROD = 5, RA_PATH_AVX2_VNNI = 6 };

/// 1 when the type's blocks can be decoded and multiplied by these kernels, else 0.
int ra_type_supported(int type);
/// Elements per block of a type (0 for an unknown type).
int64_t ra_type_block_size(int type);
/// Bytes per block of a type (0 for an unknown type).
int64_t ra_type_block_bytes(int type);
/// Bytes of a row of n elements; n must be a multiple of the block size (else -1; 0 for an unknown type).
int64_t ra_row_bytes(int type, int64_t n);
/// Activation format a weight type is multiplied with, as ggml's CPU backend does:
/// Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants, F16 for F16, BF16 for BF16,
/// F32 for F32; -1 for an unsupported type.
int ra_vec_dot_type(int weight_type);

/// 1 when ra_quantize_row can write the type (F32, F16, BF16, Q8_0, Q8_1, Q8_K, Q4_0, Q4_1, Q5_0, Q5_1).
int ra_quantize_supported(int type);
/// Quantizes n floats into dst (ra_row_bytes(type, n) bytes) with ggml's rounding. Activation formats
/// (Q8_0/Q8_1 as ggml's x86 CPU backend: scale amax/127, multiplier 127/amax, round half to even;
/// Q8_K as ggml's reference) and the simple weight formats Q4_0/Q4_1/Q5_0/Q5_1 (ggml's reference).
/// Does nothing for a type ra_quantize_supported rejects or an n that is not a multiple of the block size.
void ra_quantize_row(int type, const float *x, void *dst, int64_t n);
/// Decodes n elements of a row of the given type into floats (n a multiple of the block size).
void ra_dequantize_row(int type, const void *src, float *dst, int64_t n);

/// Dot product of a weight row and an activation row in ra_vec_dot_type(weight_type); n elements.
/// Activation rows must come from ra_quantize_row (their int8 values never hold -128).
float ra_vec_dot(int weight_type, int64_t n, const void *w_row, const void *x_row);
/// A dot-product function: n elements of a weight row and an activation row.
typedef float (*ra_vec_dot_fn)(int64_t n, const void *w_row, const void *x_row);
/// The function ra_vec_dot uses now for a weight type (NULL for an unsupported type). Calling it
/// directly skips the per-call dispatch in hot loops; n must be a multiple of the block size. It
/// stays valid after ra_set_cpu_features_mask, but does not follow a later change of the mask.
ra_vec_dot_fn ra_vec_dot_function(int weight_type);
/// out[b * out_stride + r] = dot(row r of W, row b of X) for r in [r0, r1), b in [0, nb).
/// W holds rows of n elements (ra_row_bytes(weight_type, n) apart), X holds nb activation rows
/// (ra_row_bytes(ra_vec_dot_type(weight_type), n) apart).
void ra_matmul_rows(int weight_type, const void *w, int64_t n, const void *x, int64_t nb,
                    float *out, int64_t out_stride, int64_t r0, int64_t r1);

/// Q4_K, Q5_K, Q6_K, Q3_K, Q2_K, IQ4_XS, IQ4_NL, Q4_0, Q5_0, Q4_1, Q5_1 and Q8_0 weights repacked for decode (not GGUF types): groups of 8 rows interleaved so
/// that the 8 lanes of a 256-bit vector are 8 rows, made by ra_x8_repack and multiplied by ra_matmul_rows /
/// ra_matmul_jobs under these type ids with the file type's activations (ra_vec_dot_type). Every path gives the bits of
/// the same rows in the file's type. ra_row_bytes gives a row's share of a group (148 / 180 bytes a super-block of Q4_K /
/// Q5_K, 114 of Q3_K, 138 of IQ4_XS; 210 of Q6_K and 84 of Q2_K as in the file; 18, 22, 20, 24, 34, 18 (IQ4_NL) a block of 32, as in the file); the
/// rows of a product, and any range of them, start at a multiple of 8.
enum { RA_Q4_K_X8 = 112, RA_Q5_K_X8 = 113, RA_Q4_1_X8 = 114, RA_Q4_0_X8 = 115, RA_Q5_0_X8 = 116, RA_Q5_1_X8 = 117,
       RA_Q8_0_X8 = 118, RA_Q6_K_X8 = 119, RA_Q3_K_X8 = 120, RA_Q2_K_X8 = 121, RA_IQ4_XS_X8 = 122, RA_IQ4_NL_X8 = 123 };
/// Bytes of one (super-)block of a group of 8 repacked rows (8 × 148, 8 × 180, 8 × 114, 8 × 138; 8 × the file's block for the others).
#define RA_Q4_K_X8_GROUP_BYTES 1184
#define RA_Q5_K_X8_GROUP_BYTES 1440
#define RA_Q4_1_X8_GROUP_BYTES 160
#define RA_Q4_0_X8_GROUP_BYTES 144
#define RA_Q5_0_X8_GROUP_BYTES 176
#define RA_Q5_1_X8_GROUP_BYTES 192
#define RA_Q8_0_X8_GROUP_BYTES 272
#define RA_Q6_K_X8_GROUP_BYTES 1680
#define RA_Q3_K_X8_GROUP_BYTES 912
#define RA_Q2_K_X8_GROUP_BYTES 672
#define RA_IQ4_XS_X8_GROUP_BYTES 1104
#define RA_IQ4_NL_X8_GROUP_BYTES 144
/// The longest rows ra_x8_repack takes.
#define RA_X8_MAX_COLUMNS 32768
/// The repacked type of `type` (RA_Q4_K_X8 for RA_Q4_K, ..., RA_Q8_0_X8 for RA_Q8_0), or -1 for a type that has none.
int ra_x8_type(int type);
/// Bytes of `rows` rows of n elements of `type` (RA_Q4_K, RA_Q5_K, RA_Q6_K, RA_Q3_K, RA_Q2_K, RA_IQ4_XS, RA_IQ4_NL, RA_Q4_0, RA_Q5_0, RA_Q4_1, RA_Q5_1 or RA_Q8_0) once repacked, or -1 when they cannot be
/// (another type, n not a multiple of the type's block or above RA_X8_MAX_COLUMNS, rows not a positive multiple of 8).
int64_t ra_x8_bytes(int type, int64_t n, int64_t rows);
/// Repacks `rows` rows of n elements of `type` (as in the file) into dst (ra_x8_bytes(type, n, rows) bytes, 32-byte
/// aligned). Returns 1, or 0 (nothing written) for a type or shape ra_x8_bytes rejects.
int ra_x8_repack(int type, const void *src, int64_t n, int64_t rows, void *dst);
/// Row r of a repacked matrix w (type x8, n elements a row) as n floats, the values ra_dequantize_row gives for the
/// same row in the file's type (a token embedding that is also the repacked output matrix). Writes nothing for a type
/// or n that ra_x8_bytes rejects or a negative r; r must be below the matrix's rows.
void ra_x8_dequantize_row(int x8, const void *w, int64_t n, int64_t r, float *dst);
/// 1 when `path` (RA_PATH_*) multiplies repacked rows with its own decode kernels (every x86 path with AVX2: AVX2,
/// AVX2_VNNI, AVX512, AVX512_VNNI); on the other paths repacked rows are converted back chunk by chunk, which only costs
/// time.
int ra_x8_kernel(int path);
/// Bytes ahead of their work that the decode kernels of repacked rows of `type` (the file's type, RA_Q4_K ...) prefetch
/// the weights (0: none, the hardware prefetcher alone). Chosen from the CPU at first use: 4096 (the one-row kernels'
/// distance) for every type on AMD Zen 1 and Zen+ cores, whose hardware prefetcher leaves a group's stream short; on
/// Zen 4 4096 for Q3_K and Q2_K, whose groups take the most instructions a byte, and 0 for the others (the prefetches
/// slowed them from memory); 0 elsewhere. x8.c says what was measured. Never changes a result.
int ra_x8_prefetch(int type);
/// Overrides ra_x8_prefetch process-wide, for every type: bytes >= 0 (rounded down to whole 64-byte lines, at most
/// 65536), or -1 for the CPU's choice again. For benchmarks that compare both on one machine (engine-bench --x8-prefetch,
/// x8_ab).
void ra_set_x8_prefetch(int bytes);

/// Bit set (RA_CPU_*) of the SIMD features this CPU and OS offer.
int ra_cpu_features(void);
/// Restricts dispatch to the features in mask (and those the CPU has); -1 = all. Process-wide.
void ra_set_cpu_features_mask(int mask);
/// Restricts dispatch on the calling thread only (on top of the process-wide mask); -1 = no restriction.
/// A thread pool run (ra_pool_run, ra_pool_for) carries the caller's mask to its workers for that run, so a
/// forward pass on one thread runs one path throughout while other threads keep theirs (tests compare paths
/// side by side this way).
void ra_set_thread_features_mask(int mask);
/// The calling thread's own mask (-1 when none is set).
int ra_thread_features_mask(void);
/// The path (RA_PATH_*) ra_vec_dot and ra_matmul_rows use now, on the calling thread.
int ra_kernel_path(void);
/// Name of a path: "scalar", "avx2", "avx2-vnni", "avx512", "avx512-vnni", "neon", "neon-dotprod".
const char *ra_kernel_path_name(int path);
/// The features a path needs, as a mask for ra_set_cpu_features_mask / ra_set_thread_features_mask that selects it on
/// a CPU that has them (ra_kernel_path picks the path back from the mask); -1 for a path of another architecture.
int ra_kernel_path_mask(int path);
/// The path of this architecture with that name (ra_kernel_path_name), or -1.
int ra_kernel_path_named(const char *name);

/// IEEE half to float (exact; NaN stays NaN with its payload, quiet bit set).
float ra_fp16_to_fp32(uint16_t h);
/// Float to IEEE half, rounding to nearest even; overflow gives inf, NaN stays NaN (as F16C does).
uint16_t ra_fp32_to_fp16(float f);
/// bfloat16 to float (exact).
float ra_bf16_to_fp32(uint16_t h);
/// Float to bfloat16, rounding to nearest even; NaN stays a quiet NaN (as ggml does).
uint16_t ra_fp32_to_bf16(float f);

#ifdef __cplusplus
}
#endif
#endif
