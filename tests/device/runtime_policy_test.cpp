// The plan of a network that runs NVIDIA's run-time-shaped kernels gives each slot the policy its kernel
// was compiled with (ops::runtime_shape_policy, the one ops/fused_mlp_kernels.gpu.cpp builds it with),
// light_assembly and full_assembly_float16_io included: with the I/O type they decide which of the library's
// two fat binaries holds the kernel's body (ops::assembled_light, ops/fused_kernel_entry.h), and the host
// takes it from the one the slot's policy and the I/O type name.
#include <gtest/gtest.h>

#include <utility>

#include "engine/src/fused_plan.h"
#include "ops/fused_mlp.h"
#include "ops/tile_mma_sm80.h"
#include "tests/device/runtime_twin_cases.h"
#include "tests/test_util.h"

namespace mlpcore::detail {
namespace {

template <int W, bool PerTile>
void expect_kernel_policies(const FusedPlan& plan) {
  using ops::IoLayout, ops::RuntimeTwin;
  using Tile = ops::TileMmaSm80;
  EXPECT_EQ(plan.policy, (ops::runtime_shape_policy<Tile, W, IoLayout::sample_major, RuntimeTwin::none, PerTile>())) << plan.shape;
  const ops::FusedPolicy feature_major = plan.one_tile_input_twin
                                             ? ops::runtime_shape_policy<Tile, W, IoLayout::feature_major, RuntimeTwin::one_tile_input, PerTile>()
                                             : ops::runtime_shape_policy<Tile, W, IoLayout::feature_major, RuntimeTwin::none, PerTile>();
  EXPECT_EQ(plan.feature_major_policy, feature_major) << plan.shape;
  const ops::FusedPolicy large_batch =
      plan.large_batch_kernels ? ops::runtime_shape_policy<Tile, W, IoLayout::feature_major, RuntimeTwin::large_batch, PerTile>() : feature_major;
  EXPECT_EQ(plan.large_batch_policy, large_batch) << plan.shape;
}

// Every width, ReLU and SiLU hidden layers (the _act kernels), inputs of one tile (the 128-wide
// feature-major twin for them) and as wide as the hidden layers.
TEST(RunTimeShapedKernels, ThePlanGivesEachSlotItsKernelsPolicy) {
  std::mt19937 rng(31);
  int light = 0, full = 0;
  test::for_each_uniform_network(
      rng,
      [&](auto width, const Model& m) {
        constexpr int W = decltype(width)::value;
        const FusedPlan plan = plan_fused(m, "t", {ops::TileFamily::nvidia});
        ASSERT_EQ(plan.kind, KernelKind::runtime_shaped);
        ASSERT_EQ(plan.activations_per_tile, m.layers.front().activation.kind != ActivationKind::relu);
        if (plan.activations_per_tile)
          expect_kernel_policies<W, true>(plan);
        else
          expect_kernel_policies<W, false>(plan);
        for (const KernelSlot slot : kKernelSlots) (plan.policy_of(slot).light_assembly ? light : full) += 1;
      },
      true);
  EXPECT_GT(light, 0);
  EXPECT_GT(full, 0);
}

}  // namespace
}  // namespace mlpcore::detail
