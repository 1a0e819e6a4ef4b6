// Shared by the kernel checks (check.c, ops_check.c): random numbers, the paths under test, result lines.
#ifndef RUNANYWHERE_BENCH_CHECK_H
#define RUNANYWHERE_BENCH_CHECK_H
#include "paths.h"
#include <stdint.h>

uint32_t check_rnd(void);
void check_seed(uint32_t seed);   // restarts the generator
float check_frand(void);   // uniform in [-1, 1)
extern kernel_path check_paths[8];   // [0]: scalar, the reference
extern int check_npaths;
// Prints one result line; fails when worst > tol (NaN included) or bad > 0 (bad < 0: not counted).
void check_report(const char *what, int p, double worst, long bad, double tol);
// |got - want| / scale, infinite when NaN.
double check_rel(double got, double want, double scale);
// The float operations (ops_check.c); returns 1 on a failure.
int check_ops(void);
#endif
