// Returning freed heap memory to the operating system (used after a model is unloaded).
#ifndef RUNANYWHERE_RA_MEMORY_H
#define RUNANYWHERE_RA_MEMORY_H

#ifdef __cplusplus
extern "C" {
#endif

/// Asks the C allocator to give free heap pages back to the system (glibc: malloc_trim on every arena).
/// Returns 1 when memory was released, 0 when there was nothing to release or the allocator cannot.
int ra_release_free_memory(void);

#ifdef __cplusplus
}
#endif
#endif
