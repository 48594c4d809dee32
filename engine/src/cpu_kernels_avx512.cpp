// The cpu kernels for x86-64 with AVX-512F: 512-bit vectors, 32 registers. Built with -mavx512f -mfma
// (engine/CMakeLists.txt); run only where best_cpu_kernels() found both.
#define MLPCORE_CPU_ISA avx512
#define MLPCORE_CPU_VECTOR_BYTES 64
#define MLPCORE_CPU_TILE_VECTORS 6
#include "engine/src/cpu_kernels_impl.h"

