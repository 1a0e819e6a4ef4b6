// Thread pool: N-1 workers live as long as the pool; a run wakes them through a generation counter.
// Workers spin on the counter for a short while (cheap hand-off between the many small steps of a
// forward pass), then sleep on a condition variable so an idle pool does not burn CPU.
#define _GNU_SOURCE
#include "ra_ops.h"

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
#define RA_SPIN_NS 200000LL

struct ra_pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    ra_pool_fn fn;
    void *ctx;
    _Atomic int generation;
    _Atomic int pending;    // workers still running the current generation
    _Atomic int sleepers;   // workers waiting on cond
    _Atomic int stop;
};

typedef struct {
    ra_pool *pool;
    int ith;
} ra_worker_arg;

static int64_t ra_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/// Waits until the generation differs from `seen`; returns the new one.
static int ra_wait_generation(ra_pool *pool, int seen) {
    int64_t start = 0;
    for (unsigned i = 0;; i++) {
        int g = atomic_load_explicit(&pool->generation, memory_order_acquire);
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
    int g;
    while ((g = atomic_load(&pool->generation)) == seen && !atomic_load(&pool->stop)) {
        pthread_cond_wait(&pool->cond, &pool->mutex);
    }
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->mutex);
    return g;
}

static void *ra_worker_main(void *p) {
    ra_worker_arg *arg = (ra_worker_arg *)p;
    ra_pool *pool = arg->pool;
    int ith = arg->ith;
    free(arg);
    int seen = 0;
    for (;;) {
        seen = ra_wait_generation(pool, seen);
        if (atomic_load(&pool->stop)) break;
        pool->fn(pool->ctx, ith, pool->n_threads);
        atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel);
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
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->pending, 0);
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

void ra_pool_run(ra_pool *pool, ra_pool_fn fn, void *ctx) {
    if (!pool || pool->n_threads == 1) {
        fn(ctx, 0, 1);
        return;
    }
    pool->fn = fn;
    pool->ctx = ctx;
    atomic_store(&pool->pending, pool->n_threads - 1);
    atomic_fetch_add(&pool->generation, 1);            // seq_cst: publishes fn/ctx
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->cond);
        pthread_mutex_unlock(&pool->mutex);
    }
    fn(ctx, 0, pool->n_threads);
    for (unsigned i = 0; atomic_load_explicit(&pool->pending, memory_order_acquire) != 0; i++) {
        RA_CPU_RELAX();
        if ((i & 4095) == 4095) sched_yield();        // a descheduled worker on a busy machine
    }
}
