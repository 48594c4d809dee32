#pragma once
// Our names for the AMD matrix-core and cross-lane instructions. On the device they are the compiler
// builtins (only where the target has them; elsewhere a trap that names the instruction); in the host
// emulator build they run on the wave emulator.
#include <cstdint>

#include "ops/gpu_platform.h"
#include "ops/simd_types.h"

#if MLPCORE_EMULATOR
#include <cstring>

#include "ops/emu/amd_instructions.h"
#endif

namespace mlpcore::ops::amd {

using f16x2 = vec<half_t, 2>;
using f16x4 = vec<half_t, 4>;
using f16x8 = vec<half_t, 8>;
using f16x16 = vec<half_t, 16>;
using f32x4 = vec<float, 4>;
using f32x8 = vec<float, 8>;

#if MLPCORE_EMULATOR
template <class D, class A, class B>
D emulate(emu::amd::MatrixInstruction instruction, const A& a, const B& b, const D& c) {
  std::uint32_t ra[emu::amd::kMaxRegs] = {}, rb[emu::amd::kMaxRegs] = {}, rc[emu::amd::kMaxRegs] = {}, rd[emu::amd::kMaxRegs] = {};
  std::memcpy(ra, &a, sizeof a);
  std::memcpy(rb, &b, sizeof b);
  std::memcpy(rc, &c, sizeof c);
  emu::amd::matrix_op(instruction, ra, rb, rc, rd);
  D d;
  std::memcpy(&d, rd, sizeof d);
  return d;
}
#endif

// Two floats to packed float16, round toward zero (v_cvt_pkrtz_f16_f32), `lo` in element 0.
MLPCORE_DEVICE f16x2 cvt_pkrtz(float lo, float hi) {
#if MLPCORE_EMULATOR
  return __builtin_bit_cast(f16x2, emu::amd::cvt_pkrtz(lo, hi));
#elif MLPCORE_DEVICE_AMD
  return __builtin_bit_cast(f16x2, __builtin_amdgcn_cvt_pkrtz(lo, hi));
#else
  trap("cvt_pkrtz outside an AMD device compile");
#endif
}

// RDNA3: D = A B + C, wave32; A and B must be replicated in lanes 16-31.
MLPCORE_DEVICE f32x8 wmma_f32_16x16x16_f16_gfx11(const f16x16& a, const f16x16& b, const f32x8& c) {
#if MLPCORE_EMULATOR
  return emulate(emu::amd::MatrixInstruction::wmma_gfx11_f32_f16, a, b, c);
#elif MLPCORE_ARCH_GFX11
  return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
#else
  trap("v_wmma_f32_16x16x16_f16 (gfx11) in a kernel built for a target without it");
#endif
}

// RDNA4: D = A B + C, wave32, 8 halves of A and B per lane (K interleaved, see tile_wmma_gfx12.h).
MLPCORE_DEVICE f32x8 wmma_f32_16x16x16_f16_gfx12(const f16x8& a, const f16x8& b, const f32x8& c) {
#if MLPCORE_EMULATOR
  return emulate(emu::amd::MatrixInstruction::wmma_gfx12_f32_f16, a, b, c);
#elif MLPCORE_ARCH_GFX12
  return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c);
#else
  trap("v_wmma_f32_16x16x16_f16 (gfx12) in a kernel built for a target without it");
#endif
}

// CDNA: D = A B + C, wave64, 4 halves of A and B per lane.
MLPCORE_DEVICE f32x4 mfma_f32_16x16x16_f16(const f16x4& a, const f16x4& b, const f32x4& c) {
#if MLPCORE_EMULATOR
  return emulate(emu::amd::MatrixInstruction::mfma_f32_16x16x16_f16, a, b, c);
#elif MLPCORE_ARCH_GFX9
  return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
#else
  trap("v_mfma_f32_16x16x16_f16 in a kernel built for a target without it");
#endif
}

// v_pk_max_f16: the larger of each pair of halves, a NaN losing to a number. Written as the instruction:
// as llvm.maxnum in IEEE mode, the compiler would first quiet both operands (two more instructions).
MLPCORE_DEVICE std::uint32_t pk_max_f16(std::uint32_t a, std::uint32_t b) {
#if MLPCORE_EMULATOR
  return emu::amd::pk_max_f16(a, b);
#elif MLPCORE_DEVICE_AMD
  std::uint32_t d;
  asm("v_pk_max_f16 %0, %1, %2" : "=v"(d) : "v"(a), "v"(b));
  return d;
#else
  trap("v_pk_max_f16 outside an AMD device compile");
#endif
}

// The magnitudes of two packed halves: their sign bits cleared (VOP3P instructions have no abs modifier).
MLPCORE_DEVICE constexpr std::uint32_t abs_f16x2(std::uint32_t x) { return x & 0x7fff7fffu; }

// gfx10+: read `src` from the lane of the other 16-lane row selected by the nibbles of sel_hi:sel_lo.
MLPCORE_DEVICE std::uint32_t permlanex16(std::uint32_t src, std::uint32_t sel_lo, std::uint32_t sel_hi) {
#if MLPCORE_EMULATOR
  return emu::amd::permlanex16(0u, src, sel_lo, sel_hi);
#elif MLPCORE_ARCH_GFX11 || MLPCORE_ARCH_GFX12
  return __builtin_amdgcn_permlanex16(0u, src, sel_lo, sel_hi, false, false);
#else
  trap("v_permlanex16_b32 in a kernel built for a target without it");
#endif
}

}  // namespace mlpcore::ops::amd
