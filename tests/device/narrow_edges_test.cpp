// Which layers the host packs for the narrow-edge instructions (FusedPolicy::narrow_input, ::narrow_output): exactly those
// the fixed-shape kernels run on them, and the device API's second packing in full tiles. Their results
// are checked against float64 by the fused-backend and device-API tests (emu-nvidia, emu-nvidia-f16acc,
// and cuda, cuda-f16acc on a GPU); this checks that the narrow path is the one taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/src/fused_packing.h"
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
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
    // Above 64 wide, compiled-in kernels keep full tiles (their registers); specialized ones run a narrow
    // last layer (and first, feature-major only: below).
    EXPECT_EQ(shapes({32, 128, 128, 128, 128, 8}, r), (r.specialize ? V{"16-16", "16-16", "16-16", "16-16", "16-8"}
                                                                     : V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
    EXPECT_EQ(shapes({3, 96, 96, 96, 1}, r), (r.specialize ? V{"16-16", "16-16", "16-16", "16-8"} : V{"16-16", "16-16", "16-16", "16-16"}));
    // A shape without a compiled-in kernel: narrow when specialized, full tiles on the run-time-shaped ones.
    EXPECT_EQ(shapes({3, 48, 1}, r), (r.specialize ? V{"8-16", "16-8"} : V{"16-16", "16-16"}));
  }
}

// A specialized kernel above 64 wide runs a narrow first layer only where it reads feature-major input only
// (sample-major input was slower so, ops/fused_policy.h); a narrow last layer with either layout.
TEST(NarrowEdges, NvidiaWiderThan64NarrowsTheInputOfFeatureMajorKernelsOnly) {
  for (const bool f16_accumulation : {false, true}) {
    SCOPED_TRACE(f16_accumulation ? "float16 accumulation" : "float32 accumulation");
    const auto with = [&](bool sample_major, bool feature_major) {
      return PlanRequest{ops::TileFamily::nvidia, true, f16_accumulation, {sample_major, feature_major}};
    };
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(false, true)), (V{"8-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(true, true)), (V{"16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(true, false)), (V{"16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({8, 80, 80, 9}, with(false, true)), (V{"8-16", "16-16", "16-16"}));
    EXPECT_EQ(shapes({9, 80, 80, 8}, with(false, true)), (V{"16-16", "16-16", "16-8"}));
  }
}

// The host plans a compiled-in shape with the policy its kernel is built with (fixed_shape_policy): the
// packing follows the plan, the kernel its own policy.
TEST(NarrowEdges, TheHostPlansCompiledInShapesAsTheirKernelsAreBuilt) {
  const auto check = [](int index, std::vector<std::size_t> widths, ops::FusedPolicy built) {
    for (std::size_t& w : widths) w *= 16;
    const FusedPlan plan = plan_fused(relu_model(widths), "test", {ops::TileFamily::nvidia});
    ASSERT_EQ(plan.kind, KernelKind::compiled_in);
    EXPECT_EQ(plan.fixed_index, index);
    EXPECT_EQ(plan.policy, built) << "shape " << index;
  };
#define MLPCORE_CHECK_FIXED(index, hidden, output, ...) check(index, {__VA_ARGS__}, ops::fixed_shape_policy<ops::TileMmaSm80, __VA_ARGS__>());
  MLPCORE_FIXED_SHAPES(MLPCORE_CHECK_FIXED)
#undef MLPCORE_CHECK_FIXED
}

TEST(NarrowEdges, AmdTilesKeepFullTiles) {
  for (const bool specialize : {false, true})
    EXPECT_EQ(shapes({3, 64, 64, 64, 64, 1}, {ops::TileFamily::rdna4, specialize}), (V{"16-16", "16-16", "16-16", "16-16", "16-16"}));
}

// The device API runs full tiles accumulating in float32: a float32 network whose kernels run narrow edges
// is packed for it again, in full tiles, the same weights as a plan without narrow edges packs them; a
// network whose packing serves it runs that one, and one that accumulates in float16 gets none.
bool full_float32_tiles(const PackedNetwork& p) {
  return !p.f16_accumulation && std::all_of(p.layers.begin(), p.layers.end(), [](const ops::LayerDesc& l) { return l.k == 16 && l.n == 16; });
}

TEST(NarrowEdges, TheDeviceApiGetsFullTilesOfFloat32NetworksWithNarrowEdges) {
  for (const bool specialize : {false, true}) {
    SCOPED_TRACE(specialize ? "specialized" : "compiled in");
    const Model model = relu_model({3, 64, 64, 64, 64, 1});
    const FusedPlan plan = plan_fused(model, "test", {ops::TileFamily::nvidia, specialize});
    ASSERT_TRUE(plan.narrow_input && plan.narrow_output);
    const BackendPacking packing = pack_for_backend<ops::TileMmaSm80>(model, plan, "test");
    EXPECT_FALSE(full_float32_tiles(packing.kernels));
    const PackedNetwork* second = packing.device_api_own();
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(packing.device_api(), second);
    EXPECT_TRUE(full_float32_tiles(*second));
    FusedPlan full_tiles = plan;
    full_tiles.narrow_input = full_tiles.narrow_output = false;
    const PackedNetwork expected = pack_network<ops::TileMmaSm80>(model, full_tiles, "test");
    ASSERT_EQ(second->weights.size(), expected.weights.size());
    EXPECT_EQ(std::memcmp(second->weights.data(), expected.weights.data(), expected.weights.size() * sizeof(ops::half_t)), 0);
    EXPECT_EQ(second->biases, expected.biases);

    const FusedPlan f16acc = plan_fused(model, "test", {ops::TileFamily::nvidia, specialize, true});
    const BackendPacking none = pack_for_backend<ops::TileMmaSm80F16Acc>(model, f16acc, "test");
    EXPECT_EQ(none.device_api_own(), nullptr);
    EXPECT_EQ(none.device_api(), nullptr);

    const Model wide = relu_model({32, 128, 128, 128, 128, 9});
    const BackendPacking own = pack_for_backend<ops::TileMmaSm80>(wide, plan_fused(wide, "test", {ops::TileFamily::nvidia, specialize}), "test");
    EXPECT_TRUE(full_float32_tiles(own.kernels));
    EXPECT_EQ(own.device_api_own(), nullptr);
    EXPECT_EQ(own.device_api(), &own.kernels);
  }
}

}  // namespace
}  // namespace mlpcore::detail
