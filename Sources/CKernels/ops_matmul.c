// Parallel glue between the thread pool and the kernels of ckernels.h: activation quantization and
// row-block matrix products split over the pool threads (dynamic chunks, so a thread slowed down by
// another process does not hold the others up).
#include "ra_ops.h"
#include "ckernels.h"
#include "kernels_internal.h"

#include <stdatomic.h>

typedef struct {
    int type; const float *x; int64_t n, rows; char *dst; int64_t row_bytes;
} ra_quant_ctx;

static void ra_quant_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_quant_ctx *c = (const ra_quant_ctx *)p;
    for (int64_t r = lo; r < hi; r++) {
        ra_quantize_row(c->type, c->x + r * c->n, c->dst + r * c->row_bytes, c->n);
    }
}

void ra_quantize_rows_par(ra_pool *pool, int type, const float *x, int64_t n, int64_t rows, void *dst) {
    ra_quant_ctx c = { type, x, n, rows, (char *)dst, ra_row_bytes(type, n) };
    ra_pool_for(pool, rows, rows * n < 16384 ? rows : 1, ra_quant_task, &c);
}

enum { RA_MAX_JOBS = 8 };

typedef struct {
    const ra_matmul_job *jobs;
    int count;
    int64_t chunk[RA_MAX_JOBS];      // rows per chunk of each job
    int64_t first[RA_MAX_JOBS + 1];  // index of each job's first chunk; first[count] = total chunks
    const float *side[RA_MAX_JOBS];  // each job's activation scales as floats (ra_matmul_side), or NULL
} ra_mm_ctx;

static void ra_mm_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_mm_ctx *c = (const ra_mm_ctx *)p;
    int j = 0;
    for (int64_t k = lo; k < hi; k++) {
        while (k >= c->first[j + 1]) j++;
        const ra_matmul_job *m = &c->jobs[j];
        const int64_t r0 = (k - c->first[j]) * c->chunk[j];
        const int64_t r1 = r0 + c->chunk[j] < m->rows ? r0 + c->chunk[j] : m->rows;
        ra_matmul_rows_side(m->weight_type, m->w, m->n, m->x, c->side[j], m->nb, m->out, m->out_stride, r0, r1);
    }
}

/// Rows per chunk (multiples of 16). A batch: about 64 chunks per product and at most 64 rows, so a chunk of weights
/// stays in cache while every activation row passes over it. Decode (one activation row): about 8 chunks per thread.
/// Fewer, longer runs of rows keep the weight prefetch of the row·vector kernels running (each chunk starts cold):
/// on the 2-core VM, 16 instead of 64 chunks per product decoded qwen3-0.6b Q4_K_M ~10% faster (stream benchmark,
/// bench/kernels/stream.sh), and 8 per thread still lets a thread that loses its CPU hold the others up by only
/// about an eighth of its share.
static int64_t ra_chunk_rows(const ra_matmul_job *m, int threads) {
    int64_t chunk;
    if (m->nb > 1) {
        chunk = m->rows / 64;
        if (chunk > 64) chunk = 64;
    } else {
        chunk = m->rows / (8 * (int64_t)(threads > 0 ? threads : 1));
    }
    chunk = (chunk + 15) & ~(int64_t)15;
    return chunk < 16 ? 16 : chunk;
}

/// The activation scales of every job that takes them, converted once for all its chunks (jobs with the same
/// activations share them) into the calling thread's buffer; NULL where a job takes none or on allocation failure.
static void ra_mm_sides(ra_mm_ctx *c) {
    int64_t total = 0, need[RA_MAX_JOBS];
    for (int i = 0; i < c->count; i++) {
        need[i] = ra_matmul_side_floats(c->jobs[i].weight_type, c->jobs[i].n, c->jobs[i].nb);
        total += need[i];
        c->side[i] = NULL;
    }
    float *buf = total > 0 ? ra_thread_side_buffer(total + 4) : NULL;   // (4 floats that kernels may read past the end)
    if (!buf) return;
    for (int i = 0; i < c->count; i++) {
        if (need[i] == 0) continue;
        const ra_matmul_job *m = &c->jobs[i];
        const int min = ra_vec_dot_type(m->weight_type) == RA_Q8_1;
        for (int k = 0; k < i && !c->side[i]; k++) {
            const ra_matmul_job *o = &c->jobs[k];
            if (c->side[k] && o->x == m->x && o->n == m->n && o->nb == m->nb && (ra_vec_dot_type(o->weight_type) == RA_Q8_1) == min)
                c->side[i] = c->side[k];
        }
        if (c->side[i]) continue;
        ra_matmul_side(m->weight_type, m->x, m->n, m->nb, buf);
        c->side[i] = buf;
        buf += need[i];
    }
}

void ra_matmul_jobs(ra_pool *pool, const ra_matmul_job *jobs, int count) {
    while (count > 0) {
        const int n = count < RA_MAX_JOBS ? count : RA_MAX_JOBS;
        ra_mm_ctx c;
        c.jobs = jobs;
        c.count = n;
        c.first[0] = 0;
        int64_t work = 0;
        for (int i = 0; i < n; i++) {
            const int64_t rows = jobs[i].rows > 0 && jobs[i].nb > 0 ? jobs[i].rows : 0;
            c.chunk[i] = ra_chunk_rows(&jobs[i], ra_pool_size(pool));
            c.first[i + 1] = c.first[i] + (rows + c.chunk[i] - 1) / c.chunk[i];
            work += rows * jobs[i].nb * jobs[i].n;
        }
        ra_mm_sides(&c);
        ra_pool_for(pool, c.first[n], work < 16384 ? c.first[n] : 1, ra_mm_task, &c);
        jobs += n;
        count -= n;
    }
}

void ra_matmul_par(ra_pool *pool, int weight_type, const void *w, int64_t n, int64_t rows,
                   const void *x, int64_t nb, float *out, int64_t out_stride) {
    const ra_matmul_job job = { weight_type, w, n, rows, x, nb, out, out_stride };
    ra_matmul_jobs(pool, &job, 1);
}
