#pragma once
// Fragment vectors: clang's ext_vector_type for HIP (what the AMD matrix builtins take), a plain array with
// the same indexing in CUDA and on the host emulator. half_t is the 16-bit float of the compiler at hand.
#include "ops/arch_config.h"
#include "ops/host_device.h"

#if defined(__CUDACC_RTC__)
#include "ops/nvrtc_half.h"
#elif defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace mlpcore::ops {

#if defined(__CUDACC_RTC__)
using half_t = NvrtcHalf;
#elif defined(__CUDACC__)
using half_t = __half;
#else
using half_t = _Float16;
#endif

#if defined(__clang__) && !MLPCORE_EMULATOR && !defined(__CUDACC__)
template <class T, int N>
using vec = T __attribute__((ext_vector_type(N)));
#else
// Aligned like the hardware vector of its size (at most 16 bytes), so a fragment is one wide load.
constexpr unsigned vec_align(unsigned bytes) { return bytes >= 16 ? 16 : bytes >= 8 ? 8 : bytes >= 4 ? 4 : 2; }
template <class T, int N>
struct alignas(vec_align(sizeof(T) * N)) vec {
  T e[N];
  MLPCORE_HOST_DEVICE constexpr T& operator[](int i) { return e[i]; }
  MLPCORE_HOST_DEVICE constexpr const T& operator[](int i) const { return e[i]; }
};
#endif

}  // namespace mlpcore::ops
