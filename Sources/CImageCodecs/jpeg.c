// JPEG decoding with libjpeg-turbo, from memory, with size and scan limits checked before decoding.
#include "ra_image.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int code;
    char message[JMSG_LENGTH_MAX + 64];
} ra_jpeg_error;

static void ra_jpeg_exit(j_common_ptr cinfo) {
    ra_jpeg_error *e = (ra_jpeg_error *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    snprintf(e->message, sizeof e->message, "malformed JPEG: %s", text);
    longjmp(e->jump, 1);
}

/// Counts warnings (corrupt or truncated data) without printing them.
static void ra_jpeg_quiet(j_common_ptr cinfo, int level) {
    if (level < 0) cinfo->err->num_warnings++;
}

/// Progressive files can hold thousands of tiny scans that each cost a pass over the image (a CPU bomb);
/// stop after 1000 as libjpeg-turbo's own tools suggest.
static void ra_jpeg_progress(j_common_ptr cinfo) {
    if (cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->input_scan_number > 1000) {
        ra_jpeg_error *e = (ra_jpeg_error *)cinfo->err;
        e->code = RA_IMAGE_MALFORMED;
        snprintf(e->message, sizeof e->message, "malformed JPEG: more than 1000 progressive scans");
        longjmp(e->jump, 1);
    }
}

int ra_jpeg_decode(const uint8_t *data, size_t size, uint64_t max_pixels, ra_image *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (size < 3 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF) {
        if (err && err_len) snprintf(err, err_len, "not a JPEG file (no JPEG signature)");
        return RA_IMAGE_NOT_THIS_FORMAT;
    }
    struct jpeg_decompress_struct cinfo;
    ra_jpeg_error jerr;
    struct jpeg_progress_mgr progress;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&jerr.base);
    jerr.base.error_exit = ra_jpeg_exit;
    jerr.base.emit_message = ra_jpeg_quiet;
    jerr.code = RA_IMAGE_MALFORMED;
    jerr.message[0] = 0;
    uint8_t *volatile pixels = NULL;
    if (setjmp(jerr.jump)) {
        free(pixels);
        jpeg_destroy_decompress(&cinfo);
        if (err && err_len) snprintf(err, err_len, "%s", jerr.message);
        return jerr.code;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.mem->max_memory_to_use = 512L << 20;
    progress.progress_monitor = ra_jpeg_progress;
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    const uint64_t w = cinfo.image_width, h = cinfo.image_height;
    if (w == 0 || h == 0 || w > 65535 || h > 65535 || w * h > max_pixels) {
        jerr.code = RA_IMAGE_TOO_LARGE;
        snprintf(jerr.message, sizeof jerr.message, "the JPEG is %llux%llu pixels, more than the limit of %llu pixels",
                 (unsigned long long)w, (unsigned long long)h, (unsigned long long)max_pixels);
        longjmp(jerr.jump, 1);
    }
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        jerr.code = RA_IMAGE_UNSUPPORTED;
        snprintf(jerr.message, sizeof jerr.message, "CMYK JPEG images are not supported; convert the image to RGB");
        longjmp(jerr.jump, 1);
    }
    cinfo.out_color_space = JCS_RGB;
    cinfo.dct_method = JDCT_ISLOW;
    cinfo.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_components != 3 || cinfo.output_width != w || cinfo.output_height != h) {
        jerr.code = RA_IMAGE_UNSUPPORTED;
        snprintf(jerr.message, sizeof jerr.message, "JPEG could not be converted to RGB");
        longjmp(jerr.jump, 1);
    }
    pixels = (uint8_t *)malloc((size_t)(w * h * 3));
    if (!pixels) {
        jerr.code = RA_IMAGE_NO_MEMORY;
        snprintf(jerr.message, sizeof jerr.message, "no memory for a %llux%llu image", (unsigned long long)w, (unsigned long long)h);
        longjmp(jerr.jump, 1);
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pixels + (size_t)cinfo.output_scanline * w * 3;
        if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) break;
    }
    // A truncated file decodes with gray filler after libjpeg's warning; report it rather than return half an image.
    const int truncated = cinfo.output_scanline < cinfo.output_height || jerr.base.num_warnings > 0;
    jpeg_abort_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    if (truncated) {
        free(pixels);
        if (err && err_len) snprintf(err, err_len, "malformed JPEG: the data is truncated or corrupt");
        return RA_IMAGE_MALFORMED;
    }
    out->pixels = pixels;
    out->width = (uint32_t)w;
    out->height = (uint32_t)h;
    return RA_IMAGE_OK;
}
