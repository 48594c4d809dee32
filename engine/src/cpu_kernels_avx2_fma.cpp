// The cpu kernels for x86-64 with AVX2 and FMA: 256-bit vectors. Built with -mavx2 -mfma (engine/CMakeLists.txt);
// run only where avx2_fma_cpu_kernels() found both.
#define MLPCORE_CPU_ISA avx2_fma
#define MLPCORE_CPU_VECTOR_BYTES 32
#define MLPCORE_CPU_TILE_VECTORS 3
#include "engine/src/cpu_kernels_impl.h"

