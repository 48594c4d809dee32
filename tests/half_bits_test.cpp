// float16/bfloat16 bit conversions against the compiler's own _Float16 (IEEE round to nearest even).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "ops/half_bits.h"

namespace mlpcore::ops {
namespace {

TEST(HalfBits, EveryF16DecodesLikeTheCompiler) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float expected = static_cast<float>(std::bit_cast<_Float16>(h));
    const float got = f16_bits_to_float(h);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(expected)) << std::hex << bits;
    }
  }
}

TEST(HalfBits, EncodingRoundsToNearestEvenLikeTheCompiler) {
  std::mt19937 rng(7);
  auto check = [](float f) {
    const auto expected = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
    const auto got = float_to_f16_bits(f);
    if (std::isnan(f)) {
      EXPECT_EQ(got & 0x7c00u, 0x7c00u);
      EXPECT_NE(got & 0x3ffu, 0u);
    } else {
      EXPECT_EQ(got, expected) << f;
    }
  };
  // Every f16 value, and the exact midpoints to both neighbours (ties) and values just off them.
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = f16_bits_to_float(static_cast<std::uint16_t>(bits));
    check(f);
    const auto u = std::bit_cast<std::uint32_t>(f);
    for (std::uint32_t delta : {0x1000u, 0x0fffu, 0x1001u}) {
      check(std::bit_cast<float>(u + delta));
      if ((u & 0x7fffffffu) >= delta) check(std::bit_cast<float>(u - delta));
    }
  }
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 2'000'000; ++i) check(std::bit_cast<float>(any(rng)));
}

TEST(HalfBits, Bf16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80u);
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x3f808000u)), 0x3f80u);  // tie, even stays
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x3f818000u)), 0x3f82u);  // tie, odd rounds up
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x3f808001u)), 0x3f81u);
  EXPECT_EQ(float_to_bf16_bits(INFINITY), 0x7f80u);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::bit_cast<float>(0x7f800001u)))));
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = bf16_bits_to_float(static_cast<std::uint16_t>(bits));
    if (!std::isnan(f)) EXPECT_EQ(float_to_bf16_bits(f), bits);
  }
}

}  // namespace
}  // namespace mlpcore::ops
