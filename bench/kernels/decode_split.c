// Two threads through a decode product from memory, split two ways: chunks taken in turns (thread t takes chunks t,
// t + 2, ...: what ra_matmul_jobs did with its decode chunk table) or a contiguous half each (the table's chunks split
// into one run per thread). Alternating rounds of 8 products over 512 MB of matrices; best and median GB/s of each.
// Built and run by bench/kernels/decode_split.sh.
//
//   decode_split TYPE N ROWS CHUNK      (TYPE: RA_* weight type; ROWS a multiple of 2 · CHUNK)
#include "ckernels.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trial.h"

static int type;
static int64_t n, rows, ch, wrow, mat, nmat;
static uint8_t *W;
static void *X;
static float *out;
static _Atomic int go, finished;
static int halves;
static int64_t cur;

static void work(int th) {
    const uint8_t *w = W + cur * mat;
    if (!halves) {
        for (int64_t c = th * ch; c < rows; c += 2 * ch) ra_matmul_rows(type, w + c * wrow, n, X, 1, out + c, rows, 0, ch);
    } else {
        const int64_t h = rows / 2;
        for (int64_t c = th * h; c < th * h + h; c += ch) ra_matmul_rows(type, w + c * wrow, n, X, 1, out + c, rows, 0, ch);
    }
}

static void *worker(void *p) {
    (void)p;
    int seen = 0;
    for (;;) {
        while (atomic_load(&go) == seen) {
        }
        seen = atomic_load(&go);
        if (seen < 0) return NULL;
        work(1);
        atomic_fetch_add(&finished, 1);
    }
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: decode_split TYPE N ROWS CHUNK\n"); return 2; }
    type = atoi(argv[1]);
    n = atol(argv[2]);
    rows = atol(argv[3]);
    ch = atol(argv[4]);
    wrow = ra_row_bytes(type, n);
    const int at = ra_vec_dot_type(type);
    if (wrow <= 0 || at < 0 || ch < 1 || rows % (2 * ch) != 0) { fprintf(stderr, "bad shape\n"); return 2; }
    mat = wrow * rows;
    nmat = (512 << 20) / mat + 1;
    W = malloc((size_t)(mat * nmat));
    out = malloc((size_t)rows * sizeof(float));
    float *xf = malloc((size_t)n * sizeof(float));
    X = malloc((size_t)ra_row_bytes(at, n) + 64);
    if (!W || !out || !xf || !X) { fprintf(stderr, "out of memory\n"); return 2; }
    for (int64_t i = 0; i < mat * nmat; i++) W[i] = (uint8_t)trial_rnd();
    const int64_t bb = ra_type_block_bytes(type);
    for (int64_t b = 0; b < mat * nmat / bb; b++) {   // finite half scales at the block's start
        const uint16_t d = ra_fp32_to_fp16((float)(trial_rnd() % 1000) * 1e-5f + 1e-4f);
        memcpy(W + b * bb, &d, 2);
    }
    for (int64_t i = 0; i < n; i++) xf[i] = (float)((int)(trial_rnd() % 2001) - 1000) * 1e-3f;
    ra_quantize_row(at, xf, X, n);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 2;
    enum { T = 400 };
    static double tm[2][T];
    int g = 0;
    for (int r = 0; r < T; r++)
        for (int m = 0; m < 2; m++) {
            halves = m;
            const double t0 = trial_now();
            for (int k = 0; k < 8; k++) {
                cur = (cur + 1) % nmat;
                atomic_store(&finished, 0);
                atomic_store(&go, ++g);
                work(0);
                while (atomic_load(&finished) != 1) {
                }
            }
            tm[m][r] = (trial_now() - t0) / 8;
        }
    atomic_store(&go, -1);
    pthread_join(t, NULL);
    for (int m = 0; m < 2; m++) qsort(tm[m], T, sizeof(double), trial_cmp);
    printf("type %d n %ld rows %ld chunk %ld, 2 threads from memory: in turns best %.2f median %.2f GB/s | halves best %.2f median %.2f GB/s | halves/turns median %.3f\n",
           type, (long)n, (long)rows, (long)ch, mat / tm[0][0] / 1e9, mat / tm[0][T / 2] / 1e9, mat / tm[1][0] / 1e9, mat / tm[1][T / 2] / 1e9,
           tm[0][T / 2] / tm[1][T / 2]);
    return 0;
}
