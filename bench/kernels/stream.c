// Decode streaming benchmark: every 2-D tensor of a GGUF file through ra_matmul_par with one activation row,
// as one decode step reads them (weights from the file mapping, so from DRAM / the page cache, not from a
// cache-resident copy). Prints MB per step and GB/s. Built and run by bench/kernels/stream.sh.
//
//   stream MODEL.gguf TENSORS.txt THREADS [STEPS]
// TENSORS.txt: one line per tensor "name type offset columns rows" (offsets absolute in the file).
// STREAM_PAGES=4k or 2m: read the weights from an anonymous copy of the file instead, on pages of that size
// (madvise MADV_NOHUGEPAGE / MADV_HUGEPAGE), to see what the TLB costs the kernels; the mapping's own page sizes
// depend on how the page cache holds the file (the line printed says how much of it was PMD-mapped).
// Built with -DSTREAM_AB (stream.sh with STREAM_AB=COMMIT; the AVX2 path is forced): steps alternate between
// COMMIT's AVX2 K-quant decode rows kernels (old_avx2_rows_*, dot_avx2_k.c compiled renamed) and the working tree's,
// put into the dispatch through a hook appended to a copy of dispatch.c, and the line printed compares the two
// (medians and bests of each one's steps).
#include "ckernels.h"
#include "ra_ops.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct { char name[96]; int type; long off, n, rows; } tensor;

#ifdef STREAM_AB
#include "kernels_internal.h"
typedef void rows_fn(int64_t, const void *, int64_t, int64_t, const void *, const float *, float *);
void ra_ab_set_rows(int di, ra_dot_rows_fn f);   // the hook stream.sh appends to its copy of dispatch.c
rows_fn old_avx2_rows_q4_k, old_avx2_rows_q5_k, old_avx2_rows_q6_k, ra_avx2_rows_q4_k, ra_avx2_rows_q5_k, ra_avx2_rows_q6_k;
// Variant 0: the old commit's K-quant rows kernels on the AVX2 path, 1: the working tree's.
static void set_variant(int v) {
    ra_ab_set_rows(RA_DI_Q4_K, v ? ra_avx2_rows_q4_k : old_avx2_rows_q4_k);
    ra_ab_set_rows(RA_DI_Q5_K, v ? ra_avx2_rows_q5_k : old_avx2_rows_q5_k);
    ra_ab_set_rows(RA_DI_Q6_K, v ? ra_avx2_rows_q6_k : old_avx2_rows_q6_k);
}
static int VARIANTS = 2;
#else
// STREAM_PATHS=1: steps alternate between the AVX2 path (variant 0, "old": the features mask cut to AVX2/FMA/F16C) and
// the CPU's own path (variant 1, "new"), so a kernel that only the AVX-512 tables have is compared in one process.
static int VARIANTS = 1;
static void set_variant(int v) { ra_set_cpu_features_mask(v ? -1 : RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C); }
#endif

static int by_time(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// STREAM_CLOCK=cpu: the calling thread's CPU time instead of wall time (with 1 thread, a figure that other jobs on a
// busy machine disturb far less; it still counts the time the thread waits for memory).
static double now(void) {
    static int cpu = -1;
    if (cpu < 0) cpu = getenv("STREAM_CLOCK") && strcmp(getenv("STREAM_CLOCK"), "cpu") == 0;
    struct timespec t;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// How much of the mapping at p is mapped by 2 MiB pages (from /proc/self/smaps).
static void print_pmd_mapped(const void *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return;
    char line[256], head[32];
    snprintf(head, sizeof head, "%lx-", (unsigned long)(uintptr_t)p);
    int inside = 0;
    while (fgets(line, sizeof line, f)) {
        if (strchr(line, '-') && strncmp(line, head, strlen(head)) == 0) inside = 1;
        else if (inside && strncmp(line, getenv("STREAM_PAGES") && *getenv("STREAM_PAGES") ? "AnonHugePages:" : "FilePmdMapped:", 14) == 0) {
            printf("weights %s %s", getenv("STREAM_PAGES") && *getenv("STREAM_PAGES") ? getenv("STREAM_PAGES") : "mapped from the file:", line);
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: stream MODEL.gguf TENSORS.txt THREADS [STEPS]\n"); return 2; }
    const int threads = atoi(argv[3]), steps = argc > 4 ? atoi(argv[4]) : 32;
    FILE *f = fopen(argv[2], "r");
    if (!f) { perror(argv[2]); return 2; }
    static tensor t[1024];
    int nt = 0;
    long maxn = 0, maxrows = 0;
    while (nt < 1024 && fscanf(f, "%95s %d %ld %ld %ld", t[nt].name, &t[nt].type, &t[nt].off, &t[nt].n, &t[nt].rows) == 5) {
        if (t[nt].n > maxn) maxn = t[nt].n;
        if (t[nt].rows > maxrows) maxrows = t[nt].rows;
        nt++;
    }
    fclose(f);
    const int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 2; }
    const unsigned char *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) { perror("mmap"); return 2; }
    const char *pages = getenv("STREAM_PAGES");
    if (pages && !*pages) pages = NULL;
    if (pages && (strcmp(pages, "4k") == 0 || strcmp(pages, "2m") == 0)) {
        const size_t huge = (size_t)2 << 20, size = ((size_t)st.st_size + huge - 1) / huge * huge;
        unsigned char *raw = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) { perror("mmap"); return 2; }
        unsigned char *copy = (unsigned char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
        if (madvise(copy, size, strcmp(pages, "2m") == 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) perror("madvise");
        memcpy(copy, base, (size_t)st.st_size);
        munmap((void *)base, (size_t)st.st_size);
        base = copy;
    }
    print_pmd_mapped(base);
    for (int i = 0; i < nt; i++) {
        const long bytes = (long)ra_row_bytes(t[i].type, t[i].n) * t[i].rows;
        if (t[i].off < 0 || bytes < 0 || t[i].off + bytes > st.st_size) { fprintf(stderr, "%s lies outside the file\n", t[i].name); return 2; }
    }
    float *x = malloc((size_t)maxn * sizeof(float)), *out = malloc((size_t)maxrows * sizeof(float));
    void *q = malloc((size_t)maxn * 4 + 64);
    for (long i = 0; i < maxn; i++) x[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
#ifdef STREAM_AB
    // The hook replaces the AVX2 path's kernels, so both variants run on that path: on an AVX-512 CPU its own path
    // would otherwise take another table's rows kernel for both and compare a kernel with itself.
    ra_set_cpu_features_mask(RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C);
#endif
    ra_pool *pool = ra_pool_create(threads);
    double bytes = 0;
    for (int i = 0; i < nt; i++) bytes += (double)ra_row_bytes(t[i].type, t[i].n) * (double)t[i].rows;
#ifndef STREAM_AB
    if (getenv("STREAM_PATHS") && *getenv("STREAM_PATHS")) VARIANTS = 2;
#endif
    double *ts[2], total = 0;
    int nts[2] = {0};
    for (int v = 0; v < VARIANTS; v++) ts[v] = malloc((size_t)(steps > 0 ? steps : 1) * sizeof(double));
    for (int s = 0; s < VARIANTS * (steps + 2); s++) {   // two warm-up steps (per variant)
        const int v = s % VARIANTS;
        if (VARIANTS == 2) set_variant(v);
        const double t0 = now();
        for (int i = 0; i < nt; i++) {
            ra_quantize_rows_par(pool, ra_vec_dot_type(t[i].type), x, t[i].n, 1, q);
            ra_matmul_par(pool, t[i].type, base + t[i].off, t[i].n, t[i].rows, q, 1, out, t[i].rows);
        }
        const double d = now() - t0;
        if (s >= 2 * VARIANTS) { ts[v][nts[v]++] = d; total += d; }
    }
    for (int v = 0; v < VARIANTS; v++) qsort(ts[v], (size_t)nts[v], sizeof(double), by_time);
    if (VARIANTS == 1 && steps > 0)
        printf("%d threads: %.1f MB per step, mean %.2f ms = %.2f GB/s (best %.2f GB/s), path %s\n", threads, bytes / 1e6,
               total / steps * 1e3, bytes * steps / total / 1e9, bytes / ts[0][0] / 1e9, ra_kernel_path_name(ra_kernel_path()));
    else if (steps > 0)
        printf("%d threads, %.1f MB per step, path %s: old median %.2f best %.2f GB/s | new median %.2f best %.2f GB/s | new/old median %.3f best %.3f\n",
               threads, bytes / 1e6, ra_kernel_path_name(ra_kernel_path()), bytes / ts[0][steps / 2] / 1e9, bytes / ts[0][0] / 1e9,
               bytes / ts[VARIANTS - 1][steps / 2] / 1e9, bytes / ts[VARIANTS - 1][0] / 1e9, ts[0][steps / 2] / ts[VARIANTS - 1][steps / 2],
               ts[0][0] / ts[VARIANTS - 1][0]);
    ra_pool_destroy(pool);
    return 0;
}
