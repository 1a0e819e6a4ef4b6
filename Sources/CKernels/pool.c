// Thread pool: N-1 workers live as long as the pool; a run wakes them through a generation counter.
// Workers spin on the counter for a short while (cheap hand-off between the many small steps of a
// forward pass), then sleep on a condition variable so an idle pool does not burn CPU.
//
// ra_pool_for shares a range out in chunks that threads claim from an atomic counter, and a worker only
// joins while the run is open: when the machine is busy and a worker is not scheduled in time, the caller
// does the work itself and closes the run instead of waiting a whole time slice for the late worker.
#define _GNU_SOURCE
#include "ra_ops.h"
#include "ckernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RA_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define RA_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define RA_CPU_RELAX() ((void)0)
#endif

/// How long a worker spins for the next run before it sleeps.
#define RA_SPIN_NS 50000LL

// state: generation in the high 32 bits, RA_CLOSED, and the number of workers inside the run (low bits).
#define RA_CLOSED (1ULL << 31)
#define RA_ACTIVE_MASK (RA_CLOSED - 1)

typedef struct {
    int all;                 // 1: every thread runs fn (ra_pool_run); 0: a range is claimed in chunks
    ra_pool_fn fn;
    ra_range_fn range_fn;
    void *ctx;
    int64_t n, chunk;
    _Atomic int64_t next;
    _Atomic int done;        // workers finished (all mode)
    int features_mask;       // the caller's thread mask (ra_set_thread_features_mask), applied by every worker
} ra_job;

struct ra_pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    ra_job *job;
    _Atomic uint64_t state;
    _Atomic int sleepers;   // workers waiting on cond
    _Atomic int stop;
    // Oversubscription guard (caller thread only): loops in which the caller waited far longer for a
    // descheduled worker than it worked itself count as strikes; after a few, loops run on the caller
    // alone for a while, then threads are tried again.
    int strikes;
    int solo_left;
};

/// Loops run on the caller alone after repeated long waits for descheduled workers.
#define RA_SOLO_RUNS 256

typedef struct {
    ra_pool *pool;
    int ith;
} ra_worker_arg;

static int64_t ra_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline uint32_t ra_gen(uint64_t s) { return (uint32_t)(s >> 32); }

#ifdef RA_POOL_STATS
// A diagnostic build (bench/engine/poolstat.sh compiles the engine with -DRA_POOL_STATS): per step function, the
// calls, the ones the caller ran alone, the caller's time in them, its wait for the workers at their end, and the
// workers' idle time between runs; printed to stderr at exit as "POOLSTAT" lines (the function as an offset in its
// object, which the script names with addr2line). Release builds compile none of it.
#include <dlfcn.h>
#include <stdio.h>
enum { RA_STAT_SLOTS = 64 };
typedef struct { const void *fn; int64_t calls, solo, work_ns, wait_ns; } ra_pool_stat_slot;
static ra_pool_stat_slot ra_stat_slots[RA_STAT_SLOTS];
static int64_t ra_stat_idle_ns;
static pthread_mutex_t ra_stat_mutex = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local int ra_stat_depth;   // > 0 inside a step: a step run from within one (or on a worker) is its time

static void ra_pool_stat(const void *fn, int solo, int64_t work_ns, int64_t wait_ns) {
    if (ra_stat_depth > 0) return;
    pthread_mutex_lock(&ra_stat_mutex);
    for (int i = 0; i < RA_STAT_SLOTS; i++) {
        ra_pool_stat_slot *s = &ra_stat_slots[i];
        if (s->fn != fn && s->fn != NULL) continue;
        s->fn = fn;
        s->calls++;
        s->solo += solo;
        s->work_ns += work_ns;
        s->wait_ns += wait_ns;
        break;
    }
    pthread_mutex_unlock(&ra_stat_mutex);
}

static void ra_pool_stat_idle(int64_t ns) {
    pthread_mutex_lock(&ra_stat_mutex);
    ra_stat_idle_ns += ns;
    pthread_mutex_unlock(&ra_stat_mutex);
}

__attribute__((destructor)) static void ra_pool_stat_print(void) {
    for (int i = 0; i < RA_STAT_SLOTS && ra_stat_slots[i].fn; i++) {
        const ra_pool_stat_slot *s = &ra_stat_slots[i];
        Dl_info info;
        const long offset = dladdr(s->fn, &info) && info.dli_fbase ? (long)((const char *)s->fn - (const char *)info.dli_fbase) : 0;
        fprintf(stderr, "POOLSTAT fn=0x%lx object=%s calls=%lld solo=%lld work_ms=%.3f wait_ms=%.3f\n", offset,
                offset ? info.dli_fname : "?", (long long)s->calls, (long long)s->solo, s->work_ns / 1e6, s->wait_ns / 1e6);
    }
    fprintf(stderr, "POOLSTAT workers_idle_ms=%.3f\n", ra_stat_idle_ns / 1e6);
}
#define RA_STAT_CLOCK(t) const int64_t t = ra_now_ns()
#define RA_STAT(fn, solo, work, wait) ra_pool_stat((const void *)(fn), (solo), (work), (wait))
#define RA_STAT_IDLE(ns) ra_pool_stat_idle(ns)
#define RA_STAT_ENTER() (ra_stat_depth++)
#define RA_STAT_LEAVE() (ra_stat_depth--)
#else   // the arguments are not evaluated
#define RA_STAT_CLOCK(t) ((void)0)
#define RA_STAT(fn, solo, work, wait) ((void)0)
#define RA_STAT_IDLE(ns) ((void)0)
#define RA_STAT_ENTER() ((void)0)
#define RA_STAT_LEAVE() ((void)0)
#endif

/// Waits until the generation differs from `seen`; returns the new one.
static uint32_t ra_wait_generation(ra_pool *pool, uint32_t seen) {
    int64_t start = 0;
    for (unsigned i = 0;; i++) {
        uint32_t g = ra_gen(atomic_load_explicit(&pool->state, memory_order_acquire));
        if (g != seen || atomic_load_explicit(&pool->stop, memory_order_relaxed)) return g;
        RA_CPU_RELAX();
        if ((i & 255) == 255) {
            int64_t now = ra_now_ns();
            if (start == 0) start = now;
            else if (now - start > RA_SPIN_NS) break;
        }
    }
    pthread_mutex_lock(&pool->mutex);
    atomic_fetch_add(&pool->sleepers, 1);
    uint32_t g;
    while ((g = ra_gen(atomic_load(&pool->state))) == seen && !atomic_load(&pool->stop)) {
        pthread_cond_wait(&pool->cond, &pool->mutex);
    }
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->mutex);
    return g;
}

static void ra_claim_loop(ra_job *job, int ith) {
    for (;;) {
        const int64_t i0 = atomic_fetch_add_explicit(&job->next, job->chunk, memory_order_relaxed);
        if (i0 >= job->n) break;
        const int64_t i1 = i0 + job->chunk < job->n ? i0 + job->chunk : job->n;
        RA_STAT_ENTER();
        job->range_fn(job->ctx, i0, i1, ith);
        RA_STAT_LEAVE();
    }
}

static void *ra_worker_main(void *p) {
    ra_worker_arg *arg = (ra_worker_arg *)p;
    ra_pool *pool = arg->pool;
    int ith = arg->ith;
    free(arg);
    uint32_t seen = 0;
    for (;;) {
        RA_STAT_CLOCK(idle0);
        seen = ra_wait_generation(pool, seen);
        RA_STAT_IDLE(ra_now_ns() - idle0);
        if (atomic_load(&pool->stop)) break;
        // Join the run unless it has moved on or was closed.
        uint64_t s = atomic_load(&pool->state);
        int joined = 0;
        while (ra_gen(s) == seen && !(s & RA_CLOSED)) {
            if (atomic_compare_exchange_weak(&pool->state, &s, s + 1)) { joined = 1; break; }
        }
        if (!joined) continue;
        ra_job *job = pool->job;
        ra_set_thread_features_mask(job->features_mask);
        if (job->all) {
            job->fn(job->ctx, ith, pool->n_threads);
            atomic_fetch_add(&job->done, 1);
        } else {
            ra_claim_loop(job, ith);
        }
        atomic_fetch_sub(&pool->state, 1);
    }
    return NULL;
}

ra_pool *ra_pool_create(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    ra_pool *pool = (ra_pool *)calloc(1, sizeof(ra_pool));
    if (!pool) return NULL;
    pool->n_threads = n_threads;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->cond, NULL);
    atomic_init(&pool->state, RA_CLOSED);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->stop, 0);
    if (n_threads > 1) {
        pool->threads = (pthread_t *)calloc((size_t)n_threads, sizeof(pthread_t));
        if (!pool->threads) { free(pool); return NULL; }
        for (int i = 1; i < n_threads; i++) {
            ra_worker_arg *arg = (ra_worker_arg *)malloc(sizeof(ra_worker_arg));
            int ok = arg != NULL;
            if (ok) {
                arg->pool = pool;
                arg->ith = i;
                ok = pthread_create(&pool->threads[i], NULL, ra_worker_main, arg) == 0;
                if (!ok) free(arg);
            }
            if (!ok) {
                pool->n_threads = i;   // join the ones already started
                ra_pool_destroy(pool);
                return NULL;
            }
        }
    }
    return pool;
}

void ra_pool_destroy(ra_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->cond);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 1; i < pool->n_threads; i++) pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->cond);
    pthread_mutex_destroy(&pool->mutex);
    free(pool->threads);
    free(pool);
}

int ra_pool_size(const ra_pool *pool) { return pool ? pool->n_threads : 1; }

/// Publishes a job as a new open generation and wakes sleeping workers.
static void ra_publish(ra_pool *pool, ra_job *job) {
    job->features_mask = ra_thread_features_mask();
    pool->job = job;
    const uint64_t g = ra_gen(atomic_load(&pool->state)) + 1u;
    atomic_store(&pool->state, (uint64_t)g << 32);        // seq_cst: publishes job; open, nobody inside
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->cond);
        pthread_mutex_unlock(&pool->mutex);
    }
}

/// Closes the run to latecomers and waits for the workers inside it.
static void ra_close(ra_pool *pool) {
    uint64_t s = atomic_fetch_or(&pool->state, RA_CLOSED) | RA_CLOSED;
    for (unsigned i = 0; (s & RA_ACTIVE_MASK) != 0; i++) {
        RA_CPU_RELAX();
        if ((i & 255) == 255) sched_yield();          // a worker inside was descheduled: let it run
        s = atomic_load_explicit(&pool->state, memory_order_acquire);
    }
}

void ra_pool_run(ra_pool *pool, ra_pool_fn fn, void *ctx) {
    if (!pool || pool->n_threads == 1) {
        fn(ctx, 0, 1);
        return;
    }
    ra_job job;
    job.all = 1;
    job.fn = fn;
    job.range_fn = NULL;
    job.ctx = ctx;
    job.n = job.chunk = 0;
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    ra_publish(pool, &job);
    fn(ctx, 0, pool->n_threads);
    for (unsigned i = 0; atomic_load_explicit(&job.done, memory_order_acquire) != pool->n_threads - 1; i++) {
        RA_CPU_RELAX();
        if ((i & 4095) == 4095) sched_yield();
    }
    ra_close(pool);
}

void ra_pool_for(ra_pool *pool, int64_t n, int64_t chunk, ra_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (chunk < 1) chunk = 1;
    RA_STAT_CLOCK(s0);
    if (!pool || pool->n_threads == 1 || n <= chunk) {
        RA_STAT_ENTER();
        fn(ctx, 0, n, 0);
        RA_STAT_LEAVE();
        RA_STAT(fn, 1, ra_now_ns() - s0, 0);
        return;
    }
    if (pool->solo_left > 0) {          // the machine is oversubscribed: workers keep losing their CPU
        pool->solo_left--;
        RA_STAT_ENTER();
        fn(ctx, 0, n, 0);
        RA_STAT_LEAVE();
        RA_STAT(fn, 1, ra_now_ns() - s0, 0);
        return;
    }
    ra_job job;
    job.all = 0;
    job.fn = NULL;
    job.range_fn = fn;
    job.ctx = ctx;
    job.n = n;
    job.chunk = chunk;
    atomic_init(&job.next, 0);
    atomic_init(&job.done, 0);
    const int64_t t0 = ra_now_ns();
    ra_publish(pool, &job);
    ra_claim_loop(&job, 0);
    const int64_t t1 = ra_now_ns();
    ra_close(pool);
    const int64_t waited = ra_now_ns() - t1;
    RA_STAT(fn, 0, t1 - t0, waited);
    if (waited > 200000 && waited > 2 * (t1 - t0)) {
        if (++pool->strikes >= 3) {
            pool->strikes = 0;
            pool->solo_left = RA_SOLO_RUNS;
        }
    } else if (pool->strikes > 0 && waited < (t1 - t0) / 4) {
        pool->strikes--;
    }
}
