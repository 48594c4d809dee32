// The float16 range check's parts (ops/float16_range.h) against float64: every tile's max2 (v_pk_max_f16,
// max.f16x2 as the emulator runs them) and abs2, and which values Float16Range counts, packed and float32
// values as each tile packs them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/float16_range.h"
#include "ops/half_bits.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace mlpcore::ops {
namespace {

template <class Tile>
class Float16RangeOf : public ::testing::Test {};
using Tiles = ::testing::Types<TileWmmaGfx11, TileWmmaGfx12, TileMfmaGfx9, TileMmaSm80>;
TYPED_TEST_SUITE(Float16RangeOf, Tiles);

// Every float16 value class, and random ones.
std::vector<std::uint16_t> halves() {
  std::vector<std::uint16_t> v = {0x0000, 0x8000, 0x0001, 0x8001, 0x3c00, 0xbc00, 0x7bfe, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7d01};
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> bits(0, 0xffff);
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<std::uint16_t>(bits(rng)));
  return v;
}

TYPED_TEST(Float16RangeOf, Max2IsTheLargerOfEachPairNaNLosing) {
  using Tile = TypeParam;
  const auto v = halves();
  for (const std::uint16_t a : v)
    for (std::size_t j = 0; j < v.size(); j += 7) {
      const std::uint16_t b = v[j];
      const double fa = f16_bits_to_float(a), fb = f16_bits_to_float(b);
      const std::uint32_t got = Tile::max2(a | std::uint32_t{b} << 16, b | std::uint32_t{a} << 16);
      for (const std::uint32_t half : {got & 0xffffu, got >> 16}) {
        const double g = f16_bits_to_float(static_cast<std::uint16_t>(half));
        if (std::isnan(fa) && std::isnan(fb))
          EXPECT_TRUE(std::isnan(g)) << std::hex << a << " " << b;
        else
          EXPECT_EQ(g, std::isnan(fa) ? fb : std::isnan(fb) ? fa : std::max(fa, fb)) << std::hex << a << " " << b;
      }
    }
}

TYPED_TEST(Float16RangeOf, Abs2IsEachHalfsMagnitude) {
  using Tile = TypeParam;
  const auto v = halves();
  for (std::size_t j = 0; j + 1 < v.size(); ++j) {
    const std::uint32_t got = Tile::abs2(v[j] | std::uint32_t{v[j + 1]} << 16);
    for (int i = 0; i < 2; ++i) {
      const double x = f16_bits_to_float(v[j + i]), g = f16_bits_to_float(static_cast<std::uint16_t>(got >> 16 * i));
      if (std::isnan(x))
        EXPECT_TRUE(std::isnan(g)) << std::hex << v[j + i];
      else
        EXPECT_EQ(g, std::fabs(x)) << std::hex << v[j + i];
      EXPECT_FALSE(std::signbit(g)) << std::hex << v[j + i];
    }
  }
}

TYPED_TEST(Float16RangeOf, PackedValuesCountAtTheLimitNotNaN) {
  using Tile = TypeParam;
  for (const std::uint16_t h : halves()) {
    const double x = f16_bits_to_float(h);
    for (const ActivationReach reach : {ActivationReach::both, ActivationReach::above, ActivationReach::bounded}) {
      Float16Range range;
      range.see_packed<Tile>(vec<std::uint32_t, 2>{0x3c003c00u, std::uint32_t{h} << 16 | 0x3c00u}, reach);
      const bool want = reach == ActivationReach::both ? std::fabs(x) >= 65504 : reach == ActivationReach::above && x >= 65504;
      EXPECT_EQ(range.exceeded(), want) << std::hex << h << " reach " << static_cast<int>(reach);
    }
  }
}

// float32 values count where the operand the tile packs them into does: at or beyond 65504 in magnitude.
// Rounded to nearest (NVIDIA), every value above 65488 becomes 65504 or infinite; toward zero (AMD),
// those from 65504 on saturate at 65504. The operands' values come from float64.
TYPED_TEST(Float16RangeOf, Float32ValuesCountWhereTheirOperandReachesTheLimit) {
  using Tile = TypeParam;
  const bool to_nearest = Tile::kFamily == TileFamily::nvidia;
  const double threshold = to_nearest ? 65488.0 : 65504.0;  // half of float16's last step (32) below 65504, or none
  const float cases[] = {65488.0f, 65488.01f, 65500.0f, 65503.9f, 65504.0f, 65519.9f, 65520.0f, 1e5f, INFINITY, NAN, 0.0f, 1.0f};
  for (const float magnitude : cases)
    for (const float x : {magnitude, -magnitude}) {
      const double m = std::fabs(static_cast<double>(x));
      const bool beyond = m > threshold || (!to_nearest && m == threshold);  // (65488 itself rounds to even: 65472)
      const vec<half_t, 2> packed = Tile::pack2(x, 1.0f);
      for (const ActivationReach reach : {ActivationReach::both, ActivationReach::above, ActivationReach::bounded}) {
        Float16Range range;
        range.see_packed<Tile>(packed, reach);
        const bool want = reach == ActivationReach::both ? beyond : reach == ActivationReach::above && beyond && x > 0;
        EXPECT_EQ(range.exceeded(), want) << x << " reach " << static_cast<int>(reach);
      }
    }
}

TYPED_TEST(Float16RangeOf, ReportSetsTheFlagOnlyWhenExceeded) {
  using Tile = TypeParam;
  std::uint32_t flag = 0;
  Float16Range range;
  range.see_packed<Tile>(Tile::pack2(1000.0f, -3.0f));
  range.report(&flag);
  EXPECT_EQ(flag, 0u);
  range.see_packed<Tile>(Tile::pack2(1.0f, -7e4f));
  range.report(nullptr);  // unchecked calls: nothing to write
  range.report(&flag);
  EXPECT_EQ(flag, 1u);
}

TEST(Float16Range, ActivationsAreCheckedByTheirReach) {
  for (const ActivationKind k : {ActivationKind::sigmoid, ActivationKind::tanh, ActivationKind::sine}) EXPECT_EQ(reach_of(k), ActivationReach::bounded);
  for (const ActivationKind k : {ActivationKind::relu, ActivationKind::softplus, ActivationKind::exponential, ActivationKind::silu})
    EXPECT_EQ(reach_of(k), ActivationReach::above);
  for (const ActivationKind k : {ActivationKind::none, ActivationKind::leaky_relu}) EXPECT_EQ(reach_of(k), ActivationReach::both);
}

}  // namespace
}  // namespace mlpcore::ops
