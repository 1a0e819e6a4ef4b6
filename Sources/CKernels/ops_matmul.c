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
    if (rows * n < 16384) ra_quant_task(&c, 0, 1);
    else ra_pool_run(pool, ra_quant_task, &c);
}

enum { RA_MAX_JOBS = 8 };

typedef struct {
    const ra_matmul_job *jobs;
    int count;
    int64_t chunk[RA_MAX_JOBS];      // rows per chunk of each job
    int64_t first[RA_MAX_JOBS + 1];  // index of each job's first chunk; first[count] = total chunks
    _Atomic int64_t next;
} ra_mm_ctx;

static void ra_mm_task(void *p, int ith, int nth) {
    (void)ith; (void)nth;
    ra_mm_ctx *c = (ra_mm_ctx *)p;
    int j = 0;
    for (;;) {
        const int64_t k = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed);
        if (k >= c->first[c->count]) break;
        while (k >= c->first[j + 1]) j++;            // chunks are taken in increasing order
        const ra_matmul_job *m = &c->jobs[j];
        const int64_t r0 = (k - c->first[j]) * c->chunk[j];
        const int64_t r1 = r0 + c->chunk[j] < m->rows ? r0 + c->chunk[j] : m->rows;
        ra_matmul_rows(m->weight_type, m->w, m->n, m->x, m->nb, m->out, m->out_stride, r0, r1);
    }
}

/// Rows per chunk: several chunks per thread for balance, multiples of 16 rows; with a batch, at most 64
/// rows so a chunk of weights stays in cache while every activation row passes over it.
static int64_t ra_chunk_rows(const ra_matmul_job *m, int nth) {
    int64_t chunk = m->rows / ((int64_t)nth * (m->nb == 1 ? 8 : 4));
    if (m->nb > 1 && chunk > 64) chunk = 64;
    chunk = (chunk + 15) & ~(int64_t)15;
    return chunk < 16 ? 16 : chunk;
}

void ra_matmul_jobs(ra_pool *pool, const ra_matmul_job *jobs, int count) {
    const int nth = ra_pool_size(pool);
    while (count > 0) {
        const int n = count < RA_MAX_JOBS ? count : RA_MAX_JOBS;
        ra_mm_ctx c;
        c.jobs = jobs;
        c.count = n;
        c.first[0] = 0;
        int64_t work = 0;
        for (int i = 0; i < n; i++) {
            const int64_t rows = jobs[i].rows > 0 && jobs[i].nb > 0 ? jobs[i].rows : 0;
            c.chunk[i] = ra_chunk_rows(&jobs[i], nth);
            c.first[i + 1] = c.first[i] + (rows + c.chunk[i] - 1) / c.chunk[i];
            work += rows * jobs[i].nb * jobs[i].n;
        }
        atomic_init(&c.next, 0);
        if (nth == 1 || c.first[n] <= 1 || work < 16384) ra_mm_task(&c, 0, 1);
        else ra_pool_run(pool, ra_mm_task, &c);
        jobs += n;
        count -= n;
    }
}

void ra_matmul_par(ra_pool *pool, int weight_type, const void *w, int64_t n, int64_t rows,
                   const void *x, int64_t nb, float *out, int64_t out_stride) {
    const ra_matmul_job job = { weight_type, w, n, rows, x, nb, out, out_stride };
    ra_matmul_jobs(pool, &job, 1);
}
