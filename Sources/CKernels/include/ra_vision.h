// Float operations of the vision encoder (see ops_vision.c): layer norm, GELU, row softmax and head gathers for
// full (non-causal) attention. Like ra_ops.h, a NULL pool runs on the caller.
#ifndef RUNANYWHERE_RA_VISION_H
#define RUNANYWHERE_RA_VISION_H
#include <stdint.h>
#include "ra_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Layer norm of `rows` rows of n floats: y = (x - mean) / sqrt(var + eps) * w + b, mean and variance summed in
/// double as ggml_norm does; w and b may be NULL (1 and 0). x and y may be the same buffer.
void ra_layer_norm(ra_pool *pool, const float *x, const float *w, const float *b, float *y, int64_t n, int64_t rows,
                   float eps);

/// x = gelu(x) in place for n values, the tanh form looked up in a table of F16 inputs like ggml's CPU backend:
/// x <= -10 gives 0, x >= 10 gives x, else the F16 rounding of x indexes gelu values stored as F16.
void ra_gelu(ra_pool *pool, float *x, int64_t n);

/// Each of `rows` rows of n floats becomes softmax(scale * row), max subtracted, sum in double.
void ra_softmax_rows(ra_pool *pool, float *x, int64_t n, int64_t rows, float scale);

/// Copies head `head` (head_dim floats at head * head_dim) of `rows` rows of row_stride floats into a dense
/// rows x head_dim matrix (transpose = 0) or head_dim x rows matrix (transpose = 1).
void ra_gather_head(const float *x, int64_t row_stride, int64_t rows, int64_t head, int64_t head_dim, float *out,
                    int transpose);

/// y[r * n + i] += x[i] for `rows` rows (adds one row, e.g. a bias, to every row), in parallel.
void ra_add_row(ra_pool *pool, float *y, const float *x, int64_t n, int64_t rows);

#ifdef __cplusplus
}
#endif
#endif
