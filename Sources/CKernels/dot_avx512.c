// AVX-512 (F/BW/VL) dot products without VNNI; the kernels are in dot_avx512_impl.h.
#define RA_VNNI 0
#define RA_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define RA_TABLE ra_dots_avx512
#include "dot_avx512_impl.h"
