// The NVIDIA ReLU instructions the fused kernels use, as the emulator runs them: cvt.rn.relu.f16x2.f32
// (float32 accumulators) and max.NaN.f16x2 against +0 (float16 accumulators) agree on every value class.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "ops/emu/nv_instructions.h"
#include "ops/half_bits.h"

namespace mlpcore::emu::nv {
namespace {

struct Case {
  float in;
  std::uint16_t out;
};
// -0.0 is left out: which zero ReLU gives it is not specified by the PTX ISA, and no later step tells
// the two apart.
const Case kCases[] = {
    {1.0f, 0x3c00},  {-1.0f, 0x0000},     {0.0f, 0x0000},       {65504.0f, 0x7bff},
    {-65504.0f, 0}, {INFINITY, 0x7c00},  {-INFINITY, 0x0000},  {NAN, 0x7fff},     {0x1p-24f, 0x0001},  // smallest subnormal
    {-0x1p-24f, 0},
};

TEST(NvRelu, CvtRnReluOnFloat32) {
  for (const Case& c : kCases) {
    const std::uint32_t packed = cvt_rn_relu_f16x2(c.in, 2.0f);
    EXPECT_EQ(packed & 0xffffu, c.out) << c.in;
    EXPECT_EQ(packed >> 16, 0x4000u) << "high half of " << c.in;
  }
}

TEST(NvRelu, MaxNanOnFloat16) {
  for (const Case& c : kCases) {
    const std::uint32_t in = ops::float_to_f16_bits(c.in);
    EXPECT_EQ(relu_f16x2(in | 0xc000u << 16), c.out | 0u << 16) << c.in;  // -2 in the high half becomes +0
    EXPECT_EQ(relu_f16x2(in << 16 | 0x3c00u) >> 16, c.out) << c.in;
  }
  EXPECT_EQ(relu_f16x2(0x7e01u) & 0xffffu, 0x7fffu) << "any NaN payload gives the canonical NaN";
}

}  // namespace
}  // namespace mlpcore::emu::nv
