// RunAnywhere's own declarations of the small part of sherpa-onnx's C API (version 2.0.1) that the
// speech backend calls. Written from the documented header `sherpa-onnx/c-api/c-api.h` of the
// sherpa-onnx-core 2.0.1 wheel; only the memory layout has to match (scripts/check-sherpa-abi.sh
// compares every size and offset against the real header). Nothing here is linked: the library is
// opened at run time (dlopen) and these function-pointer types are what its symbols are cast to.
#ifndef CSHERPA_ONNX_H
#define CSHERPA_ONNX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- Pieces of the offline (non-streaming) recognizer configuration ----------------------------

/// Feature extraction: sample rate and mel bins (0 = the library's defaults).
typedef struct { int32_t sample_rate; int32_t feature_dim; } ra_so_features;

/// Model configurations this project leaves empty are declared only by their shape:
/// `ra_so_paths1` is one path, `ra_so_paths2` two, `ra_so_paths3` three.
typedef struct { const char *a; } ra_so_paths1;
typedef struct { const char *a; const char *b; } ra_so_paths2;
typedef struct { const char *a; const char *b; const char *c; } ra_so_paths3;

/// Whisper: encoder, decoder, language ("en"), task ("transcribe"), tail padding, timestamp switches.
typedef struct {
  const char *encoder;
  const char *decoder;
  const char *language;
  const char *task;
  int32_t tail_paddings;
  int32_t token_timestamps;
  int32_t segment_timestamps;
} ra_so_whisper;

/// Moonshine v1 uses preprocessor + encoder + uncached + cached decoders; v2 uses encoder + merged decoder.
typedef struct {
  const char *preprocessor;
  const char *encoder;
  const char *uncached_decoder;
  const char *cached_decoder;
  const char *merged_decoder;
} ra_so_moonshine;

typedef struct { const char *model; const char *language; int32_t use_itn; } ra_so_sense_voice;
typedef struct { const char *encoder; const char *decoder; const char *src_lang; const char *tgt_lang; int32_t use_pnc; } ra_so_canary;
typedef struct { const char *encoder; const char *decoder; const char *language; int32_t use_punct; int32_t use_itn; } ra_so_cohere;

typedef struct {
  const char *encoder_adaptor, *llm, *embedding, *tokenizer, *system_prompt, *user_prompt;
  int32_t max_new_tokens;
  float temperature;
  float top_p;
  int32_t seed;
  const char *language;
  int32_t itn;
  const char *hotwords;
} ra_so_funasr_nano;

typedef struct {
  const char *conv_frontend, *encoder, *decoder, *tokenizer;
  int32_t max_total_len;
  int32_t max_new_tokens;
  float temperature;
  float top_p;
  int32_t seed;
  const char *hotwords;
} ra_so_qwen3_asr;

/// Every model family the library knows, in the library's order; we fill `whisper` or `moonshine`.
typedef struct {
  ra_so_paths3 transducer;
  ra_so_paths1 paraformer;
  ra_so_paths1 nemo_ctc;
  ra_so_whisper whisper;
  ra_so_paths1 tdnn;
  const char *tokens;
  int32_t num_threads;
  int32_t debug;
  const char *provider;
  const char *model_type;
  const char *modeling_unit;
  const char *bpe_vocab;
  const char *telespeech_ctc;
  ra_so_sense_voice sense_voice;
  ra_so_moonshine moonshine;
  ra_so_paths2 fire_red_asr;
  ra_so_paths1 dolphin;
  ra_so_paths1 zipformer_ctc;
  ra_so_canary canary;
  ra_so_paths1 wenet_ctc;
  ra_so_paths1 omnilingual;
  ra_so_paths1 medasr;
  ra_so_funasr_nano funasr_nano;
  ra_so_paths1 fire_red_asr_ctc;
  ra_so_qwen3_asr qwen3_asr;
  ra_so_cohere cohere_transcribe;
} ra_so_offline_model;

/// The whole recognizer configuration.
typedef struct {
  ra_so_features features;
  ra_so_offline_model model;
  struct { const char *model; float scale; } language_model;
  const char *decoding_method;
  int32_t max_active_paths;
  const char *hotwords_file;
  float hotwords_score;
  const char *rule_fsts;
  const char *rule_fars;
  float blank_penalty;
  ra_so_paths3 homophone_replacer;
  struct { const char *graph; int32_t max_active; } ctc_fst_decoder;
} ra_so_offline_recognizer_config;

/// A decoding result; owned by the library until destroyed.
typedef struct {
  const char *text;
  float *timestamps;
  int32_t count;
  const char *tokens;
  const char *const *tokens_arr;
  const char *json;
  const char *lang;
  const char *emotion;
  const char *event;
  float *durations;
  float *ys_log_probs;
  const float *segment_timestamps;
  const float *segment_durations;
  const char *segment_texts;
  const char *const *segment_texts_arr;
  int32_t segment_count;
} ra_so_offline_result;

// ---- Voice activity detection (Silero) ----------------------------------------------------------

/// One VAD model's settings (the Silero and TEN configurations share this shape).
typedef struct {
  const char *model;
  float threshold;
  float min_silence_duration;
  float min_speech_duration;
  int32_t window_size;
  float max_speech_duration;
} ra_so_vad_model;

typedef struct {
  ra_so_vad_model silero;
  int32_t sample_rate;
  int32_t num_threads;
  const char *provider;
  int32_t debug;
  ra_so_vad_model ten;
} ra_so_vad_config;

/// A detected speech segment: first sample index and the samples.
typedef struct {
  int64_t start;
  float *samples;
  int32_t n;
} ra_so_speech_segment;

// ---- Entry points (resolved with dlsym; opaque handles are plain pointers) ----------------------

typedef const char *(*ra_so_version_fn)(void);
typedef const void *(*ra_so_create_offline_recognizer_fn)(const ra_so_offline_recognizer_config *config);
typedef void (*ra_so_destroy_offline_recognizer_fn)(const void *recognizer);
typedef const void *(*ra_so_create_offline_stream_fn)(const void *recognizer);
typedef void (*ra_so_destroy_offline_stream_fn)(const void *stream);
typedef void (*ra_so_accept_waveform_offline_fn)(const void *stream, int32_t sample_rate, const float *samples, int32_t n);
typedef void (*ra_so_decode_offline_stream_fn)(const void *recognizer, const void *stream);
typedef const ra_so_offline_result *(*ra_so_get_offline_result_fn)(const void *stream);
typedef void (*ra_so_destroy_offline_result_fn)(const ra_so_offline_result *result);

typedef const void *(*ra_so_create_vad_fn)(const ra_so_vad_config *config, float buffer_seconds);
typedef void (*ra_so_destroy_vad_fn)(const void *vad);
typedef void (*ra_so_vad_accept_fn)(const void *vad, const float *samples, int32_t n);
typedef int32_t (*ra_so_vad_empty_fn)(const void *vad);
typedef void (*ra_so_vad_void_fn)(const void *vad);
typedef const ra_so_speech_segment *(*ra_so_vad_front_fn)(const void *vad);
typedef void (*ra_so_destroy_segment_fn)(const ra_so_speech_segment *segment);

/// Returns freed heap pages to the system (glibc's malloc_trim); 0 elsewhere.
int ra_so_trim_heap(void);

/// Sizes of the structs above, for the layout check and for tests.
uint64_t ra_so_offline_recognizer_config_size(void);
uint64_t ra_so_vad_config_size(void);

#ifdef __cplusplus
}
#endif

#endif
