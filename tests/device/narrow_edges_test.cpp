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

// "k-n" of each layer, packed for the kernel in `slot` of the plan of `request`.
std::vector<std::string> shapes(const std::vector<std::size_t>& widths, PlanRequest request, KernelSlot slot = KernelSlot::sample_major) {
  const Model model = relu_model(widths);
  const FusedPlan plan = plan_fused(model, "test", request);
  if (request.family == ops::TileFamily::rdna4) return shapes(pack_for_backend<ops::TileWmmaGfx12>(model, plan, "test").kernel(slot));
  if (plan.f16_accumulation) return shapes(pack_for_backend<ops::TileMmaSm80F16Acc>(model, plan, "test").kernel(slot));
  return shapes(pack_for_backend<ops::TileMmaSm80>(model, plan, "test").kernel(slot));
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

// A specialized kernel above 64 wide runs a narrow first layer only where it reads feature-major input
// (sample-major input was slower so, ops/fused_policy.h), also in a network built for both layouts, whose
// two kernels then run packings of their own; a narrow last layer with either layout.
TEST(NarrowEdges, NvidiaWiderThan64NarrowsTheInputOfFeatureMajorKernelsOnly) {
  constexpr KernelSlot sm = KernelSlot::sample_major, fm = KernelSlot::feature_major;
  for (const bool f16_accumulation : {false, true}) {
    SCOPED_TRACE(f16_accumulation ? "float16 accumulation" : "float32 accumulation");
    const auto with = [&](bool sample_major, bool feature_major) {
      return PlanRequest{ops::TileFamily::nvidia, true, f16_accumulation, {sample_major, feature_major}};
    };
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(false, true), fm), (V{"8-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(true, true), fm), (V{"8-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(true, true), sm), (V{"16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({5, 112, 112, 112, 2}, with(true, false), sm), (V{"16-16", "16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({8, 80, 80, 9}, with(false, true), fm), (V{"8-16", "16-16", "16-16"}));
    EXPECT_EQ(shapes({9, 80, 80, 8}, with(false, true), fm), (V{"16-16", "16-16", "16-8"}));
    EXPECT_EQ(shapes({9, 80, 80, 8}, with(true, true), fm), (V{"16-16", "16-16", "16-8"}));
  }
}

// One packing per distinct set of narrow edges: a network built for both layouts is packed twice above 64
// wide with at most 8 inputs (its sample-major packing, in full tiles with float32 accumulators, serving
// the device API too), once where its kernels run the same edges; the large-batch twins run their
// layout's packing.
TEST(NarrowEdges, EachSetOfEdgesIsPackedOnce) {
  const auto packing = [](const std::vector<std::size_t>& widths, bool f16_accumulation) {
    const Model model = relu_model(widths);
    const FusedPlan plan = plan_fused(model, "test", {ops::TileFamily::nvidia, true, f16_accumulation, {true, true}});
    return f16_accumulation ? pack_for_backend<ops::TileMmaSm80F16Acc>(model, plan, "test") : pack_for_backend<ops::TileMmaSm80>(model, plan, "test");
  };
  const BackendPacking wide = packing({5, 112, 112, 112, 9}, false);
  ASSERT_EQ(wide.packings.size(), 2u);
  EXPECT_EQ(&wide.kernel(KernelSlot::sample_major), &wide.packings[0]);
  EXPECT_EQ(&wide.kernel(KernelSlot::feature_major), &wide.packings[1]);
  EXPECT_EQ(wide.device_api(), &wide.packings[0]);
  EXPECT_EQ(wide.packings[1].shape.narrow, (NarrowEdges{true, false}));
  // Both packings hold the same later layers and biases: only the first layer's fragments differ (half as
  // many, K = 8).
  ASSERT_EQ(wide.packings[0].layers.size(), wide.packings[1].layers.size());
  EXPECT_EQ(wide.packings[0].biases, wide.packings[1].biases);
  EXPECT_EQ(wide.packings[0].layers[1].weight_offset, 2 * wide.packings[1].layers[1].weight_offset);
  for (std::size_t l = 1; l < wide.packings[0].layers.size(); ++l) {
    const ops::LayerDesc &a = wide.packings[0].layers[l], &b = wide.packings[1].layers[l];
    const std::size_t n = static_cast<std::size_t>(a.in_tiles * a.out_tiles) * 256;  // 16 x 16 weights per tile
    EXPECT_EQ(std::memcmp(&wide.packings[0].weights[a.weight_offset], &wide.packings[1].weights[b.weight_offset], n * sizeof(ops::half_t)), 0) << l;
  }
  const BackendPacking wide_f16acc = packing({5, 112, 112, 112, 9}, true);
  EXPECT_EQ(wide_f16acc.packings.size(), 2u);
  EXPECT_EQ(wide_f16acc.device_api(), nullptr);
  const BackendPacking twins = packing({3, 32, 32, 32, 1}, true);
  ASSERT_EQ(twins.packings.size(), 1u) << "narrow edges in every kernel";
  EXPECT_EQ(&twins.kernel(KernelSlot::feature_major_large_batch), &twins.packings[0]);
  const BackendPacking nine = packing({9, 112, 112, 112, 9}, false);
  EXPECT_EQ(nine.packings.size(), 1u) << "9 inputs: full tiles in every kernel";
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
    ASSERT_EQ(plan.narrow_edges(KernelSlot::sample_major), (NarrowEdges{true, true}));
    const BackendPacking packing = pack_for_backend<ops::TileMmaSm80>(model, plan, "test");
    EXPECT_FALSE(full_float32_tiles(packing.kernel(KernelSlot::sample_major)));
    const PackedNetwork* second = packing.device_api();
    ASSERT_NE(second, nullptr);
    EXPECT_NE(second, &packing.kernel(KernelSlot::sample_major));
    EXPECT_TRUE(full_float32_tiles(*second));
    const PackedNetwork expected = pack_network<ops::TileMmaSm80>(model, plan, PackedShape{}, "test");
    ASSERT_EQ(second->weights.size(), expected.weights.size());
    EXPECT_EQ(std::memcmp(second->weights.data(), expected.weights.data(), expected.weights.size() * sizeof(ops::half_t)), 0);
    EXPECT_EQ(second->biases, expected.biases);

    const FusedPlan f16acc = plan_fused(model, "test", {ops::TileFamily::nvidia, specialize, true});
    const BackendPacking none = pack_for_backend<ops::TileMmaSm80F16Acc>(model, f16acc, "test");
    EXPECT_EQ(none.device_api(), nullptr);
    EXPECT_EQ(none.packings.size(), 1u);

    const Model wide = relu_model({32, 128, 128, 128, 128, 9});
    const BackendPacking own = pack_for_backend<ops::TileMmaSm80>(wide, plan_fused(wide, "test", {ops::TileFamily::nvidia, specialize}), "test");
    EXPECT_TRUE(full_float32_tiles(own.kernel(KernelSlot::sample_major)));
    EXPECT_EQ(own.packings.size(), 1u);
    EXPECT_EQ(own.device_api(), &own.kernel(KernelSlot::sample_major));
  }
}

}  // namespace
}  // namespace mlpcore::detail
