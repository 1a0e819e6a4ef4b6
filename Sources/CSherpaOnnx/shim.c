#include "csherpa_onnx.h"

uint64_t ra_so_offline_recognizer_config_size(void) { return sizeof(ra_so_offline_recognizer_config); }
uint64_t ra_so_vad_config_size(void) { return sizeof(ra_so_vad_config); }
