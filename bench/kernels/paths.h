// The kernel paths this CPU can run, scalar first, each with the feature mask that selects it through
// ra_set_cpu_features_mask (ra_kernel_path picks the path back from the mask). Shared by the kernel
// benchmark (bench.c) and the edge-case check (edge.c).
#ifndef RUNANYWHERE_BENCH_KERNEL_PATHS_H
#define RUNANYWHERE_BENCH_KERNEL_PATHS_H
#include "ckernels.h"

typedef struct { int path; int mask; } kernel_path;

// Fills out[] with at most `max` runnable paths and returns their number; leaves the mask at -1.
static int runnable_paths(kernel_path *out, int max) {
    const int all = ra_cpu_features();
    const kernel_path candidates[] = {
        { RA_PATH_SCALAR, 0 },
        { RA_PATH_AVX2, RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C },
        { RA_PATH_AVX2_VNNI, RA_CPU_AVX2 | RA_CPU_FMA | RA_CPU_F16C | RA_CPU_AVXVNNI },
        { RA_PATH_AVX512, all & ~RA_CPU_AVX512VNNI },
        { RA_PATH_AVX512_VNNI, -1 },
        { RA_PATH_NEON, RA_CPU_NEON },
        { RA_PATH_NEON_DOTPROD, -1 },
    };
    int n = 0;
    for (size_t p = 0; p < sizeof candidates / sizeof candidates[0] && n < max; p++) {
        ra_set_cpu_features_mask(candidates[p].mask);
        if (ra_kernel_path() == candidates[p].path) out[n++] = candidates[p];
    }
    ra_set_cpu_features_mask(-1);
    return n;
}
#endif
