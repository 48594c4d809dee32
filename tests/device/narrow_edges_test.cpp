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

// "k-n" of each layer, packed for the kernel the plan of `request` picks.
std::vector<std::string> shapes(const std::vector<std::size_t>& widths, PlanRequest request) {
  const Model model = relu_model(widths);
  const FusedPlan plan = plan_fused(model, "test", request);
  PackedNetwork packed;
  if (request.family == ops::TileFamily::rdna4)
    packed = pack_network<ops::TileWmmaGfx12>(model, plan, "test");
  else if (plan.f16_accumulation)
    packed = pack_network<ops::TileMmaSm80F16Acc>(model, plan, "test");
  else
    packed = pack_network<ops::TileMmaSm80>(model, plan, "test");
  std::vector<std::string> out;
  for (const ops::LayerDesc& d : packed.layers) out.push_back(std::to_string(d.k) + "-" + std::to_string(d.n));
  return out;
}

using V = std::vector<std::string>;
constexpr PlanRequest kCompiledF16Acc{ops::TileFamily::nvidia, false, true};
constexpr PlanRequest kSpecializedF16Acc{ops::TileFamily::nvidia, true, true};

TEST(NarrowEdges, FloatSixteenAccumulationPacksEdgesOfAtMostEightForTheFixedKernels) {
  for (const PlanRequest r : {kCompiledF16Acc, kSpecializedF16Acc}) {
    EXPECT_EQ(shapes({3, 64, 64, 64, 64, 1}, r), (V{"8-16", "16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({12, 64, 64, 64, 64, 8}, r), (V{"16-16", "16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({8, 64, 64, 64, 64, 9}, r), (V{"8-16", "16-16", "16-16", "16-16", "16-16"}));
    EXPECT_EQ(shapes({16, 64, 64, 4}, r), (V{"16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({32, 64, 64, 64, 64, 8}, r), (V{"16-16", "16-16", "16-16", "16-16", "16-8"}));
    // Kernels 128 wide keep full tiles (their registers).
    EXPECT_EQ(shapes({32, 128, 128, 128, 128, 8}, r), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
  }
  // A shape without a compiled-in kernel: narrow when specialized, full tiles on the run-time-shaped ones.
  EXPECT_EQ(shapes({3, 48, 1}, kSpecializedF16Acc), (V{"8-16", "16-8"}));
  EXPECT_EQ(shapes({3, 48, 1}, kCompiledF16Acc), (V{"16-16", "16-16"}));
}

TEST(NarrowEdges, FloatThirtyTwoAccumulationAndAmdTilesKeepFullTiles) {
  for (const bool specialize : {false, true}) {
    EXPECT_EQ(shapes({3, 64, 64, 64, 64, 1}, {ops::TileFamily::nvidia, specialize}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
    EXPECT_EQ(shapes({3, 64, 64, 64, 64, 1}, {ops::TileFamily::rdna4, specialize}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
  }
}

}  // namespace
}  // namespace mlpcore::detail
