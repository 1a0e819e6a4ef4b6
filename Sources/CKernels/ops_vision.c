// Float operations of the vision encoder: layer norm, table GELU, scaled row softmax and head gathers.
// Numerics follow ggml's CPU backend (double sums in norms and softmax, GELU through an F16 table).
#include "ra_vision.h"
#include "kernels_internal.h"

#include <math.h>
#include <pthread.h>

static inline int64_t rv_chunk(ra_pool *pool, int64_t n) {
    int64_t c = n / (4 * (int64_t)ra_pool_size(pool));
    return c < 1 ? 1 : c;
}

// MARK: - Layer norm

typedef struct { const float *x, *w, *b; float *y; int64_t n; float eps; } rv_norm_ctx;

static void rv_norm_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const rv_norm_ctx *c = (const rv_norm_ctx *)p;
    const int64_t n = c->n;
    for (int64_t r = lo; r < hi; r++) {
        const float *x = c->x + r * n;
        float *y = c->y + r * n;
        double sum = 0;
        for (int64_t i = 0; i < n; i++) sum += x[i];
        const float mean = (float)(sum / (double)n);
        double sq = 0;
        for (int64_t i = 0; i < n; i++) {
            const float d = x[i] - mean;
            y[i] = d;
            sq += (double)(d * d);
        }
        const float scale = 1.0f / sqrtf((float)(sq / (double)n) + c->eps);
        for (int64_t i = 0; i < n; i++) {
            float v = y[i] * scale;
            if (c->w) v *= c->w[i];
            if (c->b) v += c->b[i];
            y[i] = v;
        }
    }
}

void ra_layer_norm(ra_pool *pool, const float *x, const float *w, const float *b, float *y, int64_t n, int64_t rows,
                   float eps) {
    rv_norm_ctx c = { x, w, b, y, n, eps };
    ra_pool_for(pool, rows, rv_chunk(pool, rows), rv_norm_task, &c);
}

// MARK: - GELU

typedef struct { float *x; } rv_gelu_ctx;

static void rv_gelu_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    float *x = ((rv_gelu_ctx *)p)->x;
    for (int64_t i = lo; i < hi; i++) {
        const float v = x[i];
        if (v < 10.0f) x[i] = ra_gelu_lookup(v);
    }
}

void ra_gelu(ra_pool *pool, float *x, int64_t n) {
    ra_gelu_table_ready();
    rv_gelu_ctx c = { x };
    ra_pool_for(pool, n, n < 65536 ? n : 16384, rv_gelu_task, &c);
}

// MARK: - Softmax

typedef struct { float *x; int64_t n; float scale; } rv_softmax_ctx;

static void rv_softmax_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const rv_softmax_ctx *c = (const rv_softmax_ctx *)p;
    for (int64_t r = lo; r < hi; r++) {
        float *x = c->x + r * c->n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < c->n; i++) {
            x[i] *= c->scale;
            if (x[i] > mx) mx = x[i];
        }
        double sum = 0;
        for (int64_t i = 0; i < c->n; i++) {
            const float e = expf(x[i] - mx);
            x[i] = e;
            sum += (double)e;
        }
        const float inv = (float)(1.0 / sum);
        for (int64_t i = 0; i < c->n; i++) x[i] *= inv;
    }
}

void ra_softmax_rows(ra_pool *pool, float *x, int64_t n, int64_t rows, float scale) {
    rv_softmax_ctx c = { x, n, scale };
    ra_pool_for(pool, rows, rv_chunk(pool, rows), rv_softmax_task, &c);
}

// MARK: - Gathers and adds

void ra_gather_head(const float *x, int64_t row_stride, int64_t rows, int64_t head, int64_t head_dim, float *out,
                    int transpose) {
    for (int64_t r = 0; r < rows; r++) {
        const float *src = x + r * row_stride + head * head_dim;
        if (transpose) {
            for (int64_t d = 0; d < head_dim; d++) out[d * rows + r] = src[d];
        } else {
            for (int64_t d = 0; d < head_dim; d++) out[r * head_dim + d] = src[d];
        }
    }
}

typedef struct { float *y; const float *x; int64_t n; } rv_add_ctx;

static void rv_add_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const rv_add_ctx *c = (const rv_add_ctx *)p;
    for (int64_t r = lo; r < hi; r++) {
        float *y = c->y + r * c->n;
        for (int64_t i = 0; i < c->n; i++) y[i] += c->x[i];
    }
}

void ra_add_row(ra_pool *pool, float *y, const float *x, int64_t n, int64_t rows) {
    rv_add_ctx c = { y, x, n };
    ra_pool_for(pool, rows, rv_chunk(pool, rows), rv_add_task, &c);
}
