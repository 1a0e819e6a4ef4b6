// The repacked rows' decode kernels in AVX2 (x8_rows_impl.h): every x86 path with AVX2 but AVX-512 VNNI.
#include "ckernels.h"
#include "kernels_internal.h"

#include <string.h>

#define X8_VNNI 0
#define X8_FN RA_AVX2
#define X8_ROWS(t) ra_avx2_rows_##t##_x8
#define X8_PICK ra_x8_rows_avx2
#include "x8_rows_impl.h"
