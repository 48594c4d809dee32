// v_cvt_pkrtz_f16_f32 emulation: edge values, and every float16 result of a sweep through all binades.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ops/emu/amd_instructions.h"
#include "ops/half_bits.h"

namespace mlpcore::emu::amd {
namespace {

float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

TEST(CvtPkrtz, EdgeValues) {
  struct Case {
    float in;
    std::uint16_t out;
  };
  const Case cases[] = {
      {0.0f, 0x0000},         {-0.0f, 0x8000},
      {1.0f, 0x3c00},         {-2.0f, 0xc000},
      {65504.0f, 0x7bff},     {65519.0f, 0x7bff},      // below the rounding boundary either way
      {65520.0f, 0x7bff},     {1e10f, 0x7bff},         // round to nearest would give infinity
      {-1e30f, 0xfbff},       {std::numeric_limits<float>::max(), 0x7bff},
      {INFINITY, 0x7c00},     {-INFINITY, 0xfc00},
      {0x1p-24f, 0x0001},     {0x1.8p-24f, 0x0001},    // smallest subnormal; 1.5 ulp truncates
      {0x1p-25f, 0x0000},     {-0x1.fffffep-25f, 0x8000},
      {0x1.ff8p-15f, 0x03ff}, {0x1p-14f, 0x0400},      // largest subnormal, smallest normal
      {0x1.003p0f, 0x3c00},   {-0x1.007fep0f, 0xbc01},  // between 1 and its neighbours: toward zero
      {from_bits(0x00000001u), 0x0000}, {from_bits(0x80400000u), 0x8000},  // float32 subnormals
  };
  for (const auto& c : cases) EXPECT_EQ(f32_to_f16_rtz(c.in), c.out) << c.in;
  const std::uint16_t nan = f32_to_f16_rtz(NAN);
  EXPECT_EQ(nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan & 0x3ffu, 0u);
  EXPECT_NE(nan & 0x200u, 0u) << "quiet";
  EXPECT_TRUE(std::isnan(ops::f16_bits_to_float(f32_to_f16_rtz(-std::numeric_limits<float>::signaling_NaN()))));
}

TEST(CvtPkrtz, PacksLowThenHigh) { EXPECT_EQ(cvt_pkrtz(1.0f, -2.0f), 0xc0003c00u); }

// For every finite float16 h > 0 and floats x from h up to just below the next float16, the result is h
// (and -h for -x): round toward zero hits every float16 value exactly from its whole interval.
TEST(CvtPkrtz, EveryFloat16IsTheResultOfItsWholeInterval) {
  for (std::uint16_t h = 0; h < 0x7bff; ++h) {
    const float lo = ops::f16_bits_to_float(h);
    const float hi = ops::f16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    const float probes[] = {lo, lo + (hi - lo) * 0.25f, lo + (hi - lo) * 0.5f, lo + (hi - lo) * 0.75f, std::nextafter(hi, 0.0f)};
    for (const float x : probes) {
      if (x < lo || x >= hi) continue;
      ASSERT_EQ(f32_to_f16_rtz(x), h) << x;
      ASSERT_EQ(f32_to_f16_rtz(-x), static_cast<std::uint16_t>(h | 0x8000u)) << -x;
    }
  }
  // The largest finite value owns everything above it.
  for (float x = 65504.0f; x < 1e38f; x *= 1.7f) ASSERT_EQ(f32_to_f16_rtz(x), 0x7bff) << x;
}

}  // namespace
}  // namespace mlpcore::emu::amd
