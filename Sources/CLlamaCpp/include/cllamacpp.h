// RunAnywhere's own declarations of the part of llama.cpp's C interface that the llama.cpp backend calls.
//
// Written for ONE llama.cpp version: the one llama-cpp-python 0.3.36 vendors (llama.cpp commit 0c1e570,
// llama_version() "0.5.0-dev"). Nothing here is linked: the backend opens libllama at run time with dlopen,
// looks every function up with dlsym and casts it to the pointer types below. The layouts of the two
// parameter structs were checked field by field against that version (see cllamacpp_layout.c, which
// fails to compile when a size or offset drifts, and RunAnywhereLlamaCpp's load-time check of the
// library's commit and of the default values these layouts read).
#ifndef RUNANYWHERE_CLLAMACPP_H
#define RUNANYWHERE_CLLAMACPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t ra_llama_token;

// Opaque handles (llama_model, llama_context, llama_vocab, llama_memory_i).
typedef struct ra_llama_model ra_llama_model;
typedef struct ra_llama_context ra_llama_context;
typedef struct ra_llama_vocab ra_llama_vocab;
typedef struct ra_llama_memory ra_llama_memory;

/// llama_model_params: how the weights are loaded. Enums are C ints.
typedef struct ra_llama_model_params {
    void *devices;                       // NULL-terminated device list; NULL = every device
    const void *tensor_buft_overrides;   // NULL = none
    int32_t n_gpu_layers;                // layers kept on a GPU; 0 = CPU only
    int32_t split_mode;                  // enum llama_split_mode
    int32_t load_mode;                   // enum llama_load_mode (-1 auto, 1 mmap, ...)
    int32_t lazy_mode;                   // enum llama_lazy_mode
    int32_t main_gpu;
    const float *tensor_split;
    bool (*progress_callback)(float progress, void *user_data);
    void *progress_callback_user_data;
    const void *kv_overrides;
    bool vocab_only;
    bool check_tensors;
    bool use_extra_bufts;                // weight repacking buffers
    bool no_host;
    bool no_alloc;
    bool load_mtp;
} ra_llama_model_params;

/// llama_context_params: the KV cache, batch sizes, threads and attention settings of one context.
typedef struct ra_llama_context_params {
    uint32_t n_ctx;
    uint32_t n_batch;
    uint32_t n_ubatch;
    uint32_t n_seq_max;
    uint32_t n_rs_seq;
    uint32_t n_outputs_max;
    uint32_t n_outputs_max_per_seq;
    int32_t n_threads;
    int32_t n_threads_batch;
    int32_t ctx_type;                    // enum llama_context_type
    int32_t rope_scaling_type;           // enum llama_rope_scaling_type
    int32_t pooling_type;                // enum llama_pooling_type
    int32_t attention_type;              // enum llama_attention_type
    int32_t flash_attn_type;             // enum llama_flash_attn_type (-1 auto, 0 off, 1 on)
    float rope_freq_base;
    float rope_freq_scale;
    float yarn_ext_factor;
    float yarn_attn_factor;
    float yarn_beta_fast;
    float yarn_beta_slow;
    uint32_t yarn_orig_ctx;
    float defrag_thold;
    void *cb_eval;
    void *cb_eval_user_data;
    int32_t type_k;                      // enum ggml_type of the K cache (1 = F16)
    int32_t type_v;                      // enum ggml_type of the V cache
    bool (*abort_callback)(void *data);
    void *abort_callback_data;
    bool embeddings;
    bool offload_kqv;
    bool no_perf;
    bool op_offload;
    bool swa_full;
    bool kv_unified;
    void *samplers;
    size_t n_samplers;
    ra_llama_context *ctx_other;
} ra_llama_context_params;

/// llama_batch: tokens with their positions, sequences and which of them produce logits.
typedef struct ra_llama_batch {
    int32_t n_tokens;
    ra_llama_token *token;
    float *embd;
    int32_t *pos;
    int32_t *n_seq_id;
    int32_t **seq_id;
    int8_t *logits;
} ra_llama_batch;

/// llama_chat_message.
typedef struct ra_llama_chat_message {
    const char *role;
    const char *content;
} ra_llama_chat_message;

// Function pointer types, one per function the backend looks up.
typedef const char *(*ra_llama_string_fn)(void);               // llama_version, ggml_commit, llama_print_system_info
typedef void (*ra_llama_void_fn)(void);                         // llama_backend_init
typedef void (*ra_llama_log_callback)(int32_t level, const char *text, void *user_data);
typedef void (*ra_llama_log_set_fn)(ra_llama_log_callback callback, void *user_data);
typedef ra_llama_model_params (*ra_llama_model_default_params_fn)(void);
typedef ra_llama_context_params (*ra_llama_context_default_params_fn)(void);
typedef ra_llama_model *(*ra_llama_model_load_fn)(const char *path, ra_llama_model_params params);
typedef void (*ra_llama_model_free_fn)(ra_llama_model *model);
typedef ra_llama_context *(*ra_llama_init_from_model_fn)(ra_llama_model *model, ra_llama_context_params params);
typedef void (*ra_llama_free_fn)(ra_llama_context *ctx);
typedef uint32_t (*ra_llama_n_ctx_fn)(const ra_llama_context *ctx);
typedef int32_t (*ra_llama_n_threads_fn)(ra_llama_context *ctx);                  // llama_n_threads
typedef uint64_t (*ra_llama_model_size_fn)(const ra_llama_model *model);
typedef int32_t (*ra_llama_model_desc_fn)(const ra_llama_model *model, char *buf, size_t size);
typedef const char *(*ra_llama_model_chat_template_fn)(const ra_llama_model *model, const char *name);
typedef const ra_llama_vocab *(*ra_llama_model_get_vocab_fn)(const ra_llama_model *model);
typedef int32_t (*ra_llama_vocab_n_tokens_fn)(const ra_llama_vocab *vocab);
typedef bool (*ra_llama_vocab_is_eog_fn)(const ra_llama_vocab *vocab, ra_llama_token token);
typedef ra_llama_token (*ra_llama_vocab_token_fn)(const ra_llama_vocab *vocab);  // llama_vocab_bos, llama_vocab_eos
typedef int32_t (*ra_llama_tokenize_fn)(const ra_llama_vocab *vocab, const char *text, int32_t text_len,
                                        ra_llama_token *tokens, int32_t n_tokens_max, bool add_special, bool parse_special);
typedef int32_t (*ra_llama_token_to_piece_fn)(const ra_llama_vocab *vocab, ra_llama_token token, char *buf,
                                              int32_t length, int32_t lstrip, bool special);
typedef int32_t (*ra_llama_chat_apply_template_fn)(const char *tmpl, const ra_llama_chat_message *chat, size_t n_msg,
                                                   bool add_assistant, char *buf, int32_t length);
typedef int32_t (*ra_llama_decode_fn)(ra_llama_context *ctx, ra_llama_batch batch);
typedef float *(*ra_llama_get_logits_ith_fn)(ra_llama_context *ctx, int32_t i);
typedef ra_llama_memory *(*ra_llama_get_memory_fn)(const ra_llama_context *ctx);
typedef void (*ra_llama_memory_clear_fn)(ra_llama_memory *memory, bool data);
typedef bool (*ra_llama_memory_seq_rm_fn)(ra_llama_memory *memory, int32_t seq_id, int32_t p0, int32_t p1);

/// A log callback that keeps llama.cpp quiet and remembers its error-level lines since the last clear (joined with
/// "; ", at most 1 KiB), per thread: the calling thread's clear and read see only the lines logged on it, so
/// concurrent loads keep their own reasons. Pass it to llama_log_set.
void ra_llama_log_sink(int32_t level, const char *text, void *user_data);
/// Copies the error lines llama.cpp logged on this thread since its last clear (NUL-terminated, possibly empty) into
/// buf; returns its length.
size_t ra_llama_last_error(char *buf, size_t size);
/// Forgets this thread's error lines (before an operation whose failure should be explained by its own message).
void ra_llama_clear_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
