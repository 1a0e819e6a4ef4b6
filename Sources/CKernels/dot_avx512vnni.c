// AVX-512 (F/BW/VL) + VNNI dot products; the kernels are in dot_avx512_impl.h.
#define RA_VNNI 1
#define RA_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define RA_TABLE ra_dots_avx512vnni
#include "dot_avx512_impl.h"
