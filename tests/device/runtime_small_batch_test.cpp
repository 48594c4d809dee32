// NVIDIA's run-time-shaped kernels' twins for small batches (each output tile's weights and bias loaded
// while the tile before runs, unbound: ops::runtime_small_batch_policy, 32-64 and 96-112 wide, both
// layouts and accumulations): the plan's
// twins are the kernels the library builds, calls of at most 2 blocks per multiprocessor take them, and on
// the wave emulator they match float64. The emu-nvidia backend runs the plan it makes with a multiprocessor
// count, so that its calls take the twins as on a GPU of that many.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "engine/src/emu_network.h"
#include "engine/src/fused_plan.h"
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
#include "ops/tile_mma_sm80.h"
#include "tests/backend_check.h"
#include "tests/device/runtime_twin_cases.h"

namespace mlpcore::detail {
namespace {

constexpr ops::RuntimeTwin kSmall = ops::RuntimeTwin::small_batch;

// The kernel of Tile W tiles wide with Activations has a small-batch twin in each layout, with the policy
// it is compiled with (ops::runtime_shape_policy, launch bounds included), where the plan says so.
template <class Tile, int W, class Activations>
void expect_plan_runs_the_kernels_twins(const FusedPlan& plan) {
  const std::pair<KernelSlot, ops::FusedPolicy> slots[] = {
      {KernelSlot::sample_major, ops::runtime_shape_policy<Tile, W, ops::IoLayout::sample_major, kSmall, Activations::kPerTile>()},
      {KernelSlot::feature_major, ops::runtime_shape_policy<Tile, W, ops::IoLayout::feature_major, kSmall, Activations::kPerTile>()}};
  const bool twins[] = {ops::runtime_twin<Tile, W, kSmall, Activations, ops::IoLayout::sample_major>(),
                        ops::runtime_twin<Tile, W, kSmall, Activations, ops::IoLayout::feature_major>()};
  EXPECT_EQ(twins[0], twins[1]) << plan.shape << ": both layouts or neither";
  for (std::size_t s = 0; s < 2; ++s)
    for (const Io io : {Io::f32, Io::f16}) {
      const auto [slot, policy] = slots[s];
      EXPECT_EQ(has_small_batch_twin(plan, slot, io), twins[s]) << plan.describe();
      if (!twins[s]) continue;
      EXPECT_EQ(plan.small_batch_policy(slot), policy) << plan.shape;
      EXPECT_TRUE(policy.prefetch_weights && policy.prefetch_bias) << plan.shape;
      // Only the loads ahead and the bound: the twin takes its kernel's grid (sample tiles) and packing.
      ops::FusedPolicy only = policy;
      only.prefetch_weights = plan.policy_of(slot).prefetch_weights;
      only.prefetch_bias = plan.policy_of(slot).prefetch_bias;
      only.min_blocks = plan.policy_of(slot).min_blocks;
      EXPECT_EQ(only, plan.policy_of(slot)) << plan.shape;
      EXPECT_EQ(plan.small_batch_twin_name(io, slot), plan.kernel_name(io, slot) + "_small");
    }
  EXPECT_FALSE(has_small_batch_twin(plan, KernelSlot::feature_major_large_batch, Io::f16));
  EXPECT_EQ(plan.describe().find("twins loading weights a tile ahead for small batches") != std::string::npos, twins[0]) << plan.describe();
}

// For every width, ReLU and SiLU hidden layers, both accumulations: the plan names twins exactly where
// the kernels have them (ops::runtime_twin, which the library's kernel list is checked against), and
// AMD's plans none.
TEST(RunTimeShapedSmallBatchTwins, ThePlanRunsTheTwinsTheKernelsHave) {
  std::mt19937 rng(40);
  std::set<int> widths, f16acc_widths;
  test::for_each_uniform_network(rng, [&](auto width, const Model& m) {
    constexpr int W = decltype(width)::value;
    for (const bool f16_accumulation : {false, true}) {
      const FusedPlan plan = plan_fused(m, "t", {ops::TileFamily::nvidia, false, f16_accumulation});
      ASSERT_EQ(plan.kind, KernelKind::runtime_shaped);
      if (plan.activations_per_tile)
        expect_plan_runs_the_kernels_twins<ops::TileMmaSm80, W, ops::RuntimeActivationsPerTile>(plan);
      else if (plan.f16_accumulation)
        expect_plan_runs_the_kernels_twins<ops::TileMmaSm80F16Acc, W, ops::RuntimeKernelActivations<ops::TileFamily::nvidia>>(plan);
      else
        expect_plan_runs_the_kernels_twins<ops::TileMmaSm80, W, ops::RuntimeKernelActivations<ops::TileFamily::nvidia>>(plan);
      if (has_small_batch_twin(plan, KernelSlot::sample_major, Io::f32)) (plan.f16_accumulation ? f16acc_widths : widths).insert(W);
    }
    for (const ops::TileFamily amd : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
      EXPECT_FALSE(has_small_batch_twin(plan_fused(m, "t", {amd}), KernelSlot::sample_major, Io::f32));
  });
  EXPECT_EQ(widths, MLPCORE_WIDTH_SET(MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS)) << "ReLU networks of each width with twins";
  EXPECT_EQ(f16acc_widths, MLPCORE_WIDTH_SET(MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS)) << "and with float16 accumulation";
}

// Calls of at most 2 blocks per multiprocessor take the twins (132 multiprocessors: 264 blocks of 4 warps
// of 2 sample tiles), larger ones the kernels; without a count (the emulator's default) none do.
TEST(RunTimeShapedSmallBatchTwins, CallsOfAtMostTwoBlocksPerMultiprocessorTakeThem) {
  std::mt19937 rng(41);
  const Activation relu = Activation::make(ActivationKind::relu);
  const FusedPlan plan = plan_fused(test::random_model(rng, {5, 48, 48, 48, 3}, {relu, relu, relu, Activation::make(ActivationKind::none)}), "t",
                                    {ops::TileFamily::nvidia});
  const CallRouting routing = call_routing(plan, 132), uncounted = call_routing(plan);
  for (const KernelSlot slot : {KernelSlot::sample_major, KernelSlot::feature_major})
    for (const Io io : {Io::f32, Io::f16}) {
      ASSERT_EQ(routing.sample_tiles_in(slot), 2);
      const std::size_t up_to = 2 * 132 * 4 * 32;
      const auto call = [&](std::size_t batch) { return IoBuffers{nullptr, nullptr, batch, io, slot_layout(slot)}; };
      for (const std::size_t batch : {std::size_t{1}, std::size_t{1} << 14, up_to}) {
        EXPECT_TRUE(routing.takes_small_batch_twin(call(batch), slot)) << batch;
        EXPECT_FALSE(uncounted.takes_small_batch_twin(call(batch), slot)) << batch;
      }
      EXPECT_FALSE(routing.takes_small_batch_twin(call(up_to + 1), slot));
      EXPECT_FALSE(routing.takes_small_batch_twin(call(std::size_t{1} << 16), slot));
    }
}

// A network of each width with twins (one input tile, padded narrower layers, inputs of 2 and 3 tiles;
// outputs of 1-16 units, with the output activation read at run time), both layouts and I/O types, both accumulations,
// every call taking the twin: batches 1, 15, 17, 1000 and 2100 (more than one pass of the emulator's 8
// blocks, so waves stride to a second block), against float64 within the backends' tolerances (1e-2, and
// 3e-2 with float16 accumulation).
TEST(RunTimeShapedSmallBatchTwins, MatchFloat64OnTheEmulator) {
  std::mt19937 rng(42);
  using K = ActivationKind;
  const std::vector<test::TwinCase> cases = {{{9, 40, 40, 40, 40, 2}, {K::relu, K::relu, K::relu, K::relu, K::none}},
                                   {{5, 48, 33, 48, 3}, {K::relu, K::relu, K::relu, K::sigmoid}},
                                   {{20, 32, 32, 3}, {K::relu, K::relu, K::none}},
                                   {{40, 48, 17, 5}, {K::relu, K::relu, K::leaky_relu}},
                                   {{3, 25, 1}, {K::relu, K::tanh}},
                                   {{16, 64, 64, 64, 16}, {K::relu, K::relu, K::relu, K::none}},
                                   {{8, 96, 50, 96, 1}, {K::relu, K::relu, K::relu, K::sigmoid}},
                                   {{24, 100, 112, 8}, {K::relu, K::relu, K::none}}};
  std::set<int> widths;
  double worst = 0, worst_f16acc = 0;
  for (const test::TwinCase& c : cases) {
    const Model m = test::twin_case_model(c, rng);
    for (const bool f16_accumulation : {false, true}) {
      const FusedPlan plan = plan_fused(m, "emu-nvidia", {ops::TileFamily::nvidia, false, f16_accumulation});
      ASSERT_EQ(plan.kind, KernelKind::runtime_shaped) << plan.shape;
      ASSERT_EQ(plan.f16_accumulation, f16_accumulation) << plan.shape;
      widths.insert(plan.width_tiles);
      constexpr unsigned kMultiprocessors = 1000;  // every batch below is at most 2 blocks per multiprocessor
      const CallRouting routing = call_routing(plan, kMultiprocessors);
      const auto net = create_emu_nvidia_network(m, plan, kMultiprocessors);
      // The twins are named where calls take them, not by the emulated backend without a multiprocessor count.
      const std::string twins = ", twins loading weights a tile ahead for small batches";
      EXPECT_NE(net->kernel().find(twins), std::string::npos) << net->kernel();
      EXPECT_EQ(create_emu_nvidia_network(m, plan)->kernel().find(twins), std::string::npos) << plan.shape;
      const double tolerance = f16_accumulation ? 3e-2 : 1e-2;
      double& worst_here = f16_accumulation ? worst_f16acc : worst;
      for (const Layout layout : {Layout::sample_major, Layout::feature_major})
        for (const std::size_t batch : {1, 15, 17, 1000, 2100}) {
          const KernelSlot slot = routing.slot({nullptr, nullptr, batch, Io::f32, layout});
          ASSERT_TRUE(routing.takes_small_batch_twin({nullptr, nullptr, batch, Io::f32, layout}, slot)) << plan.shape << ", " << batch;
          const std::string what = plan.shape + (f16_accumulation ? " (float16 accumulation), " : ", ") + std::to_string(batch) +
                                   (layout == Layout::feature_major ? " feature-major" : " sample-major") + " samples, ";
          test::check_backend_batch<float>(*net, m, batch, layout, tolerance, rng, what + "float32 I/O", worst_here);
          test::check_backend_batch<std::uint16_t>(*net, m, batch, layout, tolerance, rng, what + "float16 I/O", worst_here);
        }
    }
  }
  EXPECT_EQ(widths, MLPCORE_WIDTH_SET(MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS)) << "networks of each width with twins";
  test::print_worst_errors(worst, worst_f16acc);
}

}  // namespace
}  // namespace mlpcore::detail
