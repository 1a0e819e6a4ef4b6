// C kernels of the native engine. See kernels.c.
#ifndef RUNANYWHERE_CKERNELS_H
#define RUNANYWHERE_CKERNELS_H
#include <stddef.h>
#include <stdint.h>

/// Bit set of the SIMD features this CPU offers (ra_cpu_features).
int ra_cpu_features(void);

#endif
