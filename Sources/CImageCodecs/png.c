// PNG decoding with libpng, from memory, with size limits checked before the pixel buffer is allocated.
#include "ra_image.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size, offset;
    char message[200];
} ra_png_source;

static void ra_png_read(png_structp png, png_bytep dst, size_t n) {
    ra_png_source *src = (ra_png_source *)png_get_io_ptr(png);
    if (n > src->size - src->offset) png_error(png, "the PNG data ends early (truncated file)");
    memcpy(dst, src->data + src->offset, n);
    src->offset += n;
}

static void ra_png_error(png_structp png, png_const_charp msg) {
    ra_png_source *src = (ra_png_source *)png_get_error_ptr(png);
    snprintf(src->message, sizeof src->message, "%s", msg);
    png_longjmp(png, 1);
}

static void ra_png_warning(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

static int ra_png_fail(int code, const char *msg, char *err, size_t err_len) {
    if (err && err_len) snprintf(err, err_len, "%s", msg);
    return code;
}

int ra_png_decode(const uint8_t *data, size_t size, uint64_t max_pixels, ra_image *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        return ra_png_fail(RA_IMAGE_NOT_THIS_FORMAT, "not a PNG file (no PNG signature)", err, err_len);
    }
    ra_png_source src = { data, size, 0, "" };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, ra_png_error, ra_png_warning);
    if (!png) return ra_png_fail(RA_IMAGE_NO_MEMORY, "libpng could not start", err, err_len);
    png_infop info = png_create_info_struct(png);
    // volatile: changed between setjmp and a longjmp back to it.
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    volatile int code = RA_IMAGE_MALFORMED;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return ra_png_fail(RA_IMAGE_NO_MEMORY, "libpng could not start", err, err_len);
    }
    if (setjmp(png_jmpbuf(png))) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        if (code == RA_IMAGE_MALFORMED) {
            char msg[240];
            snprintf(msg, sizeof msg, "malformed PNG: %s", src.message[0] ? src.message : "libpng stopped");
            return ra_png_fail(code, msg, err, err_len);
        }
        return ra_png_fail(code, src.message, err, err_len);
    }
    png_set_read_fn(png, &src, ra_png_read);
    png_set_user_limits(png, 65535, 65535);
    png_set_chunk_cache_max(png, 1000);              // ancillary chunks kept
    png_set_chunk_malloc_max(png, 8u << 20);         // bytes of one ancillary chunk (iCCP, zTXt ...)
    png_read_info(png, info);
    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if ((uint64_t)w * h > max_pixels) {
        code = RA_IMAGE_TOO_LARGE;
        snprintf(src.message, sizeof src.message, "the PNG is %ux%u pixels, more than the limit of %llu pixels",
                 (unsigned)w, (unsigned)h, (unsigned long long)max_pixels);
        png_longjmp(png, 1);
    }
    // To 8-bit RGB like stb_image asked for 3 channels: expand palette and low-depth gray, keep the high byte of
    // 16-bit samples, drop alpha without compositing, gray to RGB.
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * 3) {
        code = RA_IMAGE_UNSUPPORTED;
        snprintf(src.message, sizeof src.message, "PNG pixel format could not be converted to 8-bit RGB");
        png_longjmp(png, 1);
    }
    pixels = (uint8_t *)malloc((size_t)w * h * 3);
    rows = (png_bytep *)malloc(sizeof(png_bytep) * h);
    if (!pixels || !rows) {
        code = RA_IMAGE_NO_MEMORY;
        snprintf(src.message, sizeof src.message, "no memory for a %ux%u image", (unsigned)w, (unsigned)h);
        png_longjmp(png, 1);
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pixels + (size_t)y * w * 3;
    png_read_image(png, rows);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    out->pixels = pixels;
    out->width = w;
    out->height = h;
    return RA_IMAGE_OK;
}

void ra_image_free(uint8_t *pixels) { free(pixels); }
