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

enum { RA_MAX_SEGMENTS = 64 };

/// Most chunks of a decode dispatch (ra_decode_chunks).
enum { RA_MAX_DECODE_CHUNKS = 1024 };

/// One chunk of a decode dispatch: rows [r0, r1) of job `job`.
typedef struct { int32_t job, r0, r1; } ra_mm_chunk;

/// A segment's claim counter, on a cache line of its own: the threads claim chunks of their own segments at the same
/// time, and counters sharing a line made each claim wait for the line to come back from the other core.
typedef struct { _Alignas(64) _Atomic int64_t next; } ra_mm_counter;

typedef struct {
    const ra_matmul_job *jobs;
    int count;
    int64_t chunk[RA_MAX_JOBS];      // rows per chunk of each job
    int64_t first[RA_MAX_JOBS + 1];  // index of each job's first chunk; first[count] = total chunks
    const float *side[RA_MAX_JOBS];  // each job's activation scales as floats (ra_matmul_side), or NULL
    int segments;                    // the chunks split into this many runs of consecutive chunks (batches, decode tables)
    int64_t end[RA_MAX_SEGMENTS];    // each segment's end (chunk index)
    ra_mm_counter next[RA_MAX_SEGMENTS];     // each segment's next unclaimed chunk
    const ra_mm_chunk *table;        // decode: the chunks, in claim order (then chunk/first are unused)
} ra_mm_ctx;

static void ra_mm_task(void *p, int64_t lo, int64_t hi, int ith) {
    (void)ith;
    const ra_mm_ctx *c = (const ra_mm_ctx *)p;
    int j = 0;
    for (int64_t k = lo; k < hi; k++) {
        int64_t r0, r1;
        if (c->table) {
            j = c->table[k].job;
            r0 = c->table[k].r0;
            r1 = c->table[k].r1;
        } else {
            while (k >= c->first[j + 1]) j++;
            r0 = (k - c->first[j]) * c->chunk[j];
            r1 = r0 + c->chunk[j] < c->jobs[j].rows ? r0 + c->chunk[j] : c->jobs[j].rows;
        }
        const ra_matmul_job *m = &c->jobs[j];
        ra_matmul_rows_side(m->weight_type, m->w, m->n, m->x, c->side[j], m->nb, m->out, m->out_stride, r0, r1);
    }
}

static int64_t ra_mm_segment_end(const ra_mm_ctx *c, int s) { return c->end[s]; }

/// Batches and decode tables: segment s (the item a thread claimed) is a run of consecutive chunks, taken in order, so a
/// thread's next chunk is most often the rows right after the ones it multiplies (the Q4_1 panels and the rows kernels'
/// line prefetches run into those, matmul_avx2_b32.c, dot_avx2.c);
/// then the thread helps with the other segments, chunk by chunk, as a thread that lost its CPU would hold them up.
static void ra_mm_segment_task(void *p, int64_t lo, int64_t hi, int ith) {
    ra_mm_ctx *c = (ra_mm_ctx *)p;
    for (int64_t s0 = lo; s0 < hi; s0++) {
        for (int i = 0; i < c->segments; i++) {
            const int s = (int)((s0 + i) % c->segments);
            const int64_t end = ra_mm_segment_end(c, s);
            for (;;) {
                const int64_t k = atomic_fetch_add_explicit(&c->next[s].next, 1, memory_order_relaxed);
                if (k >= end) break;
                ra_mm_task(c, k, k + 1, ith);
            }
        }
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

/// A decode chunk is at most this many bytes of weights (a vocabulary-sized output matrix would otherwise be cut into
/// 16 chunks of megabytes, and the thread that takes the last one finishes it alone), and the tail chunks at least
/// RA_DECODE_TAIL_MIN_BYTES (and 16 rows).
#define RA_DECODE_CHUNK_MAX_BYTES (1 << 20)
#define RA_DECODE_TAIL_MIN_BYTES (8 << 10)

static int64_t ra_round16(int64_t r) { return (r + 15) & ~(int64_t)15; }

/// Batches and decode tables are split into one segment a thread (at most RA_MAX_SEGMENTS).
static int ra_segment_count(int threads) { return threads < RA_MAX_SEGMENTS ? threads : RA_MAX_SEGMENTS; }

/// Where segment s of a decode table of `total` bytes ends: ra_decode_chunks shrinks its chunks toward these cuts and
/// ra_matmul_jobs cuts the table at the first chunk boundary past them, so the two agree by construction.
static int64_t ra_segment_cut(int64_t total, int64_t segments, int64_t s) { return total / segments * (s + 1); }

/// The chunks of a decode dispatch (every job has one activation row), in the order the threads claim them: each job in
/// ra_chunk_rows' chunks (at most RA_DECODE_CHUNK_MAX_BYTES), except that near the end of each thread's segment (the
/// table cut into `threads` runs of equal bytes, ra_matmul_jobs) a chunk is at most the bytes left in the segment /
/// (2 × threads), so the chunks shrink toward each segment's end (guided scheduling): whichever thread finishes its own
/// segment first and helps with the other's, the two finish within a small chunk of each other. (Shrinking only
/// toward the end of the whole dispatch left the first segment's last chunks full-sized: on SmolLM2 decode the caller
/// spent ~5% of a token waiting for the worker to leave a product.) Every row's dot is computed alone, so the split
/// changes no result. Returns the number of chunks, or 0 when they would not fit in `cap`.
static int64_t ra_decode_chunks(const ra_matmul_job *jobs, int count, int threads, ra_mm_chunk *table, int64_t cap) {
    int64_t total = 0, wrow[RA_MAX_JOBS];
    for (int i = 0; i < count; i++) {
        wrow[i] = ra_row_bytes(jobs[i].weight_type, jobs[i].n);
        if (wrow[i] <= 0 || jobs[i].rows > INT32_MAX) return 0;
        total += jobs[i].rows * wrow[i];
    }
    const int64_t segments = ra_segment_count(threads);
    int64_t k = 0, done = 0;
    for (int i = 0; i < count; i++) {
        int64_t normal = ra_chunk_rows(&jobs[i], threads);
        const int64_t most = (RA_DECODE_CHUNK_MAX_BYTES / wrow[i]) & ~(int64_t)15;
        if (most >= 16 && normal > most) normal = most;
        int64_t least = ra_round16(RA_DECODE_TAIL_MIN_BYTES / wrow[i] + 1);
        if (least > normal) least = normal;
        for (int64_t r = 0; r < jobs[i].rows;) {
            const int64_t segment_end = ra_segment_cut(total, segments, done * segments / total);   // the next cut after `done`
            const int64_t left = (segment_end > done ? segment_end : total) - done;
            int64_t c = ra_round16(left / (2 * (int64_t)threads * wrow[i]) + 1);
            if (c > normal) c = normal;
            if (c < least) c = least;
            if (c > jobs[i].rows - r) c = jobs[i].rows - r;
            if (k == cap) return 0;
            table[k++] = (ra_mm_chunk){ i, (int32_t)r, (int32_t)(r + c) };
            r += c;
            done += c * wrow[i];
        }
    }
    return k;
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
        for (int k = 0; k < i && !c->side[i]; k++) {
            const ra_matmul_job *o = &c->jobs[k];
            // (a job whose side data is shorter lacks what this one needs: a Q8_0 batch's int16 activations; side data
            // is laid out by ra_matmul_side_layout: Q8_0's and Q8_1's scales, IQ4_XS's Q8_K scales and int16 quants, the
            // Q8_K quants plus 128 of the VNNI panels)
            if (c->side[k] && need[k] >= need[i] && o->x == m->x && o->n == m->n && o->nb == m->nb &&
                ra_matmul_side_layout(o->weight_type, o->n, o->nb) == ra_matmul_side_layout(m->weight_type, m->n, m->nb))
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
        c.table = NULL;
        int decode = ra_pool_size(pool) > 1;
        for (int i = 0; i < n; i++) decode &= jobs[i].nb == 1;
        ra_mm_chunk table[RA_MAX_DECODE_CHUNKS];
        int64_t chunks = c.first[n];
        if (decode && work >= 16384) {
            const int64_t k = ra_decode_chunks(jobs, n, ra_pool_size(pool), table, RA_MAX_DECODE_CHUNKS);
            if (k > 0) {
                c.table = table;
                chunks = k;
            }
        }
        ra_mm_sides(&c);
        int batch = 0;
        for (int i = 0; i < n; i++) batch |= jobs[i].nb > 1;
        c.segments = ra_segment_count(ra_pool_size(pool));
        if (batch && c.segments > 1 && work >= 16384 && c.first[n] >= c.segments) {
            for (int s = 0; s < c.segments; s++) c.end[s] = c.first[n] * (s + 1) / c.segments;
            for (int s = 0; s < c.segments; s++) atomic_init(&c.next[s].next, s == 0 ? 0 : ra_mm_segment_end(&c, s - 1));
            ra_pool_for(pool, c.segments, 1, ra_mm_segment_task, &c);
        } else if (c.table && c.segments > 1 && chunks >= 2 * c.segments) {
            // Decode: each thread streams its own run of consecutive rows (equal bytes), so its prefetches run ahead
            // into rows it multiplies next instead of the other thread's (when the threads took turns, each chunk
            // started cold); the thread that finishes first helps with the others' chunks, which shrink at the end.
            int64_t wrow[RA_MAX_JOBS], total = 0, acc = 0, k = 0;
            for (int i = 0; i < n; i++) wrow[i] = ra_row_bytes(jobs[i].weight_type, jobs[i].n);
            for (int64_t q = 0; q < chunks; q++) total += (int64_t)(table[q].r1 - table[q].r0) * wrow[table[q].job];
            for (int s = 0; s < c.segments; s++) {
                const int64_t target = ra_segment_cut(total, c.segments, s);
                while (k < chunks && (acc < target || s == c.segments - 1)) {
                    acc += (int64_t)(table[k].r1 - table[k].r0) * wrow[table[k].job];
                    k++;
                }
                c.end[s] = k;
            }
            for (int s = 0; s < c.segments; s++) atomic_init(&c.next[s].next, s == 0 ? 0 : ra_mm_segment_end(&c, s - 1));
            ra_pool_for(pool, c.segments, 1, ra_mm_segment_task, &c);
        } else {
            ra_pool_for(pool, chunks, work < 16384 ? chunks : 1, ra_mm_task, &c);
        }
        jobs += n;
        count -= n;
    }
}

void ra_matmul_par(ra_pool *pool, int weight_type, const void *w, int64_t n, int64_t rows,
                   const void *x, int64_t nb, float *out, int64_t out_stride) {
    const ra_matmul_job job = { weight_type, w, n, rows, x, nb, out, out_stride };
    ra_matmul_jobs(pool, &job, 1);
}
