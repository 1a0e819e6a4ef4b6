// What a load that copies weights pays for new memory on this machine: the first touch of fresh anonymous pages
// (asked for as huge pages, as the engine's repacked block is; with "4k" as 4 KiB pages), three times in one
// process, each time a new mapping, then a copy into the touched pages. On a VM whose host backs guest memory on
// first use, the first rounds run far below memory speed; a repacking load pays that (bench/results/engine-notes.md,
// "Stop 34").
//
//   gcc -O2 -o /tmp/first_touch bench/engine/first_touch.c && /tmp/first_touch [MIB] [4k]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 600) << 20;
    const int huge = !(argc > 2 && strcmp(argv[2], "4k") == 0);
    char *src = malloc(n);
    if (!src || n == 0) { fprintf(stderr, "no memory\n"); return 1; }
    memset(src, 2, n);
    for (int r = 0; r < 3; r++) {
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { fprintf(stderr, "mmap failed\n"); return 1; }
        if (huge) madvise(p, n, MADV_HUGEPAGE);
        const double t0 = now();
        memset(p, 1, n);
        const double t1 = now();
        memcpy(p, src, n);
        const double t2 = now();
        printf("FIRST_TOUCH round=%d mib=%zu pages=%s touch_s=%.3f touch_gbs=%.1f copy_s=%.3f\n", r + 1, n >> 20,
               huge ? "huge" : "4k", t1 - t0, (double)n / (t1 - t0) / 1e9, t2 - t1);
        munmap(p, n);
    }
    free(src);
    return 0;
}
