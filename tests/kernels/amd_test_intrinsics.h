#pragma once
// AMD matrix instructions that only the tests' kernels use (AMD's published examples), named as
// ops/amd_intrinsics.h names the library's.
#include "ops/amd_intrinsics.h"

namespace mlpcore::ops::amd {

// RDNA3 with float16 C/D in bits 15:0 of each VGPR (OPSEL = 0): element 2i of c/d is row 2i + lane/16.
MLPCORE_DEVICE f16x16 wmma_f16_16x16x16_f16_gfx11(const f16x16& a, const f16x16& b, const f16x16& c) {
#if MLPCORE_EMULATOR
  return emulate(emu::amd::MatrixInstruction::wmma_gfx11_f16_f16, a, b, c);
#elif MLPCORE_ARCH_GFX11
  return __builtin_amdgcn_wmma_f16_16x16x16_f16_w32(a, b, c, false);
#else
  trap("v_wmma_f16_16x16x16_f16 (gfx11) in a kernel built for a target without it");
#endif
}

// CDNA: fp32 inputs, K = 4, one value of A and B per lane.
MLPCORE_DEVICE f32x4 mfma_f32_16x16x4_f32(float a, float b, const f32x4& c) {
#if MLPCORE_EMULATOR
  return emulate(emu::amd::MatrixInstruction::mfma_f32_16x16x4_f32, a, b, c);
#elif MLPCORE_ARCH_GFX9
  return __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, c, 0, 0, 0);
#else
  trap("v_mfma_f32_16x16x4_f32 in a kernel built for a target without it");
#endif
}

}  // namespace mlpcore::ops::amd
