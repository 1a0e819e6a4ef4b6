// The kernel paths this CPU can run, scalar first, each with the feature mask that selects it through
// ra_set_cpu_features_mask (ra_kernel_path picks the path back from the mask). Shared by the kernel
// benchmark (bench.c) and the edge-case check (edge.c).
#ifndef RUNANYWHERE_BENCH_KERNEL_PATHS_H
#define RUNANYWHERE_BENCH_KERNEL_PATHS_H
#include "ckernels.h"

typedef struct { int path; int mask; } kernel_path;

// Fills out[] with at most `max` runnable paths and returns their number; leaves the mask at -1.
static int runnable_paths(kernel_path *out, int max) {
    static const int order[] = { RA_PATH_SCALAR, RA_PATH_AVX2, RA_PATH_AVX2_VNNI, RA_PATH_AVX512, RA_PATH_AVX512_VNNI,
                                 RA_PATH_NEON, RA_PATH_NEON_DOTPROD };
    kernel_path candidates[sizeof order / sizeof order[0]];
    for (size_t p = 0; p < sizeof order / sizeof order[0]; p++) candidates[p] = (kernel_path){ order[p], ra_kernel_path_mask(order[p]) };
    int n = 0;
    for (size_t p = 0; p < sizeof candidates / sizeof candidates[0] && n < max; p++) {
        if (candidates[p].mask < 0) continue;   // another architecture's path
        ra_set_cpu_features_mask(candidates[p].mask);
        if (ra_kernel_path() == candidates[p].path) out[n++] = candidates[p];
    }
    ra_set_cpu_features_mask(-1);
    return n;
}
#endif
