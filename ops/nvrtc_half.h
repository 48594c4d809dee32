#pragma once
// float16 for NVRTC, which has no <cuda_fp16.h> without the CUDA toolkit's headers: a 16-bit value with
// the conversions the kernels use (cvt.rn to float16, as __half's constructor does, and exact widening).
#if !defined(__CUDACC_RTC__)
#error "ops/nvrtc_half.h is the float16 type under NVRTC only"
#endif

namespace mlpcore::ops {

struct alignas(2) NvrtcHalf {
  unsigned short bits;
  NvrtcHalf() = default;
  __device__ NvrtcHalf(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
  }
};

}  // namespace mlpcore::ops
