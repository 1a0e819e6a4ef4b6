#include "ra_memory.h"

#include <stdlib.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define RA_HAVE_MMAP 1
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void *ra_alloc_pages(size_t bytes) {
    if (bytes == 0) bytes = 1;
#if RA_HAVE_MMAP
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    return calloc(1, bytes);
#endif
}

void ra_free_pages(void *ptr, size_t bytes) {
    if (ptr == NULL) return;
    if (bytes == 0) bytes = 1;
#if RA_HAVE_MMAP
    munmap(ptr, bytes);
#else
    (void)bytes;
    free(ptr);
#endif
}

int ra_release_free_memory(void) {
#if defined(__GLIBC__)
    // Freed chunks in the middle of an arena stay resident until trimmed; after unloading a model
    // (tokenizer tables, metadata, per-thread buffers) that can be megabytes.
    return malloc_trim(0);
#else
    return 0;
#endif
}
