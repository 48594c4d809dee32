#pragma once
// An independent float -> float16 round-toward-zero for reference computations: the nearest-even result
// of ops/half_bits.h (checked against the compiler), stepped back toward zero when it overshoots.
#include <cmath>
#include <cstdint>

#include "ops/half_bits.h"

namespace mlpcore::test {

inline float round_toward_zero_f16(float x) {
  if (std::isnan(x) || std::isinf(x)) return x;
  std::uint16_t h = ops::float_to_f16_bits(x);
  if ((h & 0x7fffu) == 0x7c00u) h = static_cast<std::uint16_t>((h & 0x8000u) | 0x7bffu);  // overflow: largest finite
  if (std::fabs(ops::f16_bits_to_float(h)) > std::fabs(x)) --h;  // one step toward zero (sign-magnitude)
  return ops::f16_bits_to_float(h);
}

}  // namespace mlpcore::test
