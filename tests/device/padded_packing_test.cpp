// The run-time-shaped kernels (ops/fused_mlp.h, mlp_forward) run every layer's K tiles and every hidden
// layer's output tiles as wide as their widest layer: the host pads each layer to that width with zero
// weights and biases (FusedPlan::packed_shape), but a first layer that their policy runs on its one input
// tile (FusedPolicy::one_tile_first_layer, ops::one_tile_first_layer). This checks the packing: the model's own tiles as the
// unpadded packing holds them, zeros everywhere else, and the device API's own packing of each layer at
// its own width; and that a network already that wide everywhere is packed once, for both. The kernels' results on such networks are checked against float64 by the fused-backend
// tests (RunTimeShapedKernel...).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/src/fused_packing.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "tests/test_util.h"

namespace mlpcore::detail {
namespace {

Model model_of(const std::vector<std::size_t>& widths, ActivationKind hidden = ActivationKind::sigmoid) {
  std::mt19937 rng(11);
  std::vector<Activation> acts(widths.size() - 1, Activation::make(hidden));
  acts.back() = Activation::make(ActivationKind::none);
  return test::random_model(rng, widths, acts);
}

int tiles_of(std::size_t width) { return static_cast<int>((width + 15) / 16); }

// Whether a kernel slot's packing holds the first layer one K tile wide: its policy runs such a layer on
// its tile alone, and the rule, restated here rather than taken from ops::one_tile_first_layer, holds: an
// input of at most 16 features with a hidden layer after it.
bool one_tile_input(const FusedPlan& plan, KernelSlot slot, const Model& model) {
  return plan.policy_of(slot).one_tile_first_layer && model.input_dim() <= 16 && model.layers.size() > 1;
}

// Layer l's A fragments of tile (mt, kt) and the biases of output tile mt in packing p.
template <class Tile>
std::vector<ops::half_t> weight_tile(const PackedNetwork& p, std::size_t l, int mt, int kt) {
  const ops::LayerDesc& d = p.layers[l];
  constexpr std::size_t kHalves = Tile::kWave * Tile::kA;
  const auto* first = &p.weights[d.weight_offset + static_cast<std::size_t>(mt * d.in_tiles + kt) * kHalves];
  return {first, first + kHalves};
}
template <class Tile>
std::vector<std::byte> bias_tile(const PackedNetwork& p, std::size_t l, int mt) {
  constexpr std::size_t kBytes = Tile::kBiasSlots * Tile::kAcc * sizeof(ops::acc_elem_t<Tile>);
  const auto* first = &p.biases[p.layers[l].bias_offset * sizeof(ops::acc_elem_t<Tile>) + static_cast<std::size_t>(mt) * kBytes];
  return {first, first + kBytes};
}

bool all_zero(const std::vector<ops::half_t>& halves) {
  for (const ops::half_t h : halves)
    if (std::bit_cast<std::uint16_t>(h) != 0) return false;
  return true;
}
bool all_zero(const std::vector<std::byte>& bytes) {
  for (const std::byte b : bytes)
    if (b != std::byte{0}) return false;
  return true;
}

// Each layer of `padded` against the device API's packing `own` of the same model: in_tiles x out_tiles
// as the padding says, the model's own tiles identical, zeros elsewhere.
template <class Tile>
void check_padded_layers(const Model& model, const PackedNetwork& padded, const PackedNetwork& own, int w, bool one_tile_input) {
  const std::size_t layers = model.layers.size();
  ASSERT_EQ(padded.layers.size(), layers);
  ASSERT_EQ(own.layers.size(), layers);
  for (std::size_t l = 0; l < layers; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const bool last = l + 1 == layers;
    const int in = tiles_of(model.layers[l].in), out = tiles_of(model.layers[l].out);
    EXPECT_EQ(padded.layers[l].in_tiles, l == 0 && one_tile_input ? 1 : w);
    EXPECT_EQ(padded.layers[l].out_tiles, last ? out : w);
    EXPECT_EQ(own.layers[l].in_tiles, in);
    EXPECT_EQ(own.layers[l].out_tiles, out);
    for (int mt = 0; mt < padded.layers[l].out_tiles; ++mt) {
      if (mt < out)
        EXPECT_EQ(bias_tile<Tile>(padded, l, mt), bias_tile<Tile>(own, l, mt)) << "output tile " << mt;
      else
        EXPECT_TRUE(all_zero(bias_tile<Tile>(padded, l, mt))) << "output tile " << mt;
      for (int kt = 0; kt < padded.layers[l].in_tiles; ++kt) {
        const std::vector<ops::half_t> tile = weight_tile<Tile>(padded, l, mt, kt);
        if (mt < out && kt < in) {
          const std::vector<ops::half_t> expected = weight_tile<Tile>(own, l, mt, kt);
          EXPECT_EQ(std::memcmp(tile.data(), expected.data(), tile.size() * sizeof(ops::half_t)), 0) << "tile " << mt << ", " << kt;
        } else {
          EXPECT_TRUE(all_zero(tile)) << "tile " << mt << ", " << kt;
        }
      }
    }
  }
}

template <class Tile>
void check_padded(const std::vector<std::size_t>& widths, ops::TileFamily family) {
  const Model model = model_of(widths);
  const FusedPlan plan = plan_fused(model, "test", {family});
  ASSERT_EQ(plan.kind, KernelKind::runtime_shaped);
  const int w = plan.width_tiles;
  const BackendPacking b = pack_for_backend<Tile>(model, plan, "test");
  ASSERT_NE(b.device_api(), nullptr);
  const PackedNetwork& own = *b.device_api();
  EXPECT_EQ(own.shape, PackedShape{});
  const bool same_shapes = plan.packed_shape(KernelSlot::sample_major) == plan.packed_shape(KernelSlot::feature_major);
  EXPECT_EQ(b.packings.size(), same_shapes ? 2u : 3u) << "the kernels' padded packings, one per shape, and the device API's";
  for (const KernelSlot slot : {KernelSlot::sample_major, KernelSlot::feature_major}) {
    SCOPED_TRACE(slot == KernelSlot::sample_major ? "sample-major kernel" : "feature-major kernel");
    const bool one_tile = one_tile_input(plan, slot, model);
    EXPECT_EQ(plan.packed_shape(slot), (PackedShape{{}, w, one_tile}));
    const PackedNetwork& padded = b.kernel(slot);
    EXPECT_EQ(padded.shape, plan.packed_shape(slot));
    EXPECT_NE(&own, &padded);
    check_padded_layers<Tile>(model, padded, own, w, one_tile);
  }
}

TEST(PaddedPacking, RunTimeShapedKernelsGetEveryLayerAsWideAsTheWidest) {
  // Hidden layers narrower than the widest, inputs of one tile (a first layer of one K tile where the
  // policy says so: NVIDIA's, but for the 128-wide feature-major kernel, whose twin for such inputs takes
  // ReLU networks only and this one's hidden layers are not) and of several, a 7-unit output;
  // single layers of 20 -> 40 and 16 -> 40 (an input of one tile, padded: no hidden layer follows).
  for (const auto& widths :
       std::vector<std::vector<std::size_t>>{{5, 100, 20, 128, 7}, {12, 64, 20, 64, 3}, {40, 33, 70, 50}, {20, 40}, {16, 40}}) {
    SCOPED_TRACE(std::to_string(widths.front()) + "-...-" + std::to_string(widths.back()));
    check_padded<ops::TileMmaSm80>(widths, ops::TileFamily::nvidia);
    check_padded<ops::TileWmmaGfx11>(widths, ops::TileFamily::rdna3);
  }
}

// A run-time-shaped network whose every layer but the last has the widest width in and out (or, the first,
// an input of one tile that its kernels run alone) is packed so already: one packing serves its kernels
// and the device API.
TEST(PaddedPacking, NetworksAsWideAsTheirKernelEverywhereArePackedOnce) {
  for (const auto& widths :
       std::vector<std::vector<std::size_t>>{{64, 64, 64, 64, 64, 64, 4}, {40, 3}, {128, 120, 1}, {8, 96, 96, 1}, {3, 48, 48, 48, 3}, {8, 16, 1}}) {
    SCOPED_TRACE(std::to_string(widths.front()) + "-...-" + std::to_string(widths.back()));
    const Model model = model_of(widths);
    const FusedPlan plan = plan_fused(model, "test", {ops::TileFamily::nvidia});
    ASSERT_EQ(plan.kind, KernelKind::runtime_shaped);
    const BackendPacking b = pack_for_backend<ops::TileMmaSm80>(model, plan, "test");
    ASSERT_EQ(b.packings.size(), 1u);
    const auto& layers = b.packings[0].layers;
    for (const KernelSlot slot : {KernelSlot::sample_major, KernelSlot::feature_major}) {
      SCOPED_TRACE(slot == KernelSlot::sample_major ? "sample-major kernel" : "feature-major kernel");
      EXPECT_EQ(plan.packed_shape(slot), PackedShape{});
      EXPECT_EQ(b.device_api(), &b.kernel(slot));
      const bool one_tile = one_tile_input(plan, slot, model);
      for (std::size_t l = 0; l < layers.size(); ++l) EXPECT_EQ(layers[l].in_tiles, l == 0 && one_tile ? 1 : plan.width_tiles) << "layer " << l;
    }
  }
}

// Compiled-in and specialized kernels have each layer's shape compiled in: nothing is padded.
TEST(PaddedPacking, KernelsWithTheShapeCompiledInAreNotPadded) {
  const Model fixed = model_of({3, 64, 64, 64, 64, 1}, ActivationKind::relu), other = model_of({5, 100, 20, 128, 7});
  EXPECT_EQ(plan_fused(fixed, "test", {ops::TileFamily::nvidia}).kind, KernelKind::compiled_in);
  for (const FusedPlan& plan : {plan_fused(fixed, "test", {ops::TileFamily::nvidia}), plan_fused(other, "test", {ops::TileFamily::nvidia, true})})
    for (const KernelSlot slot : kKernelSlots) EXPECT_EQ(plan.packed_shape(slot).padded_tiles, 0) << plan.describe();
}

}  // namespace
}  // namespace mlpcore::detail
