// Kernel benchmark: GB/s of weights processed by ra_matmul_rows per type, shape, batch and path.
//
// Build and run (from the repository root):
//   bench/kernels/run.sh            # builds with gcc -O3, runs, writes bench/results/kernels.md
// Single thread. Each figure is the median of RUNS timed runs; a run repeats the call until it has
// taken at least ~40 ms. Also checks every path against the scalar one on the same data.
// Environment: KBENCH_ONLY=Q8_0,Q4_K (types), KBENCH_NB=8,128 (activation rows; default 1,8,32),
// KBENCH_CHUNK=16: call ra_matmul_rows on chunks of that many weight rows, as the engine's threads do (a
// prompt of 128 tokens: chunks of 16-64 rows × nb = 128), instead of once over all rows.
// KBENCH_SHAPES=3072x1024,1024x3072: weight shapes rows x n (default 1024x1024,3072x1024). KBENCH_PATHS=avx2: only
// these paths (by ra_kernel_path_name; default every path this CPU runs). Standard output also gives Gmac/s
// (rows x n x nb multiply-adds per second), the figure to compare across types and batch sizes.
// KBENCH_TOL=1e-5: exit with status 1 (after all types ran) when any path differs from scalar by more than
// that (largest |path - scalar| / max|scalar|, per type, shape and batch; a NaN difference counts as infinite).
// (The correctness check of the NEON kernels is bench/kernels/check.c, run by arm.sh.)
#include "ckernels.h"
#include "paths.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 11

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float frand(void) { return (float)rnd() / 4294967296.0f * 2.0f - 1.0f; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// Weights with realistic scales: quantize random floats where we can, random blocks otherwise.
static void *make_weights(int type, int64_t rows, int64_t n) {
    const int64_t rb = ra_row_bytes(type, n);
    uint8_t *w = aligned_alloc(64, (size_t)((rows * rb + 63) / 64 * 64));
    float *row = malloc((size_t)n * sizeof(float));
    for (int64_t r = 0; r < rows; r++) {
        uint8_t *dst = w + r * rb;
        if (ra_quantize_supported(type)) {
            for (int64_t i = 0; i < n; i++) row[i] = frand() * 0.05f;
            ra_quantize_row(type, row, dst, n);
        } else {
            for (int64_t i = 0; i < rb; i++) dst[i] = (uint8_t)rnd();
            const int64_t bb = ra_type_block_bytes(type);
            for (int64_t b = 0; b < rb / bb; b++) {
                uint8_t *blk = dst + b * bb;
                const uint16_t d = ra_fp32_to_fp16(0.001f + 0.001f * (frand() + 1.0f));
                const uint16_t dm = ra_fp32_to_fp16(0.0005f * (frand() + 1.0f));
                if (type == RA_Q6_K) memcpy(blk + 208, &d, 2);
                else { memcpy(blk, &d, 2); memcpy(blk + 2, &dm, 2); }
            }
        }
    }
    free(row);
    return w;
}

static int64_t g_chunk;   // KBENCH_CHUNK (0: one call over all rows)

static double time_once(int type, const void *w, int64_t n, const void *x, int64_t nb, float *out, int64_t rows, int reps) {
    const int64_t chunk = g_chunk > 0 ? g_chunk : rows;
    const double t0 = now();
    for (int k = 0; k < reps; k++)
        for (int64_t r = 0; r < rows; r += chunk) ra_matmul_rows(type, w, n, x, nb, out, rows, r, r + chunk < rows ? r + chunk : rows);
    return (now() - t0) / reps;
}

int main(int argc, char **argv) {
    const char *md_path = argc > 1 ? argv[1] : NULL;
    const int types[] = { RA_Q8_0, RA_Q4_0, RA_Q4_K, RA_Q6_K, RA_F16, RA_Q5_K, RA_Q4_1, RA_Q5_0, RA_Q5_1, RA_BF16, RA_F32 };
    const char *names[] = { "Q8_0", "Q4_0", "Q4_K", "Q6_K", "F16", "Q5_K", "Q4_1", "Q5_0", "Q5_1", "BF16", "F32" };
    int64_t shapes[8][2] = { {1024, 1024}, {3072, 1024} };   // rows x n
    size_t nshapes = 2;
    if (getenv("KBENCH_SHAPES")) {
        nshapes = 0;
        for (char *p = getenv("KBENCH_SHAPES"); *p && nshapes < 8; ) {
            const long long r = strtoll(p, &p, 10);
            if (*p != 'x') break;
            const long long c = strtoll(p + 1, &p, 10);
            if (r > 0 && c > 0) { shapes[nshapes][0] = r; shapes[nshapes][1] = c; nshapes++; }
            while (*p == ',') p++;
        }
    }
    int64_t batches[8] = { 1, 8, 32 };
    size_t nbatches = 3;
    if (getenv("KBENCH_NB")) {
        nbatches = 0;
        for (char *p = getenv("KBENCH_NB"); *p && nbatches < 8; ) {
            const long long v = strtoll(p, &p, 10);
            if (v > 0) batches[nbatches++] = v;
            while (*p == ',') p++;
            if (*p && (*p < '0' || *p > '9')) break;
        }
    }
    if (getenv("KBENCH_CHUNK")) g_chunk = strtoll(getenv("KBENCH_CHUNK"), NULL, 10);
    const double tol = getenv("KBENCH_TOL") ? strtod(getenv("KBENCH_TOL"), NULL) : 0;
    int failed = 0;
    const int all = ra_cpu_features();
    // the paths this CPU can run; at most MAXP
    enum { MAXP = 4 };
    kernel_path paths[MAXP];
    int npaths = runnable_paths(paths, MAXP);
    if (getenv("KBENCH_PATHS")) {   // keep the named paths only
        char list[256];
        snprintf(list, sizeof list, ",%s,", getenv("KBENCH_PATHS"));
        int kept = 0;
        for (int p = 0; p < npaths; p++) {
            char key[32];
            snprintf(key, sizeof key, ",%s,", ra_kernel_path_name(paths[p].path));
            if (strstr(list, key)) paths[kept++] = paths[p];
        }
        npaths = kept;
    }

    FILE *md = md_path ? fopen(md_path, "w") : NULL;
    if (md) {
        fprintf(md, "# Kernel benchmark: ra_matmul_rows\n\n");
        fprintf(md, "Single thread, gcc -O3, `bench/kernels/run.sh`. GB/s = bytes of the weight matrix / time of one "
                    "ra_matmul_rows call over all rows (for nb = 32 the matrix is read once per call and multiplied with 32 "
                    "activation rows). Each cell: median of %d timed runs (best run in brackets); a run repeats the call for ~20 ms, "
                    "and the paths take turns run by run. Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time-sharing with "
                    "other jobs on this 2-core machine does not count; sharing caches and memory bandwidth with them still does. "
                    "Last column: largest |path - scalar| / max|scalar| over the outputs.\n\n", RUNS);
    }
    char cpu[256] = "unknown";
    FILE *ci = fopen("/proc/cpuinfo", "r");
    if (ci) {
        char line[512];
        while (fgets(line, sizeof line, ci))
            if (!strncmp(line, "model name", 10)) { char *c = strchr(line, ':'); if (c) { snprintf(cpu, sizeof cpu, "%s", c + 2); cpu[strcspn(cpu, "\n")] = 0; } break; }
        fclose(ci);
    }
    printf("CPU: %s, features 0x%x\n", cpu, all);
    if (md) {
        if (g_chunk > 0) fprintf(md, "Calls on chunks of %lld weight rows (KBENCH_CHUNK).\n\n", (long long)g_chunk);
        fprintf(md, "CPU: %s (features 0x%x)\n\n| type | rows×n | nb |", cpu, all);
        for (int p = 0; p < npaths; p++) fprintf(md, " %s GB/s |", ra_kernel_path_name(paths[p].path));
        fprintf(md, " max rel. diff vs scalar |\n|---|---|---:|");
        for (int p = 0; p < npaths; p++) fprintf(md, "---:|");
        fprintf(md, "---:|\n");
    }

    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int type = types[t], xtype = ra_vec_dot_type(type);
        const char *only = getenv("KBENCH_ONLY");   // e.g. KBENCH_ONLY=Q8_0,Q4_K for a quick look
        if (only) {
            char key[16];
            snprintf(key, sizeof key, ",%s,", names[t]);
            char list[256];
            snprintf(list, sizeof list, ",%s,", only);
            if (!strstr(list, key)) continue;
        }
        for (size_t s = 0; s < nshapes; s++) {
            const int64_t rows = shapes[s][0], n = shapes[s][1];
            void *w = make_weights(type, rows, n);
            const double wbytes = (double)ra_row_bytes(type, n) * (double)rows;
            for (size_t bi = 0; bi < nbatches; bi++) {
                const int64_t nb = batches[bi];
                float *xf = malloc((size_t)(n * nb) * sizeof(float));
                for (int64_t i = 0; i < n * nb; i++) xf[i] = frand();
                const int64_t xrb = ra_row_bytes(xtype, n);
                uint8_t *x = aligned_alloc(64, (size_t)((xrb * nb + 63) / 64 * 64));
                for (int64_t b = 0; b < nb; b++) ra_quantize_row(xtype, xf + b * n, x + b * xrb, n);
                float *ref = malloc((size_t)(rows * nb) * sizeof(float));
                float *out = malloc((size_t)(rows * nb) * sizeof(float));
                double gbs[MAXP] = {0}, best[MAXP] = {0};
                double maxrel = 0, rel[MAXP] = {0};
                int reps[MAXP];
                for (int p = 0; p < npaths; p++) {
                    ra_set_cpu_features_mask(paths[p].mask);
                    ra_matmul_rows(type, w, n, x, nb, p == 0 ? ref : out, rows, 0, rows);
                    if (p > 0) {
                        double scale = 0;
                        for (int64_t i = 0; i < rows * nb; i++) scale = fmax(scale, fabs(ref[i]));
                        // (fmax drops NaN, so a NaN difference is kept as infinity by hand: it fails the tolerance)
                        for (int64_t i = 0; i < rows * nb; i++) {
                            const double r = fabs(out[i] - ref[i]) / (scale + 1e-30);
                            if (!(r <= rel[p])) rel[p] = r == r ? r : INFINITY;
                        }
                        if (tol > 0 && !(rel[p] <= tol)) failed = 1;
                        if (!(rel[p] <= maxrel)) maxrel = rel[p];
                    }
                    // calibrate repetitions to ~20 ms per timed run
                    reps[p] = 1;
                    const double one = time_once(type, w, n, x, nb, out, rows, 1);
                    while (one * reps[p] < 0.02 && reps[p] < 1 << 20) reps[p] *= 2;
                }
                // paths take turns run by run, so bursts of load from other processes hit all of them alike
                double runs[MAXP][RUNS];
                for (int r = 0; r < RUNS; r++)
                    for (int p = 0; p < npaths; p++) {
                        ra_set_cpu_features_mask(paths[p].mask);
                        runs[p][r] = time_once(type, w, n, x, nb, out, rows, reps[p]);
                    }
                for (int p = 0; p < npaths; p++) {
                    qsort(runs[p], RUNS, sizeof(double), cmp_double);
                    gbs[p] = wbytes / runs[p][RUNS / 2] / 1e9;
                    best[p] = wbytes / runs[p][0] / 1e9;
                }
                printf("%-5s %4lldx%-4lld nb=%-3lld", names[t], (long long)rows, (long long)n, (long long)nb);
                const double macs_per_byte = (double)rows * (double)n * (double)nb / wbytes;
                for (int p = 0; p < npaths; p++)
                    printf("  %s %6.2f GB/s %6.1f Gmac/s (best %6.1f)", ra_kernel_path_name(paths[p].path), gbs[p], gbs[p] * macs_per_byte,
                           best[p] * macs_per_byte);
                printf("  maxrel %.2g", maxrel);
                if (npaths > 2)
                    for (int p = 1; p < npaths; p++) printf(" (%s %.2g)", ra_kernel_path_name(paths[p].path), rel[p]);
                if (tol > 0)
                    for (int p = 1; p < npaths; p++)
                        if (!(rel[p] <= tol)) printf("  FAIL: %s differs from scalar by more than %g", ra_kernel_path_name(paths[p].path), tol);
                printf("\n");
                fflush(stdout);
                if (md) {
                    fprintf(md, "| %s | %lld×%lld | %lld |", names[t], (long long)rows, (long long)n, (long long)nb);
                    for (int p = 0; p < npaths; p++) fprintf(md, " %.2f (%.2f) |", gbs[p], best[p]);
                    fprintf(md, " %.1e |\n", maxrel);
                }
                free(xf); free(x); free(ref); free(out);
            }
            free(w);
        }
    }
    ra_set_cpu_features_mask(-1);
    if (md) fclose(md);
    if (failed) {
        printf("FAIL: a path differs from scalar by more than KBENCH_TOL=%g\n", tol);
        return 1;
    }
    return 0;
}
