// libjpeg-turbo for the image decoders of CImageCodecs (Debian: libjpeg62-turbo-dev).
#ifndef RUNANYWHERE_CJPEG_SHIM_H
#define RUNANYWHERE_CJPEG_SHIM_H
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#endif
