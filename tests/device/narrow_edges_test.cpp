// Which layers the host packs for the narrow-edge instructions (FusedPolicy::narrow_edges): exactly those
// the fixed-shape kernels run on them. Their results are checked against float64 by the fused-backend
// tests (emu-nvidia-f16acc, and cuda-f16acc on a GPU); this checks that the narrow path is the one taken.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/src/fused_packing.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx12.h"
#include "tests/test_util.h"

namespace mlpcore::detail {
namespace {

Model relu_model(const std::vector<std::size_t>& widths) {
  std::mt19937 rng(7);
  std::vector<Activation> acts(widths.size() - 1, Activation::make(ActivationKind::relu));
  acts.back() = Activation::make(ActivationKind::none);
  return test::random_model(rng, widths, acts);
}

// "k-n" of each packed layer.
template <class Tile>
std::vector<std::string> shapes(const std::vector<std::size_t>& widths) {
  std::vector<std::string> out;
  for (const ops::LayerDesc& d : pack_network<Tile>(relu_model(widths), "test").layers) out.push_back(std::to_string(d.k) + "-" + std::to_string(d.n));
  return out;
}

using V = std::vector<std::string>;

TEST(NarrowEdges, FloatSixteenAccumulationPacksEdgesOfAtMostEightForTheFixedKernels) {
  using T = ops::TileMmaSm80F16Acc;
  EXPECT_EQ(shapes<T>({3, 64, 64, 64, 64, 1}), (V{"8-16", "16-16", "16-16", "16-16", "16-8"}));
  EXPECT_EQ(shapes<T>({12, 64, 64, 64, 64, 8}), (V{"16-16", "16-16", "16-16", "16-16", "16-8"}));
  EXPECT_EQ(shapes<T>({8, 64, 64, 64, 64, 9}), (V{"8-16", "16-16", "16-16", "16-16", "16-16"}));
  EXPECT_EQ(shapes<T>({16, 64, 64, 4}), (V{"16-16", "16-16", "16-8"}));
  EXPECT_EQ(shapes<T>({32, 64, 64, 64, 64, 8}), (V{"16-16", "16-16", "16-16", "16-16", "16-8"}));
  // The 128-wide fixed kernel keeps full tiles (its registers), and so do the run-time-shaped kernels.
  EXPECT_EQ(shapes<T>({32, 128, 128, 128, 128, 8}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
  EXPECT_EQ(shapes<T>({3, 48, 1}), (V{"16-16", "16-16"}));
}

TEST(NarrowEdges, FloatThirtyTwoAccumulationAndAmdTilesKeepFullTiles) {
  EXPECT_EQ(shapes<ops::TileMmaSm80>({3, 64, 64, 64, 64, 1}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
  EXPECT_EQ(shapes<ops::TileWmmaGfx12>({3, 64, 64, 64, 64, 1}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
}

}  // namespace
}  // namespace mlpcore::detail
