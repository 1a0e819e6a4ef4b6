// Parallel glue between the thread pool and the kernels of ckernels.h: activation quantization and
// row-block matrix products split over the pool threads (dynamic chunks, so a thread slowed down by
// another process does not hold the others up).
#include "ra_ops.h"
#include "ckernels.h"

#include <stdatomic.h>

typedef struct {
    int type; const float *x; int64_t n, rows; char *dst; int64_t row_bytes;
} ra_quant_ctx;

static void ra_quant_task(void *p, int ith, int nth) {
    const ra_quant_ctx *c = (const ra_quant_ctx *)p;
    for (int64_t r = ith; r < c->rows; r += nth) {
        ra_quantize_row(c->type, c->x + r * c->n, c->dst + r * c->row_bytes, c->n);
    }
}

void ra_quantize_rows_par(ra_pool *pool, int type, const float *x, int64_t n, int64_t rows, void *dst) {
    ra_quant_ctx c = { type, x, n, rows, (char *)dst, ra_row_bytes(type, n) };
    if (rows == 1) ra_quant_task(&c, 0, 1);
    else ra_pool_run(pool, ra_quant_task, &c);
}

typedef struct {
    int type; const void *w; int64_t n, rows; const void *x; int64_t nb; float *out; int64_t out_stride;
    int64_t chunk;
    _Atomic int64_t next;
} ra_mm_ctx;

static void ra_mm_task(void *p, int ith, int nth) {
    (void)ith; (void)nth;
    ra_mm_ctx *c = (ra_mm_ctx *)p;
    for (;;) {
        const int64_t r0 = atomic_fetch_add_explicit(&c->next, c->chunk, memory_order_relaxed);
        if (r0 >= c->rows) break;
        const int64_t r1 = r0 + c->chunk < c->rows ? r0 + c->chunk : c->rows;
        ra_matmul_rows(c->type, c->w, c->n, c->x, c->nb, c->out, c->out_stride, r0, r1);
    }
}

void ra_matmul_par(ra_pool *pool, int weight_type, const void *w, int64_t n, int64_t rows,
                   const void *x, int64_t nb, float *out, int64_t out_stride) {
    if (rows <= 0 || nb <= 0) return;
    const int nth = ra_pool_size(pool);
    // Several chunks per thread for balance; rows in multiples of 16 (kernels tile rows).
    int64_t chunk = rows / ((int64_t)nth * (nb == 1 ? 8 : 4));
    if (nb > 1 && chunk > 64) chunk = 64;
    chunk = (chunk + 15) & ~(int64_t)15;
    if (chunk < 16) chunk = 16;
    ra_mm_ctx c;
    c.type = weight_type; c.w = w; c.n = n; c.rows = rows; c.x = x; c.nb = nb; c.out = out;
    c.out_stride = out_stride; c.chunk = chunk;
    atomic_init(&c.next, 0);
    if (nth == 1 || rows <= chunk) ra_mm_task(&c, 0, 1);
    else ra_pool_run(pool, ra_mm_task, &c);
}
