// Thread pool and float operations of the native transformer (see pool.c, ops.c).
// The quantized dot products and matmul kernels live in ckernels.h.
#ifndef RUNANYWHERE_RA_OPS_H
#define RUNANYWHERE_RA_OPS_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Thread pool

/// A fixed set of worker threads that live as long as the pool.
typedef struct ra_pool ra_pool;

/// A task run by every thread of a pool: `ith` in [0, nth).
typedef void (*ra_pool_fn)(void *ctx, int ith, int nth);

/// Creates a pool of `n_threads` threads in total, the caller included (so n_threads - 1 workers are started).
/// Returns NULL when threads cannot be created. n_threads < 1 is treated as 1.
ra_pool *ra_pool_create(int n_threads);

/// Stops and joins the workers and frees the pool. NULL is ignored.
void ra_pool_destroy(ra_pool *pool);

/// The number of threads `ra_pool_run` uses (caller included). 1 for NULL.
int ra_pool_size(const ra_pool *pool);

/// Runs fn(ctx, ith, nth) on every thread (the caller is ith 0) and returns when all are done.
/// Not re-entrant: one run at a time per pool. A NULL pool runs fn(ctx, 0, 1) on the caller.
void ra_pool_run(ra_pool *pool, ra_pool_fn fn, void *ctx);

/// A slice of a parallel loop: items [i0, i1), run by thread `ith` (use ith only to pick per-thread scratch).
typedef void (*ra_range_fn)(void *ctx, int64_t i0, int64_t i1, int ith);

/// Parallel loop over n items in chunks of `chunk` that the caller and the workers claim as they go.
/// Workers join only while the loop is open: when one is not scheduled in time the others (at least the
/// caller) do its share, so a busy machine does not stall the loop. Returns when all items are done.
void ra_pool_for(ra_pool *pool, int64_t n, int64_t chunk, ra_range_fn fn, void *ctx);

// MARK: - Half precision (own conversions, round to nearest even)

/// IEEE binary16 -> binary32.
float ra_ops_f16_to_f32(uint16_t h);
/// binary32 -> IEEE binary16, round to nearest even.
uint16_t ra_ops_f32_to_f16(float f);
/// Converts n floats to binary16.
void ra_ops_f32_to_f16_row(const float *x, uint16_t *y, int64_t n);

// MARK: - Float operations (pool may be NULL: single thread)

/// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w, for `rows` rows of n (w may be NULL: no weight).
/// Row strides are n. x and y may be the same buffer.
void ra_rms_norm(ra_pool *pool, const float *x, const float *w, float *y, int64_t n, int64_t rows, float eps);

/// In-place RMSNorm of every head: x holds `rows` rows of `n_heads` heads of `head_dim` floats,
/// consecutive rows `row_stride` floats apart; each head is normalised and multiplied by w (head_dim values).
void ra_rms_norm_heads(ra_pool *pool, float *x, const float *w, int64_t rows, int64_t row_stride,
                       int64_t n_heads, int64_t head_dim, float eps);

/// Rotary position embedding in place. x: `rows` rows (one per token), each `row_stride` floats apart,
/// holding n_heads heads of head_dim. Token t is at position pos[t]. The first n_dims dimensions of each
/// head are rotated; neox = 0: pairs (2i, 2i+1) (llama), neox = 1: pairs (i, i + n_dims/2) (qwen2/3).
/// theta_i = pos * freq_scale * freq_base^(-2i/n_dims) / freq_factors[i] (freq_factors may be NULL: all 1;
/// else n_dims/2 values, as the rope_freqs.weight tensor of Llama 3.1+).
void ra_rope(ra_pool *pool, float *x, int64_t rows, int64_t row_stride, int64_t n_heads, int64_t head_dim,
             const int32_t *pos, int n_dims, float freq_base, float freq_scale, const float *freq_factors, int neox);

/// The angles of ra_rope for `rows` positions, computed once for every head and matrix that rotates by them:
/// table[t * d .. t * d + d/2) = cos and [t * d + d/2 .. t * d + d) = sin of position pos[t]'s angles, where d is
/// n_dims as ra_rope uses it (at most head_dim and 1024, even). The table holds rows × n_dims floats.
void ra_rope_table(const int32_t *pos, int64_t rows, int n_dims, int64_t head_dim, float freq_base, float freq_scale,
                   const float *freq_factors, float *table);

/// ra_rope with the angles of ra_rope_table (same n_dims and head_dim): the same results without computing them again.
void ra_rope_cached(ra_pool *pool, float *x, int64_t rows, int64_t row_stride, int64_t n_heads, int64_t head_dim,
                    int n_dims, const float *table, int neox);

/// x = softmax(x) over n values.
void ra_softmax(float *x, int64_t n);

/// gate[i] = silu(gate[i]) * up[i] for n values (rows of a batch are contiguous: pass rows * n).
void ra_silu_mul(ra_pool *pool, float *gate, const float *up, int64_t n);

/// gate[i] = gelu(gate[i]) * up[i] for n values, with GELU's tanh approximation evaluated like ggml's CPU
/// backend: the input is rounded to F16, the GELU of that value is rounded to F16 (ggml reads it from a table
/// built that way), inputs <= -10 give 0 and inputs >= 10 pass through.
void ra_gelu_mul(ra_pool *pool, float *gate, const float *up, int64_t n);

/// Rounds GELU (tanh approximation) like ra_gelu_mul, for one value.
float ra_gelu_f16(float x);

/// x[i] *= s for n values.
void ra_scale(ra_pool *pool, float *x, float s, int64_t n);

/// x[i] = cap * tanh(x[i] / cap) for n values (logit soft-capping; computed as ggml: x * (1/cap), tanh, * cap).
void ra_softcap(ra_pool *pool, float *x, float cap, int64_t n);

/// y[i] += x[i] for n values.
void ra_add(ra_pool *pool, float *y, const float *x, int64_t n);

/// y[r * n + i] += b[i] for `rows` rows of n (bias add).
void ra_add_bias(float *y, const float *b, int64_t n, int64_t rows);

/// The row-wise steps before a product, fused into one pass over `rows` rows of n floats (in parallel over the rows):
/// if add is not NULL, x[r] += add[r] (add[r] first RMSNorm'd in place times add_w when add_w is not NULL); then
/// y[r] = RMSNorm(x[r]) times w (w may be NULL); then, when qtype >= 0, y[r] quantized to qtype into qdst (rows of
/// ra_row_bytes(qtype, n)). The bits of ra_rms_norm, ra_add and ra_quantize_rows_par run one after the other.
void ra_add_rms_norm_quant(ra_pool *pool, float *x, float *add, const float *add_w, const float *w, float *y, int64_t n,
                           int64_t rows, float eps, int qtype, void *qdst);

/// gate[r] = silu(gate[r]) * up[r] (gelu != 0: GELU as ra_gelu_mul) for `rows` rows of n, then, when qtype >= 0,
/// each row quantized to qtype into qdst (in parallel over the rows; the bits of ra_silu_mul / ra_gelu_mul and
/// ra_quantize_rows_par run one after the other).
void ra_glu_quant(ra_pool *pool, float *gate, const float *up, int64_t n, int64_t rows, int gelu, int qtype, void *qdst);

/// Stores `rows` rows of n floats (source stride src_stride floats) into an F16 cache (dest stride dst_stride halves).
void ra_store_f16_rows(const float *src, int64_t src_stride, uint16_t *dst, int64_t dst_stride, int64_t n, int64_t rows);

/// Multi-head causal attention against an F16 KV cache (grouped-query: query head h reads kv head h / (n_head / n_head_kv)).
/// Computed like ggml's CPU path without flash attention: q is rounded to F16 for q·k, the softmax is
/// computed in F32 on scale * q·k (masked to positions <= the token's), and the probabilities are rounded to F16
/// before the weighted sum of V.
typedef struct {
    const float *q;          ///< n_tokens rows, row stride q_stride floats, n_head heads of head_dim each
    int64_t q_stride;
    const uint16_t *k;       ///< cache: position p of kv head g at k + p * kv_stride + g * kv_head_stride
    const uint16_t *v;       ///< cache, same layout as k
    int64_t kv_stride;
    float *out;              ///< n_tokens rows, row stride out_stride, n_head heads of head_dim
    int64_t out_stride;
    int64_t n_tokens;
    int64_t pos0;            ///< position of token 0; token t attends to positions [0, pos0 + t]
    int64_t window;          ///< > 0: sliding window, token at position p attends only to (p - window, p]; 0: all
    int64_t n_head;
    int64_t n_head_kv;
    int64_t head_dim;
    float scale;             ///< usually 1/sqrt(head_dim)
    float *scratch;          ///< ra_attention_scratch_floats(...) floats
    int64_t kv_head_stride;  ///< halves from kv head g's rows to g + 1's; 0: head_dim (heads side by side in a position's row)
} ra_attention_params;

/// Floats of scratch ra_attention needs for a pool of nth threads, a cache of n_ctx positions and n_head query heads.
int64_t ra_attention_scratch_floats(int nth, int64_t n_ctx, int64_t head_dim, int64_t n_head);

/// Runs attention for every (token, head) pair, split over the pool. One token (decode) is split over the kv heads
/// and over chunks of 256 cache positions: the chunks' maxima and sums make the row's, the probabilities are those of
/// the whole row (rounded to F16), and the chunks' shares of the output are added in order. The split depends on the
/// cache length only, so any pool size gives the same bits.
void ra_attention(ra_pool *pool, const ra_attention_params *p);

/// Quantizes `rows` rows of n floats (stride n) into type `type` (rows of ra_row_bytes(type, n) bytes), in parallel.
void ra_quantize_rows_par(ra_pool *pool, int type, const float *x, int64_t n, int64_t rows, void *dst);

/// out[b * out_stride + r] = dot(row r of W, row b of X) for r in [0, rows), b in [0, nb): ra_matmul_rows split
/// over the pool by row ranges. X rows are in ra_vec_dot_type(weight_type), ra_row_bytes(that type, n) apart.
void ra_matmul_par(ra_pool *pool, int weight_type, const void *w, int64_t n, int64_t rows,
                   const void *x, int64_t nb, float *out, int64_t out_stride);

/// One matrix product of a ra_matmul_jobs call: out[b * out_stride + r] = dot(row r of w, row b of x).
typedef struct {
    int weight_type;
    const void *w;
    int64_t n;
    int64_t rows;
    const void *x;
    int64_t nb;
    float *out;
    int64_t out_stride;
} ra_matmul_job;

/// Runs several independent matrix products (e.g. q, k and v of one layer) in one pass of the pool,
/// rows of all jobs shared out in chunks: one synchronisation instead of one per product.
void ra_matmul_jobs(ra_pool *pool, const ra_matmul_job *jobs, int count);

#ifdef __cplusplus
}
#endif
#endif
