// Throughput of the AVX2 instruction mixes that multiply 32 int8 weights by 4 int8 activations broadcast (one quartet
// of 8 rows, as the batch panels of matmul_avx2_b32.c do), 8 independent chains, in ns per group and in cycles at the
// clock given (default 2.8 GHz, a dependent imul chain's rate on the EPYC of stops 31-34). What it answers: how many
// cycles a quartet costs the Q8_0 panel (its pair sums fill int16, so each goes to int32 at once) against the 4-bit
// types' (8 quartets added in int16 first), what an int16 panel (vpmaddwd only) would cost instead, and each multiply's
// own throughput: the floor of a kernel bound by its multiplies (the int16 panels: IQ4_XS's and Q8_0's prompts).
//
//   gcc -O2 -mavx2 -mfma -o /tmp/int8_mix bench/kernels/int8_mix.c && /tmp/int8_mix [GHZ]
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 200000000L
static int8_t buf[128] __attribute__((aligned(64)));
static volatile int sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
#define R8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define DECL(i) __m256i a##i = _mm256_set1_epi8(i + 1);
#define SUM(i) s += _mm256_extract_epi32(a##i, 0);
#define BCAST(i, off) ({ int32_t v; __builtin_memcpy(&v, p + 4 * (i) + (off), 4); _mm256_set1_epi32(v); })
// Q8_0 panel: broadcast, the weight's sign onto the activation, vpmaddubsw, vpmaddwd, vpaddd
#define OP_Q8(i) a##i = _mm256_add_epi32(a##i, _mm256_madd_epi16(_mm256_maddubs_epi16(w, _mm256_sign_epi8(BCAST(i, 0), a##i)), ones));
// Q4_0 / Q5_0 panel: broadcast, sign, vpmaddubsw, vpaddw (the vpmaddwd once per 8 quartets)
#define OP_Q4(i) a##i = _mm256_add_epi16(a##i, _mm256_maddubs_epi16(w, _mm256_sign_epi8(BCAST(i, 0), a##i)));
// int16 panel: two pairs of elements a quartet, each a broadcast, vpmaddwd, vpaddd
#define OP_I16(i) a##i = _mm256_add_epi32(_mm256_add_epi32(a##i, _mm256_madd_epi16(BCAST(i, 0), w)), _mm256_madd_epi16(BCAST(i, 32), a##i));
// The multiplies alone, 8 independent chains (latency 4-5 on the CPUs measured): each one's throughput, which bounds every
// mix above (on the Zen 1 EPYC both take ~0.95 ns, 2 cycles, a 256-bit vector: one 128-bit multiply pipe).
#define OP_MUB(i) a##i = _mm256_maddubs_epi16(w, a##i);
#define OP_MWD(i) a##i = _mm256_madd_epi16(a##i, w);
#define BODY(name, OP)                                                                                                 \
    __attribute__((noinline)) static double name(void) {                                                               \
        R8(DECL)                                                                                                       \
        const __m256i w = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);                                            \
        (void)ones;                                                                                                    \
        const int8_t *p = buf;                                                                                         \
        const double t0 = now();                                                                                       \
        for (long n = 0; n < N / 8; n++) {                                                                             \
            R8(OP)                                                                                                     \
            __asm__("" : "+r"(p));                                                                                     \
        }                                                                                                              \
        const double t = now() - t0;                                                                                   \
        int s = 0;                                                                                                     \
        R8(SUM)                                                                                                        \
        sink = s;                                                                                                      \
        return t / (double)N * 1e9;                                                                                    \
    }
BODY(q8, OP_Q8)
BODY(q4, OP_Q4)
BODY(i16, OP_I16)
BODY(mub, OP_MUB)
BODY(mwd, OP_MWD)

int main(int argc, char **argv) {
    const double ghz = argc > 1 ? atof(argv[1]) : 2.8;
    printf("| mix (a quartet of 8 rows × 1 activation row) | ns | cycles at %.1f GHz |\n|---|---:|---:|\n", ghz);
    for (int r = 0; r < 3; r++) {
        const double a = q8(), b = q4(), c = i16(), e = mub(), f = mwd();
        printf("| Q8_0: vpbroadcastd, vpsignb, vpmaddubsw, vpmaddwd, vpaddd | %.3f | %.2f |\n", a, a * ghz);
        printf("| Q4_0: vpbroadcastd, vpsignb, vpmaddubsw, vpaddw | %.3f | %.2f |\n", b, b * ghz);
        printf("| int16: 2 × (vpbroadcastd, vpmaddwd, vpaddd) | %.3f | %.2f |\n", c, c * ghz);
        printf("| vpmaddubsw alone (32 int8 products) | %.3f | %.2f |\n", e, e * ghz);
        printf("| vpmaddwd alone (16 int16 products) | %.3f | %.2f |\n", f, f * ghz);
    }
    return 0;
}
