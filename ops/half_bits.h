#pragma once
// Bit-level float16 / bfloat16 conversions on the host, independent of compiler half support.
#include <cstdint>

#include "ops/std_subset.h"

namespace mlpcore::ops {

inline float f16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 31) return stdx::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return stdx::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return stdx::bit_cast<float>(sign);
  // Subnormal: normalise into a float32 exponent.
  int e = -1;
  do {
    mantissa <<= 1;
    ++e;
  } while ((mantissa & 0x400u) == 0);
  return stdx::bit_cast<float>(sign | static_cast<std::uint32_t>(112 - e) << 23 | (mantissa & 0x3ffu) << 13);
}

// Round to nearest, ties to even; overflow gives infinity, NaN stays NaN (quiet).
inline std::uint16_t float_to_f16_bits(float f) {
  const std::uint32_t x = stdx::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exponent = (x >> 23) & 0xffu;
  std::uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0));
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | static_cast<std::uint32_t>(e) << 10 | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry may reach infinity: correct
  return static_cast<std::uint16_t>(half);
}

// The larger of each pair of halves in two registers of packed halves (bits 15:0, 31:16), as AMD's
// v_pk_max_f16 (IEEE mode) and NVIDIA's max.f16x2 compute it for quiet NaNs: a NaN loses to a number
// (IEEE maxNum), two NaNs give a NaN (0x7fff), and of equal values (+0 and -0) the first operand's is
// kept (both ISAs leave that open). A signalling NaN gives a quiet NaN on AMD instead; AMD's kernels never
// hand it one (their halves come from conversions, which quiet NaNs).
inline std::uint32_t max_f16x2_bits(std::uint32_t a, std::uint32_t b) {
  const auto max1 = [](std::uint32_t x, std::uint32_t y) -> std::uint32_t {
    const float fx = f16_bits_to_float(static_cast<std::uint16_t>(x)), fy = f16_bits_to_float(static_cast<std::uint16_t>(y));
    if (fx != fx) return fy != fy ? 0x7fffu : y;
    return fy > fx ? y : x;
  };
  return max1(a & 0xffffu, b & 0xffffu) | max1(a >> 16, b >> 16) << 16;
}

inline float bf16_bits_to_float(std::uint16_t b) { return stdx::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

inline std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t x = stdx::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace mlpcore::ops
