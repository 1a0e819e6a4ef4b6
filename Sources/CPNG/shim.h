// libpng for the image decoders of CImageCodecs (Debian: libpng-dev).
#ifndef RUNANYWHERE_CPNG_SHIM_H
#define RUNANYWHERE_CPNG_SHIM_H
#include <png.h>
#endif
