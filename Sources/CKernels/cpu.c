#include "ckernels.h"
int ra_cpu_features(void) { return 0; }
