// PNG and JPEG decoding to 8-bit RGB with libpng and libjpeg-turbo, hardened for untrusted input: the
// libraries' fatal errors are caught (setjmp), the image size is checked before any pixel buffer is allocated,
// ancillary PNG chunks and JPEG scans are bounded. Written in C because both libraries report errors by longjmp.
#ifndef RUNANYWHERE_RA_IMAGE_H
#define RUNANYWHERE_RA_IMAGE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Result codes of the decoders.
enum {
    RA_IMAGE_OK = 0,
    RA_IMAGE_NOT_THIS_FORMAT = 1,  ///< the bytes do not start with this format's signature
    RA_IMAGE_MALFORMED = 2,        ///< corrupt or truncated data (the message says what the library found)
    RA_IMAGE_TOO_LARGE = 3,        ///< width × height exceeds max_pixels, or a side exceeds 65535
    RA_IMAGE_UNSUPPORTED = 4,      ///< a valid image of a kind not decoded here (e.g. CMYK JPEG)
    RA_IMAGE_NO_MEMORY = 5
};

/// A decoded image: width × height RGB pixels, rows top to bottom; free `pixels` with ra_image_free.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
} ra_image;

/// Decodes a PNG (any bit depth and color type; palette and gray become RGB, alpha is dropped, 16-bit samples
/// keep their high byte). On failure returns a code and writes a message into err (err_len bytes, may be 0).
int ra_png_decode(const uint8_t *data, size_t size, uint64_t max_pixels, ra_image *out, char *err, size_t err_len);

/// Decodes a baseline or progressive JPEG (gray, YCbCr or RGB) to RGB with the accurate integer IDCT and fancy
/// upsampling. Same contract as ra_png_decode.
int ra_jpeg_decode(const uint8_t *data, size_t size, uint64_t max_pixels, ra_image *out, char *err, size_t err_len);

/// Frees pixels returned by a decoder (NULL is ignored).
void ra_image_free(uint8_t *pixels);

#ifdef __cplusplus
}
#endif
#endif
