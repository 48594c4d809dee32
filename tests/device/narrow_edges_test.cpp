// Which layers the host packs for the narrow-edge instructions (FusedPolicy::narrow_edges): exactly those
// the fixed-shape kernels run on them, and the device API's second packing in full tiles. Their results
// are checked against float64 by the fused-backend and device-API tests (emu-nvidia, emu-nvidia-f16acc,
// and cuda, cuda-f16acc on a GPU); this checks that the narrow path is the one taken.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
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

// "k-n" of each layer of a packing.
std::vector<std::string> shapes(const PackedNetwork& packed) {
  std::vector<std::string> out;
  for (const ops::LayerDesc& d : packed.layers) out.push_back(std::to_string(d.k) + "-" + std::to_string(d.n));
  return out;
}

// "k-n" of each layer, packed for the kernel the plan of `request` picks.
std::vector<std::string> shapes(const std::vector<std::size_t>& widths, PlanRequest request) {
  const Model model = relu_model(widths);
  const FusedPlan plan = plan_fused(model, "test", request);
  if (request.family == ops::TileFamily::rdna4) return shapes(pack_network<ops::TileWmmaGfx12>(model, plan, "test"));
  if (plan.f16_accumulation) return shapes(pack_network<ops::TileMmaSm80F16Acc>(model, plan, "test"));
  return shapes(pack_network<ops::TileMmaSm80>(model, plan, "test"));
}

using V = std::vector<std::string>;

// Compiled-in or specialized, accumulating in float32 or float16.
std::vector<PlanRequest> nvidia_requests() {
  std::vector<PlanRequest> out;
  for (const bool specialize : {false, true})
    for (const bool f16_accumulation : {false, true}) out.push_back({ops::TileFamily::nvidia, specialize, f16_accumulation});
  return out;
}

TEST(NarrowEdges, NvidiaPacksEdgesOfAtMostEightForTheFixedKernels) {
  for (const PlanRequest r : nvidia_requests()) {
    SCOPED_TRACE(std::string(r.specialize ? "specialized" : "compiled in") + (r.f16_accumulation ? ", float16 accumulation" : ""));
    EXPECT_EQ(shapes({3, 64, 64, 64, 64, 1}, r), (V{"8-16", "16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({12, 64, 64, 64, 64, 8}, r), (V{"16-16", "16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({8, 64, 64, 64, 64, 9}, r), (V{"8-16", "16-16", "16-16", "16-16", "16-16"}));
    EXPECT_EQ(shapes({16, 64, 64, 4}, r), (V{"16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({32, 64, 64, 64, 64, 8}, r), (V{"16-16", "16-16", "16-16", "16-16", "16-8"}));
    // Kernels 128 wide keep full tiles (their registers).
    EXPECT_EQ(shapes({32, 128, 128, 128, 128, 8}, r), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
    // A shape without a compiled-in kernel: narrow when specialized, full tiles on the run-time-shaped ones.
    EXPECT_EQ(shapes({3, 48, 1}, r), (r.specialize ? V{"8-16", "16-8"} : V{"16-16", "16-16"}));
  }
}

TEST(NarrowEdges, AmdTilesKeepFullTiles) {
  for (const bool specialize : {false, true})
    EXPECT_EQ(shapes({3, 64, 64, 64, 64, 1}, {ops::TileFamily::rdna4, specialize}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
}

// The device API runs full tiles accumulating in float32: a float32 network whose kernels run narrow edges
// is packed for it again, in full tiles, the same weights as a plan without narrow edges packs them; a
// network whose packing serves it, or that accumulates in float16, gets no second packing.
TEST(NarrowEdges, TheDeviceApiGetsFullTilesOfFloat32NetworksWithNarrowEdges) {
  for (const bool specialize : {false, true}) {
    const Model model = relu_model({3, 64, 64, 64, 64, 1});
    const FusedPlan plan = plan_fused(model, "test", {ops::TileFamily::nvidia, specialize});
    ASSERT_TRUE(plan.narrow_input && plan.narrow_output);
    EXPECT_FALSE(device_api_runs(pack_network<ops::TileMmaSm80>(model, plan, "test")));
    const std::optional<PackedNetwork> second = device_api_packing<ops::TileMmaSm80>(model, plan, "test");
    ASSERT_TRUE(second);
    EXPECT_TRUE(device_api_runs(*second));
    EXPECT_EQ(shapes(*second), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
    FusedPlan full_tiles = plan;
    full_tiles.narrow_input = full_tiles.narrow_output = false;
    const PackedNetwork expected = pack_network<ops::TileMmaSm80>(model, full_tiles, "test");
    ASSERT_EQ(second->weights.size(), expected.weights.size());
    EXPECT_EQ(std::memcmp(second->weights.data(), expected.weights.data(), expected.weights.size() * sizeof(ops::half_t)), 0);
    EXPECT_EQ(second->biases, expected.biases);

    const FusedPlan f16acc = plan_fused(model, "test", {ops::TileFamily::nvidia, specialize, true});
    EXPECT_FALSE(device_api_packing<ops::TileMmaSm80F16Acc>(model, f16acc, "test"));
    const Model wide = relu_model({32, 128, 128, 128, 128, 8});
    EXPECT_FALSE(device_api_packing<ops::TileMmaSm80>(wide, plan_fused(wide, "test", {ops::TileFamily::nvidia, specialize}), "test"));
  }
}

}  // namespace
}  // namespace mlpcore::detail
