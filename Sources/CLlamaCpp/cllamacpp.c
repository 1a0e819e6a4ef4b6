// Layout checks of RunAnywhere's llama.cpp declarations, and the log sink the backend installs.
#include "cllamacpp.h"

#include <string.h>

// Sizes and offsets of the pinned llama.cpp version's structs on 64-bit targets, as the C header of
// llama.cpp 0c1e570 lays them out (cross-checked with ctypes.sizeof/offsetof on llama-cpp-python 0.3.36's
// own ctypes mirror of them). A drift in the declarations fails the build here instead of corrupting a call.
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(ra_llama_model_params) == 80, "llama_model_params size");
_Static_assert(offsetof(ra_llama_model_params, n_gpu_layers) == 16, "llama_model_params.n_gpu_layers");
_Static_assert(offsetof(ra_llama_model_params, tensor_split) == 40, "llama_model_params.tensor_split");
_Static_assert(offsetof(ra_llama_model_params, vocab_only) == 72, "llama_model_params.vocab_only");
_Static_assert(sizeof(ra_llama_context_params) == 160, "llama_context_params size");
_Static_assert(offsetof(ra_llama_context_params, n_threads) == 28, "llama_context_params.n_threads");
_Static_assert(offsetof(ra_llama_context_params, rope_freq_base) == 56, "llama_context_params.rope_freq_base");
_Static_assert(offsetof(ra_llama_context_params, cb_eval) == 88, "llama_context_params.cb_eval");
_Static_assert(offsetof(ra_llama_context_params, type_k) == 104, "llama_context_params.type_k");
_Static_assert(offsetof(ra_llama_context_params, embeddings) == 128, "llama_context_params.embeddings");
_Static_assert(offsetof(ra_llama_context_params, samplers) == 136, "llama_context_params.samplers");
_Static_assert(sizeof(ra_llama_batch) == 56, "llama_batch size");
#endif

enum { RA_LOG_ERROR = 4, RA_LOG_CONT = 5 };

// Per thread: llama.cpp logs a load's or a decode's errors on the thread that called it, and the backend clears, calls
// and reads on that one thread. A process-wide buffer let one load's clear wipe another's reason when two models
// loaded at once (an unknown architecture then read as an unreadable file, with no reason).
static _Thread_local char last_error[1024];
static _Thread_local int continuing_error;

static void append_error(const char *text) {
    size_t used = strlen(last_error);
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r')) n--;
    size_t room = sizeof(last_error) - 1 - used;
    if (n > room) n = room;
    memcpy(last_error + used, text, n);
    last_error[used + n] = 0;
}

void ra_llama_log_sink(int32_t level, const char *text, void *user_data) {
    (void)user_data;
    if (text == NULL) return;
    if (level == RA_LOG_ERROR) {
        // Error lines since the last clear are kept, joined: the first usually says why, the last what failed.
        if (last_error[0] != 0) append_error("; ");
        append_error(text);
        continuing_error = 1;
    } else if (level == RA_LOG_CONT && continuing_error) {
        append_error(text);
    } else {
        continuing_error = 0;
    }
}

size_t ra_llama_last_error(char *buf, size_t size) {
    if (buf == NULL || size == 0) return 0;
    size_t n = strlen(last_error);
    if (n > size - 1) n = size - 1;
    memcpy(buf, last_error, n);
    buf[n] = 0;
    return n;
}

void ra_llama_clear_last_error(void) {
    last_error[0] = 0;
    continuing_error = 0;
}
