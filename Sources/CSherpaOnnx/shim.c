#include "csherpa_onnx.h"

uint64_t ra_so_offline_recognizer_config_size(void) { return sizeof(ra_so_offline_recognizer_config); }
uint64_t ra_so_vad_config_size(void) { return sizeof(ra_so_vad_config); }

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int ra_so_trim_heap(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
