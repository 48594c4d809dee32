// Every tile's row/col functions against AMD's reference layouts, for every lane and element.
#include <gtest/gtest.h>

#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"
#include "tests/device/layout_reference.h"

namespace mlpcore::ops {
namespace {

template <class Tile>
struct Names;
template <>
struct Names<TileWmmaGfx11> {
  static constexpr const char* arch = "rdna3";
  static constexpr const char* instruction = "v_wmma_f32_16x16x16_f16";
};
template <>
struct Names<TileWmmaGfx12> {
  static constexpr const char* arch = "rdna4";
  static constexpr const char* instruction = "v_wmma_f32_16x16x16_f16";
};
template <>
struct Names<TileMfmaGfx9> {
  static constexpr const char* arch = "cdna2";
  static constexpr const char* instruction = "v_mfma_f32_16x16x16f16";
};

template <class Tile>
class TileLayout : public ::testing::Test {};
using Tiles = ::testing::Types<TileWmmaGfx11, TileWmmaGfx12, TileMfmaGfx9>;
TYPED_TEST_SUITE(TileLayout, Tiles);

// Element i of a 16-bit fragment is VGPR i/2, bits 15:0 (even i) or 31:16 (odd i); of a 32-bit one, VGPR i.
TYPED_TEST(TileLayout, EveryLaneAndElementMatchesTheReference) {
  using T = TypeParam;
  const auto a = test::reference_layout(Names<T>::arch, Names<T>::instruction, T::kWave, 'A');
  const auto b = test::reference_layout(Names<T>::arch, Names<T>::instruction, T::kWave, 'B');
  const auto d = test::reference_layout(Names<T>::arch, Names<T>::instruction, T::kWave, 'D');
  ASSERT_EQ(a.size(), static_cast<std::size_t>(T::kWave * T::kA));
  ASSERT_EQ(b.size(), static_cast<std::size_t>(T::kWave * T::kB));
  ASSERT_EQ(d.size(), static_cast<std::size_t>(T::kWave * T::kAcc));
  for (int lane = 0; lane < T::kWave; ++lane) {
    for (int i = 0; i < T::kA; ++i) {
      const auto e = a.at({lane, i / 2, i % 2});
      EXPECT_EQ(T::a_row(lane, i), e.first) << "A lane " << lane << " element " << i;
      EXPECT_EQ(T::a_col(lane, i), e.second) << "A lane " << lane << " element " << i;
    }
    for (int i = 0; i < T::kB; ++i) {
      const auto e = b.at({lane, i / 2, i % 2});
      EXPECT_EQ(T::b_row(lane, i), e.first) << "B lane " << lane << " element " << i;
      EXPECT_EQ(T::b_col(lane, i), e.second) << "B lane " << lane << " element " << i;
    }
    for (int i = 0; i < T::kAcc; ++i) {
      const auto e = d.at({lane, i, 0});
      EXPECT_EQ(T::acc_row(lane, i), e.first) << "D lane " << lane << " element " << i;
      EXPECT_EQ(T::acc_col(lane, i), e.second) << "D lane " << lane << " element " << i;
    }
  }
}

}  // namespace
}  // namespace mlpcore::ops
