#include "ra_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int ra_release_free_memory(void) {
#if defined(__GLIBC__)
    // Freed chunks in the middle of an arena stay resident until trimmed; after unloading a model
    // (tokenizer tables, metadata, per-thread buffers) that can be tens of megabytes.
    return malloc_trim(0);
#else
    return 0;
#endif
}
