#pragma once
// Our names for the NVIDIA tensor-core and conversion instructions: inline PTX on the device (sm_80 and
// newer; elsewhere a trap naming the instruction), the wave emulator in the host emulator build.
#include <cstdint>

#include "ops/gpu_platform.h"
#include "ops/simd_types.h"

#if MLPCORE_EMULATOR
#include <cstring>
#endif

#if MLPCORE_EMULATOR
#include "ops/emu/nv_instructions.h"
#endif

namespace mlpcore::ops::nv {

using f16x2 = vec<half_t, 2>;
using f32x4 = vec<float, 4>;
using f16x4 = vec<half_t, 4>;
using u32x2 = vec<std::uint32_t, 2>;

// cvt.rn.f16x2.f32: two floats to packed float16, round to nearest even, `lo` in bits 15:0.
MLPCORE_DEVICE f16x2 cvt_rn_f16x2(float lo, float hi) {
#if MLPCORE_EMULATOR
  return __builtin_bit_cast(f16x2, emu::nv::cvt_rn_f16x2(lo, hi));
#elif MLPCORE_DEVICE_NVIDIA
  std::uint32_t packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return __builtin_bit_cast(f16x2, packed);
#else
  trap("cvt.rn.f16x2.f32 outside a CUDA device compile");
#endif
}

// cvt.rn.relu.f16x2.f32: the same with ReLU applied (negative -> 0, NaN -> canonical NaN).
MLPCORE_DEVICE f16x2 cvt_rn_relu_f16x2(float lo, float hi) {
#if MLPCORE_EMULATOR
  return __builtin_bit_cast(f16x2, emu::nv::cvt_rn_relu_f16x2(lo, hi));
#elif MLPCORE_ARCH_SM80
  std::uint32_t packed;
  asm("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return __builtin_bit_cast(f16x2, packed);
#else
  trap("cvt.rn.relu.f16x2.f32 in a kernel built for a target before sm_80");
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: D (16x8) = A (16x16) B (16x8) + C, one warp;
// a: 4 registers of packed halves, b: 2, c/d: 4 floats per lane (PTX ISA fragment layouts). The mma
// asm statements are not volatile: they have no side effects, so the compiler may schedule them like
// any arithmetic.
MLPCORE_DEVICE f32x4 mma_m16n8k16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const f32x4& c) {
#if MLPCORE_EMULATOR
  f32x4 d;
  emu::nv::mma_m16n8k16(a, b, &c[0], &d[0]);
  return d;
#elif MLPCORE_ARCH_SM80
  f32x4 d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  return d;
#else
  trap("mma.sync.m16n8k16 in a kernel built for a target before sm_80");
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16: the same with float16 accumulation; c/d: 4 halves
// in 2 registers per lane, element order as for f32x4.
MLPCORE_DEVICE f16x4 mma_m16n8k16_f16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const f16x4& c) {
  const auto cr = __builtin_bit_cast(u32x2, c);
  u32x2 d;
#if MLPCORE_EMULATOR
  emu::nv::mma_m16n8k16_f16(a, b, cr.e, d.e);
#elif MLPCORE_ARCH_SM80
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(cr[0]), "r"(cr[1]));
#else
  trap("mma.sync.m16n8k16 in a kernel built for a target before sm_80");
#endif
  return __builtin_bit_cast(f16x4, d);
}

// mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32: K = 8; a: 2 registers, b: 1, c/d as m16n8k16 (its
// fragments are m16n8k16's first registers, element for element).
MLPCORE_DEVICE f32x4 mma_m16n8k8(const std::uint32_t (&a)[2], std::uint32_t b, const f32x4& c) {
#if MLPCORE_EMULATOR
  f32x4 d;
  emu::nv::mma_m16n8k8(a, b, &c[0], &d[0]);
  return d;
#elif MLPCORE_ARCH_SM80
  f32x4 d;
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  return d;
#else
  trap("mma.sync.m16n8k8 in a kernel built for a target before sm_80");
#endif
}

// mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16: the same with float16 accumulation.
MLPCORE_DEVICE f16x4 mma_m16n8k8_f16(const std::uint32_t (&a)[2], std::uint32_t b, const f16x4& c) {
  const auto cr = __builtin_bit_cast(u32x2, c);
  u32x2 d;
#if MLPCORE_EMULATOR
  emu::nv::mma_m16n8k8_f16(a, b, cr.e, d.e);
#elif MLPCORE_ARCH_SM80
  asm("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(b), "r"(cr[0]), "r"(cr[1]));
#else
  trap("mma.sync.m16n8k8 in a kernel built for a target before sm_80");
#endif
  return __builtin_bit_cast(f16x4, d);
}

// max.f16x2: the larger of each pair of halves, a NaN losing to a number.
MLPCORE_DEVICE std::uint32_t max_f16x2(std::uint32_t a, std::uint32_t b) {
#if MLPCORE_EMULATOR
  return emu::nv::max_f16x2(a, b);
#elif MLPCORE_ARCH_SM80
  std::uint32_t d;
  asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
#else
  trap("max.f16x2 in a kernel built for a target before sm_80");
#endif
}

// abs.f16x2: the magnitudes of two packed halves. Its only use, an operand of max.f16x2, costs nothing:
// ptxas folds it into VHMNMX's |x| operand modifier (sm_90), where an AND of the sign bits is one more
// instruction per register.
MLPCORE_DEVICE std::uint32_t abs_f16x2(std::uint32_t x) {
#if MLPCORE_EMULATOR
  return emu::nv::abs_f16x2(x);
#elif MLPCORE_ARCH_SM80
  std::uint32_t d;
  asm("abs.f16x2 %0, %1;" : "=r"(d) : "r"(x));
  return d;
#else
  trap("abs.f16x2 in a kernel built for a target before sm_80");
#endif
}

// max.NaN.f16x2 with +0: ReLU on two packed halves, one register (a NaN stays NaN, as with cvt.rn.relu).
MLPCORE_DEVICE std::uint32_t relu_f16x2(std::uint32_t x) {
#if MLPCORE_EMULATOR
  return emu::nv::relu_f16x2(x);
#elif MLPCORE_ARCH_SM80
  std::uint32_t d;
  asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(d) : "r"(x), "r"(0u));
  return d;
#else
  trap("max.NaN.f16x2 in a kernel built for a target before sm_80");
#endif
}

// st.b32, st.v2.b32, st.v4.b32 (with .global where Global): N words to memory in one access, `p`
// aligned to their size. Written as stores of vectors, NVVM split the fused kernels' outputs into 4- or
// 2-byte stores (1-32x3-32: 32 per lane and block instead of 8). Global says `p` is global memory; the
// generic form also serves the device API's outputs, which may be shared memory.
template <bool Global, int N>
MLPCORE_DEVICE void store_words(void* p, const std::uint32_t (&w)[N]) {
  static_assert(N == 1 || N == 2 || N == 4, "st, st.v2 or st.v4 of 32-bit words");
#if MLPCORE_EMULATOR
  std::memcpy(p, w, 4 * N);
#elif MLPCORE_ARCH_SM80
#define MLPCORE_STORE_WORDS(space)                                                                                    \
  if constexpr (N == 1)                                                                                               \
    asm volatile("st" space ".b32 [%0], %1;" ::"l"(p), "r"(w[0]) : "memory");                                         \
  else if constexpr (N == 2)                                                                                          \
    asm volatile("st" space ".v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1]) : "memory");                     \
  else                                                                                                                \
    asm volatile("st" space ".v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
  if constexpr (Global) {
    MLPCORE_STORE_WORDS(".global")
  } else {
    MLPCORE_STORE_WORDS("")
  }
#undef MLPCORE_STORE_WORDS
#else
  trap("st.b32, st.v2.b32 or st.v4.b32 in a kernel built for a target before sm_80");
#endif
}

// cp.async.cg.shared.global, 16 bytes: starts copying src (global) to dst (shared), bypassing L1; the
// data is there after cp_async_wait_all. The emulator copies at once, which is one valid schedule.
MLPCORE_DEVICE void cp_async_16(void* dst, const void* src) {
#if MLPCORE_EMULATOR
  std::memcpy(dst, src, 16);
#elif MLPCORE_ARCH_SM80
  const auto shared = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(src) : "memory");
#else
  trap("cp.async in a kernel built for a target before sm_80");
#endif
}

// cp.async.wait_all: this lane's cp.async copies are complete (other lanes' need sync_wave after).
MLPCORE_DEVICE void cp_async_wait_all() {
#if MLPCORE_EMULATOR
#elif MLPCORE_ARCH_SM80
  asm volatile("cp.async.wait_all;" ::: "memory");
#else
  trap("cp.async.wait_all in a kernel built for a target before sm_80");
#endif
}

}  // namespace mlpcore::ops::nv
