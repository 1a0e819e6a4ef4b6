#!/usr/bin/env bash
# Checks that our declarations (Sources/CSherpaOnnx/include/csherpa_onnx.h) have the memory layout of
# sherpa-onnx's documented C header in the installed wheel: compiles a C file that asserts equal sizes
# and offsets of every struct and field the backend writes or reads. Run after scripts/install-speech.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
inc="${RUNANYWHERE_SHERPA_ONNX_DIR:-$root/.runanywhere-deps/sherpa-onnx}/sherpa_onnx/include"
[ -f "$inc/sherpa-onnx/c-api/c-api.h" ] || { echo "check-sherpa-abi: no c-api.h under $inc (run scripts/install-speech.sh)" >&2; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
{
  echo '#include <stddef.h>'
  echo '#include "sherpa-onnx/c-api/c-api.h"'
  echo '#include "csherpa_onnx.h"'
  echo '#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), #a " size");'
  echo '#define AT(a, fa, b, fb) _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa);'
  cat <<'C'
SAME(ra_so_offline_recognizer_config, SherpaOnnxOfflineRecognizerConfig)
SAME(ra_so_offline_model, SherpaOnnxOfflineModelConfig)
SAME(ra_so_whisper, SherpaOnnxOfflineWhisperModelConfig)
SAME(ra_so_moonshine, SherpaOnnxOfflineMoonshineModelConfig)
SAME(ra_so_offline_result, SherpaOnnxOfflineRecognizerResult)
SAME(ra_so_vad_config, SherpaOnnxVadModelConfig)
SAME(ra_so_vad_model, SherpaOnnxSileroVadModelConfig)
SAME(ra_so_speech_segment, SherpaOnnxSpeechSegment)
AT(ra_so_offline_recognizer_config, features, SherpaOnnxOfflineRecognizerConfig, feat_config)
AT(ra_so_offline_recognizer_config, model, SherpaOnnxOfflineRecognizerConfig, model_config)
AT(ra_so_offline_recognizer_config, decoding_method, SherpaOnnxOfflineRecognizerConfig, decoding_method)
AT(ra_so_offline_recognizer_config, ctc_fst_decoder, SherpaOnnxOfflineRecognizerConfig, ctc_fst_decoder_config)
AT(ra_so_offline_model, whisper, SherpaOnnxOfflineModelConfig, whisper)
AT(ra_so_offline_model, tokens, SherpaOnnxOfflineModelConfig, tokens)
AT(ra_so_offline_model, num_threads, SherpaOnnxOfflineModelConfig, num_threads)
AT(ra_so_offline_model, provider, SherpaOnnxOfflineModelConfig, provider)
AT(ra_so_offline_model, moonshine, SherpaOnnxOfflineModelConfig, moonshine)
AT(ra_so_offline_model, cohere_transcribe, SherpaOnnxOfflineModelConfig, cohere_transcribe)
AT(ra_so_whisper, language, SherpaOnnxOfflineWhisperModelConfig, language)
AT(ra_so_whisper, tail_paddings, SherpaOnnxOfflineWhisperModelConfig, tail_paddings)
AT(ra_so_moonshine, merged_decoder, SherpaOnnxOfflineMoonshineModelConfig, merged_decoder)
AT(ra_so_offline_result, text, SherpaOnnxOfflineRecognizerResult, text)
AT(ra_so_offline_result, segment_timestamps, SherpaOnnxOfflineRecognizerResult, segment_timestamps)
AT(ra_so_offline_result, segment_count, SherpaOnnxOfflineRecognizerResult, segment_count)
AT(ra_so_vad_config, sample_rate, SherpaOnnxVadModelConfig, sample_rate)
AT(ra_so_vad_config, provider, SherpaOnnxVadModelConfig, provider)
AT(ra_so_vad_config, ten, SherpaOnnxVadModelConfig, ten_vad)
AT(ra_so_vad_model, window_size, SherpaOnnxSileroVadModelConfig, window_size)
AT(ra_so_vad_model, max_speech_duration, SherpaOnnxSileroVadModelConfig, max_speech_duration)
AT(ra_so_speech_segment, samples, SherpaOnnxSpeechSegment, samples)
AT(ra_so_speech_segment, n, SherpaOnnxSpeechSegment, n)
C
} > "$tmp/abi.c"
cc -std=c11 -fsyntax-only -I "$inc" -I "$root/Sources/CSherpaOnnx/include" "$tmp/abi.c"
echo "check-sherpa-abi: layouts match $inc/sherpa-onnx/c-api/c-api.h" >&2
