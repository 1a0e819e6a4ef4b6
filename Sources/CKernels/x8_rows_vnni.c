// The repacked rows' decode kernels on the AVX-512 VNNI path (x8_rows_impl.h): 256-bit vpdpbusd (AVX512VL) where it
// takes the place of vpmaddubsw, vpaddw and vpmaddwd, same bits.
#include "ckernels.h"
#include "kernels_internal.h"

#include <string.h>

#define X8_VNNI 1
#define X8_FN __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define X8_ROWS(t) ra_vnni_rows_##t##_x8
#define X8_PICK ra_x8_rows_vnni
#include "x8_rows_impl.h"
