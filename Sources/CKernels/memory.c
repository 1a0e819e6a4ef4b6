#include "ra_memory.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define RA_HAVE_MMAP 1
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#include <unistd.h>
#define RA_HAVE_THP 1

// The pages overlapping [p, p + bytes): *start and the length, 0 when there are none.
static size_t ra_pages_of(const void *p, size_t bytes, uintptr_t *start) {
    const long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || bytes == 0) return 0;
    const uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);
    const uintptr_t e = ((uintptr_t)p + bytes + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    *start = a;
    return e > a ? (size_t)(e - a) : 0;
}
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

int ra_advise_huge_pages(void *p, size_t bytes) {
#if RA_HAVE_THP
    uintptr_t a;
    const size_t n = ra_pages_of(p, bytes, &a);
    return n > 0 && madvise((void *)a, n, MADV_HUGEPAGE) == 0;
#else
    (void)p; (void)bytes;
    return 0;
#endif
}
