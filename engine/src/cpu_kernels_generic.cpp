// The cpu kernels for the target's baseline instruction set (SSE2 on x86-64): 128-bit vectors.
#define MLPCORE_CPU_ISA generic
#define MLPCORE_CPU_VECTOR_BYTES 16
#define MLPCORE_CPU_TILE_VECTORS 3
#include "engine/src/cpu_kernels_impl.h"

