// Memory for the engine's large buffers, and returning freed heap memory to the operating system.
#ifndef RUNANYWHERE_RA_MEMORY_H
#define RUNANYWHERE_RA_MEMORY_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Zeroed, page-aligned memory straight from the operating system (mmap), for buffers of megabytes
/// (KV cache, activations). Unlike malloc'd blocks, which glibc may keep in an arena after free once its
/// dynamic mmap threshold has grown, these go back to the system the moment they are freed.
/// Returns NULL when the system refuses.
void *ra_alloc_pages(size_t bytes);

/// Frees memory from ra_alloc_pages (`bytes` as passed to it). NULL is ignored.
void ra_free_pages(void *ptr, size_t bytes);

/// Asks the C allocator to give free heap pages back to the system (glibc: malloc_trim on every arena).
/// Returns 1 when memory was released, 0 when there was nothing to release or the allocator cannot.
int ra_release_free_memory(void);

/// Asks for [p, p + bytes) to be backed by huge pages where the system has them (Linux: madvise MADV_HUGEPAGE on the
/// pages it overlaps, which must all be mapped; for a file mapping, pages the page cache reads in afterwards come in folios of up to
/// 2 MiB that one TLB entry maps). Returns 1 when asked, 0 where there are none or the system refused.
int ra_advise_huge_pages(void *p, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
