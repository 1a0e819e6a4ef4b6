// Attention over the F16 KV cache (ra_attention in ra_ops.h): q·k scores, softmax, weighted sum of V.
//
// Prompt batches: one work item = a block of tokens × one kv head (the block's query rows share every K/V row
// read). Decode (one token) is split over the cache as well (flash-decoding): a kv head's positions are cut into
// chunks of RA_ATTN_CHUNK, so two threads share even a single long head (Gemma 3 270M has one kv head). Pass 1
// computes every chunk's scores, their max and the sum of their exponentials; pass 2 turns them into the
// probabilities of the whole row (the global max and sum from the chunks' own), rounds them to F16 like ggml and
// sums the chunk's V rows with them; the chunks' partial sums are then added in chunk order. The chunks depend
// on the cache length only, never on the number of threads, so results stay bit-identical across thread counts.
//
// x86-64: the AVX2/FMA/F16C kernels of ops_attention_avx2.c (with a vector exp) when the calling thread's kernel path
// allows them, and on the avx512 paths the 512-bit q·k and V kernels of ops_attention_avx512.c (both from
// attention_kernels_impl.h); aarch64: the NEON ones of ops_neon.c; otherwise scalar C.
#include "ra_ops.h"
#include "ckernels.h"
#include "kernels_internal.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__)
#define RA_X86 1
#elif defined(__aarch64__)
#include "neon_internal.h"
#define RA_ARM 1
#endif

/// Cache positions per work item of a split decode.
#define RA_ATTN_CHUNK 256

static int64_t ra_attn_chunks(int64_t n) { return n <= 0 ? 1 : (n + RA_ATTN_CHUNK - 1) / RA_ATTN_CHUNK; }

/// Tokens of one prompt work item for a group size: their query rows (tokens × group) share each K/V row read, in
/// passes of up to 4 rows. At most 8 rows, or the group when it is larger, except a group of 3: 4 tokens, 12 rows in
/// three full passes, where 2 tokens (6 rows: a pass of 4 and one of 2) read the cache 4/3 times as often. The
/// scratch per thread (ra_attention_scratch_floats) is sized for max(12, heads) rows, which covers every case.
static int64_t ra_attn_block(int64_t group) {
    if (group == 3) return 4;
    return group >= 8 ? 1 : 8 / group;
}

int64_t ra_attention_scratch_floats(int nth, int64_t n_ctx, int64_t head_dim, int64_t n_head) {
    if (nth < 1) nth = 1;
    const int64_t rows = n_head > 12 ? n_head : 12;   // query rows of one work item: at most max(12, group)
    // Per thread: scores, q and output of one item. A split decode uses the same room for the scores of every
    // head (shared) and q per thread, plus per chunk and head a max and a sum (doubles) and a partial output.
    return (int64_t)nth * (rows * (n_ctx + 2 * head_dim) + 64) + n_head * ra_attn_chunks(n_ctx) * (head_dim + 4) + 64;
}

/// Halves from one kv head's rows to the next's.
static inline int64_t ra_attn_head_stride(const ra_attention_params *p) {
    return p->kv_head_stride > 0 ? p->kv_head_stride : p->head_dim;
}

// MARK: - Scalar kernels

/// Scores of `group` query rows (q: rows of hd) against n_kv K rows kv_stride apart: scores[h * ss + j].
static void ra_attn_scores_scalar(const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                                  int64_t hd, float scale, float *scores, int64_t ss) {
    for (int64_t j = 0; j < n_kv; j++) {
        const uint16_t *row = k + j * kv_stride;
        for (int64_t h = 0; h < group; h++) {
            float sum = 0.0f;
            for (int64_t i = 0; i < hd; i++) sum += ra_ops_f16_to_f32(row[i]) * q[h * hd + i];
            scores[h * ss + j] = sum * scale;
        }
    }
}

/// out[h] = sum_j w[h * ws + j] * V[j] for `group` rows (out is overwritten).
static void ra_attn_values_scalar(const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                                  int64_t group, int64_t hd, float *out) {
    for (int64_t i = 0; i < group * hd; i++) out[i] = 0.0f;
    for (int64_t j = 0; j < n_kv; j++) {
        const uint16_t *row = v + j * kv_stride;
        for (int64_t h = 0; h < group; h++) {
            const float a = w[h * ws + j];
            for (int64_t i = 0; i < hd; i++) out[h * hd + i] += a * ra_ops_f16_to_f32(row[i]);
        }
    }
}

// MARK: - Kernel choice

#ifdef RA_X86
/// The F16 attention loads use AVX2/FMA/F16C when the calling thread's kernel path allows them (so the scalar
/// path, selected by the feature masks, is scalar here too).
static int ra_has_avx2_f16c(void) { return ra_path_is_x86_simd(ra_kernel_path()); }
#endif

/// Which kernels a call runs: SIMD ones when the thread's path has them and head_dim % 8 == 0 (on x86: 2, the AVX-512
/// q·k and V kernels, on the avx512 paths when head_dim % 16 == 0; 1, the AVX2 ones; the softmax steps are AVX2 in both).
static int ra_attn_simd(int64_t head_dim) {
#ifdef RA_X86
    if (!ra_has_avx2_f16c() || head_dim % 8 != 0) return 0;
    const int path = ra_kernel_path();
    return (path == RA_PATH_AVX512 || path == RA_PATH_AVX512_VNNI) && head_dim % 16 == 0 ? 2 : 1;
#elif defined(RA_ARM)
    return ra_neon_ops_enabled() && head_dim % 8 == 0;
#else
    (void)head_dim;
    return 0;
#endif
}

static void ra_attn_scores(int simd, const uint16_t *k, int64_t kv_stride, int64_t n_kv, const float *q, int64_t group,
                           int64_t hd, float scale, float *scores, int64_t ss) {
#ifdef RA_X86
    if (simd == 2) { ra_attn_scores_avx512(k, kv_stride, n_kv, q, group, hd, scale, scores, ss); return; }
    if (simd) { ra_attn_scores_avx2(k, kv_stride, n_kv, q, group, hd, scale, scores, ss); return; }
#elif defined(RA_ARM)
    if (simd) { ra_neon_attn_scores(k, kv_stride, n_kv, q, group, hd, scale, scores, ss); return; }
#endif
    (void)simd;
    ra_attn_scores_scalar(k, kv_stride, n_kv, q, group, hd, scale, scores, ss);
}

static void ra_attn_values(int simd, const uint16_t *v, int64_t kv_stride, int64_t n_kv, const float *w, int64_t ws,
                           int64_t group, int64_t hd, float *out) {
#ifdef RA_X86
    if (simd == 2) { ra_attn_values_avx512(v, kv_stride, n_kv, w, ws, group, hd, out); return; }
    if (simd) { ra_attn_values_avx2(v, kv_stride, n_kv, w, ws, group, hd, out); return; }
#elif defined(RA_ARM)
    if (simd) {
        for (int64_t i = 0; i < group * hd; i++) out[i] = 0.0f;
        ra_neon_attn_values(v, kv_stride, n_kv, w, ws, group, hd, out);
        return;
    }
#endif
    (void)simd;
    ra_attn_values_scalar(v, kv_stride, n_kv, w, ws, group, hd, out);
}

/// x[i] = e^(x[i] - mx) over n values; the sum of the results in double.
static double ra_attn_exp_sub(int simd, float *x, int64_t n, float mx) {
#ifdef RA_X86
    if (simd) return ra_exp_sub_avx2(x, n, mx);
#elif defined(RA_ARM)
    if (simd) return ra_neon_exp_sub(x, n, mx);
#endif
    (void)simd;
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
        x[j] = expf(x[j] - mx);
        sum += (double)x[j];
    }
    return sum;
}

/// x[i] = round_to_f16(x[i] * f): probabilities in F16, as ggml.
static void ra_attn_scale_round(int simd, float *x, int64_t n, float f) {
#ifdef RA_X86
    if (simd) { ra_scale_round_f16_avx2(x, x, n, f); return; }
#endif
    for (int64_t j = 0; j < n; j++) x[j] *= f;
#if defined(RA_ARM)
    if (simd) { ra_neon_round_f16(x, n); return; }
#endif
    (void)simd;
    for (int64_t j = 0; j < n; j++) x[j] = ra_ops_f16_to_f32(ra_ops_f32_to_f16(x[j]));
}

/// n floats of q rounded to F16 precision (q·k multiplies F16 q, as ggml).
static void ra_attn_round_q(int simd, const float *q, float *qh, int64_t n) {
#ifdef RA_X86
    if (simd) { ra_scale_round_f16_avx2(q, qh, n, 1.0f); return; }
#endif
    (void)simd;
    for (int64_t i = 0; i < n; i++) qh[i] = ra_ops_f16_to_f32(ra_ops_f32_to_f16(q[i]));
}

static float ra_attn_max(int simd, const float *x, int64_t n) {
#ifdef RA_X86
    if (simd) return ra_max_avx2(x, n);
#endif
    (void)simd;
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
    return mx;
}

// MARK: - Prompt batches

typedef struct {
    const ra_attention_params *p;
    int simd;
    int64_t group;          // query heads per kv head
    int64_t block;          // tokens per work item
    int64_t stride;         // scratch floats per thread
} ra_attn_ctx;

/// One work item = a block of up to `block` consecutive tokens and one kv head: the block's tokens × the query
/// heads of the group form R query rows that share every K/V row read (R = block × group: ra_attn_block).
static void ra_attn_task(void *arg, int64_t lo, int64_t hi, int ith) {
    const ra_attn_ctx *c = (const ra_attn_ctx *)arg;
    const ra_attention_params *p = c->p;
    const int64_t hd = p->head_dim, group = c->group;
    const int64_t n_ctx = p->pos0 + p->n_tokens;
    const int64_t rows_max = c->block * group;
    float *scores = p->scratch + (int64_t)ith * c->stride;      // rows × n_ctx
    float *qh = scores + rows_max * n_ctx;                       // rows × hd
    float *acc = qh + rows_max * hd;                             // rows × hd
    for (int64_t item = lo; item < hi; item++) {
        const int64_t tb = item / p->n_head_kv, g = item % p->n_head_kv;
        const int64_t t0 = tb * c->block;
        const int64_t nb = p->n_tokens - t0 < c->block ? p->n_tokens - t0 : c->block;
        const int64_t rows = nb * group;
        const int64_t n_kv_max = p->pos0 + t0 + nb;              // causal: the last token's positions
        // Sliding window: the first token of the block sees the earliest position; later rows mask more.
        int64_t j0 = p->window > 0 ? p->pos0 + t0 - p->window + 1 : 0;
        if (j0 < 0) j0 = 0;
        for (int64_t b = 0; b < nb; b++) {
            ra_attn_round_q(c->simd, p->q + (t0 + b) * p->q_stride + g * group * hd, qh + b * group * hd, group * hd);
        }
        const uint16_t *kbase = p->k + g * ra_attn_head_stride(p) + j0 * p->kv_stride;
        const uint16_t *vbase = p->v + g * ra_attn_head_stride(p) + j0 * p->kv_stride;
        float *s0 = scores + j0;                                   // scores of position j at s0[r * n_ctx + j - j0]
        const int64_t n_span = n_kv_max - j0;
        ra_attn_scores(c->simd, kbase, p->kv_stride, n_span, qh, rows, hd, p->scale, s0, n_ctx);
        for (int64_t r = 0; r < rows; r++) {
            const int64_t pos = p->pos0 + t0 + r / group;
            const int64_t n_kv = pos + 1;                          // positions <= this row's token
            int64_t lo = p->window > 0 ? pos - p->window + 1 : 0;  // and inside its window
            if (lo < j0) lo = j0;
            float *s = scores + r * n_ctx;
            const double sum = ra_attn_exp_sub(c->simd, s + lo, n_kv - lo, ra_attn_max(c->simd, s + lo, n_kv - lo));
            ra_attn_scale_round(c->simd, s + lo, n_kv - lo, (float)(1.0 / sum));
            for (int64_t j = j0; j < lo; j++) s[j] = 0.0f;          // masked: left the window
            for (int64_t j = n_kv; j < n_kv_max; j++) s[j] = 0.0f;  // masked: later positions of the block
        }
        ra_attn_values(c->simd, vbase, p->kv_stride, n_span, s0, n_ctx, rows, hd, acc);
        for (int64_t b = 0; b < nb; b++) {
            memcpy(p->out + (t0 + b) * p->out_stride + g * group * hd, acc + b * group * hd, (size_t)(group * hd) * sizeof(float));
        }
    }
}

// MARK: - Decode split over the cache

typedef struct {
    const ra_attention_params *p;
    int simd;
    int64_t group;          // query heads per kv head
    int64_t sub;            // query heads per work item (group, or 1 when the group is split across the threads)
    int64_t j0, n_kv;       // positions [j0, n_kv) are read
    int64_t chunks;         // chunks of RA_ATTN_CHUNK positions from j0
    double *stats;          // [head][chunk]: max and sum of e^(s - max) of the chunk's scores
    float *partial;         // [chunk][head][head_dim]: the chunk's share of the output (chunks > 1)
    float *scores;          // [head][n_kv]: scores, then e^(s - chunk max), then probabilities
    float *qh;              // per thread: the group's q rows rounded to F16
} ra_attn_split_ctx;

/// An item's kv head g, its first query head h0 and head count, and its chunk ch. Items are (kv head, heads of the
/// group in runs of `sub`, chunk): a head's scores and values are the same numbers in any run (the kernels treat each
/// head of a group alone), so splitting a group changes no bits.
typedef struct { int64_t g, h0, heads, ch; } ra_attn_item;

static ra_attn_item ra_attn_split_item(const ra_attn_split_ctx *c, int64_t item) {
    const int64_t parts = c->group / c->sub, rest = item / c->chunks;
    ra_attn_item it;
    it.ch = item % c->chunks;
    it.g = rest / parts;
    it.h0 = it.g * c->group + (rest % parts) * c->sub;
    it.heads = c->sub;
    return it;
}

/// Pass 1 of an item: scores of its heads, then e^(s - chunk max) in place, max and sum kept.
static void ra_attn_split_scores(const ra_attn_split_ctx *c, int64_t item, int ith) {
    const ra_attention_params *p = c->p;
    const ra_attn_item it = ra_attn_split_item(c, item);
    const int64_t hd = p->head_dim, g = it.g, ch = it.ch;
    const int64_t a = c->j0 + ch * RA_ATTN_CHUNK, n = (c->n_kv - a < RA_ATTN_CHUNK ? c->n_kv - a : RA_ATTN_CHUNK);
    float *qh = c->qh + (int64_t)ith * c->group * hd;
    ra_attn_round_q(c->simd, p->q + it.h0 * hd, qh, it.heads * hd);
    float *s = c->scores + it.h0 * c->n_kv + a;
    ra_attn_scores(c->simd, p->k + g * ra_attn_head_stride(p) + a * p->kv_stride, p->kv_stride, n, qh, it.heads, hd, p->scale, s, c->n_kv);
    for (int64_t h = 0; h < it.heads; h++) {
        double *st = c->stats + ((it.h0 + h) * c->chunks + ch) * 2;
        st[0] = ra_attn_max(c->simd, s + h * c->n_kv, n);
        st[1] = ra_attn_exp_sub(c->simd, s + h * c->n_kv, n, (float)st[0]);
    }
}

/// Pass 2 of item (g, c): the chunk's probabilities from the row's max and sum over all chunks, rounded to F16, and
/// their weighted sum of the chunk's V rows (into the output when there is one chunk, else the chunk's partial).
static void ra_attn_split_values(const ra_attn_split_ctx *c, int64_t item) {
    const ra_attention_params *p = c->p;
    const ra_attn_item it = ra_attn_split_item(c, item);
    const int64_t hd = p->head_dim, g = it.g, ch = it.ch;
    const int64_t a = c->j0 + ch * RA_ATTN_CHUNK, n = (c->n_kv - a < RA_ATTN_CHUNK ? c->n_kv - a : RA_ATTN_CHUNK);
    float *s = c->scores + it.h0 * c->n_kv + a;
    for (int64_t h = 0; h < it.heads; h++) {
        const double *st = c->stats + (it.h0 + h) * c->chunks * 2;
        double mx = st[0], sum = 0.0;
        for (int64_t i = 1; i < c->chunks; i++) mx = st[2 * i] > mx ? st[2 * i] : mx;
        for (int64_t i = 0; i < c->chunks; i++) sum += st[2 * i + 1] * exp(st[2 * i] - mx);
        ra_attn_scale_round(c->simd, s + h * c->n_kv, n, (float)(exp(st[2 * ch] - mx) / sum));
    }
    float *out = c->chunks == 1 ? p->out + it.h0 * hd : c->partial + (ch * p->n_head + it.h0) * hd;
    ra_attn_values(c->simd, p->v + g * ra_attn_head_stride(p) + a * p->kv_stride, p->kv_stride, n, s, c->n_kv, it.heads, hd, out);
}

static void ra_attn_split_pass1(void *arg, int64_t lo, int64_t hi, int ith) {
    const ra_attn_split_ctx *c = (const ra_attn_split_ctx *)arg;
    for (int64_t item = lo; item < hi; item++) {
        ra_attn_split_scores(c, item, ith);
        if (c->chunks == 1) ra_attn_split_values(c, item);        // nothing to wait for: one pass
    }
}

static void ra_attn_split_pass2(void *arg, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    for (int64_t item = lo; item < hi; item++) ra_attn_split_values((const ra_attn_split_ctx *)arg, item);
}

/// Attention of one token (n_tokens == 1) split over kv heads and chunks of the cache.
static void ra_attention_decode(ra_pool *pool, const ra_attention_params *p, int simd) {
    ra_attn_split_ctx c;
    c.p = p;
    c.simd = simd;
    c.group = p->n_head / p->n_head_kv;
    c.n_kv = p->pos0 + 1;
    c.j0 = p->window > 0 && p->pos0 - p->window + 1 > 0 ? p->pos0 - p->window + 1 : 0;
    c.chunks = ra_attn_chunks(c.n_kv - c.j0);
    const int64_t n_head = p->n_head, hd = p->head_dim;
    c.stats = (double *)(void *)p->scratch;                         // scratch floats are page aligned
    c.partial = p->scratch + n_head * c.chunks * 4;
    c.scores = c.partial + (c.chunks > 1 ? c.chunks * n_head * hd : 0);
    c.qh = c.scores + n_head * c.n_kv;
    // Small problems (decode over a short cache) are not worth waking the pool. When the pool runs it and there are
    // fewer kv heads × chunks than two per thread (Gemma 3 270M: one kv head), each query head is an item of its own.
    const int parallel = n_head * (c.n_kv - c.j0) * hd >= 32768;
    c.sub = parallel && p->n_head_kv * c.chunks < 2 * (int64_t)ra_pool_size(pool) ? 1 : c.group;
    const int64_t items = p->n_head_kv * (c.group / c.sub) * c.chunks;
    const int64_t chunk = parallel ? 1 : items;
    ra_pool_for(pool, items, chunk, ra_attn_split_pass1, &c);
    if (c.chunks == 1) return;
    ra_pool_for(pool, items, chunk, ra_attn_split_pass2, &c);
    // The chunks' shares, added in chunk order.
    for (int64_t h = 0; h < n_head; h++) {
        float *out = p->out + h * hd;
        memcpy(out, c.partial + h * hd, (size_t)hd * sizeof(float));
        for (int64_t ch = 1; ch < c.chunks; ch++) {
            const float *part = c.partial + (ch * n_head + h) * hd;
            for (int64_t i = 0; i < hd; i++) out[i] += part[i];
        }
    }
}

void ra_attention(ra_pool *pool, const ra_attention_params *p) {
    if (p->n_tokens <= 0 || p->n_head <= 0 || p->n_head_kv <= 0 || p->n_head % p->n_head_kv != 0) return;
    const int simd = ra_attn_simd(p->head_dim);
    if (p->n_tokens == 1) {
        ra_attention_decode(pool, p, simd);
        return;
    }
    ra_attn_ctx c;
    c.p = p;
    c.simd = simd;
    c.group = p->n_head / p->n_head_kv;
    c.block = ra_attn_block(c.group);
    const int64_t n_ctx = p->pos0 + p->n_tokens;
    c.stride = c.block * c.group * (n_ctx + 2 * p->head_dim) + 64;
    // Small problems are not worth waking the pool.
    const int64_t work = p->n_tokens * p->n_head * n_ctx * p->head_dim;
    const int64_t items = (p->n_tokens + c.block - 1) / c.block * p->n_head_kv;
    ra_pool_for(pool, items, work < 32768 ? items : 1, ra_attn_task, &c);
}
