// NVIDIA's run-time-shaped kernels' twins for large feature-major batches (more sample tiles per warp,
// ops::runtime_large_batch_policy: 16 wide four, 80-112 wide two): the plan's twin is the kernel the
// library builds, and on the wave emulator the twins match float64. The emu-nvidia backend runs the plan
// it makes with its large_batch lowered, so that batches the emulator runs in seconds take the twin (a GPU
// takes it from 2^20 samples: fused_backend_test, LargeFeatureMajorBatchesMatchTheCpuBackend).
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

// For every width and both activation forms, the plan names a twin exactly where the kernels have one
// (ops::runtime_twin, which the library's kernel list is checked against), with the policy the
// twin is compiled with (ops::runtime_shape_policy, launch bounds included).
TEST(RunTimeShapedLargeBatchTwins, ThePlanRunsTheTwinTheKernelsHave) {
  std::mt19937 rng(30);
  int twins = 0;
  test::for_each_uniform_network(rng, [&](auto width, const Model& m) {
    constexpr int W = decltype(width)::value;
    const FusedPlan plan = plan_fused(m, "t", {ops::TileFamily::nvidia});
    ASSERT_EQ(plan.kind, KernelKind::runtime_shaped);
    constexpr ops::RuntimeTwin kLarge = ops::RuntimeTwin::large_batch;
    const bool twin = plan.activations_per_tile ? ops::runtime_twin<ops::TileMmaSm80, W, kLarge, ops::RuntimeActivationsPerTile>()
                                                : ops::runtime_twin<ops::TileMmaSm80, W, kLarge, ops::RuntimeKernelActivations<ops::TileFamily::nvidia>>();
    EXPECT_EQ(plan.large_batch_kernels, twin) << plan.shape << (plan.activations_per_tile ? " (per tile)" : "");
    if (twin) EXPECT_EQ(plan.large_batch_policy, (ops::runtime_shape_policy<ops::TileMmaSm80, W, ops::IoLayout::feature_major, kLarge>())) << plan.shape;
    twins += twin;
  });
  EXPECT_EQ(static_cast<std::size_t>(twins), MLPCORE_WIDTH_SET(MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS).size()) << "one ReLU network per width with a twin";
}

// One network for each width with a twin (ReLU hidden layers, the twins' only kind): one-tile first layers,
// padded narrower layers, inputs of several tiles; outputs whose float32 calls keep the kernel (16 wide, 16
// outputs) and take the twin (96 wide, 20 outputs), with the output layer's activation read at run time. Batches: 15 (the kernel), 17, 81 and 1000 (the twin's element path and column vectors) and
// 2100 (more than one pass of the emulator's 8 blocks, so waves stride to a second block and the 16-wide
// twin's input prefetch fetches one). With float16 accumulation too where the width has such twins
// (ops::runtime_f16_accumulation: 80-112 wide), within the float16-accumulating backend's 3e-2.
TEST(RunTimeShapedLargeBatchTwins, MatchFloat64OnTheEmulator) {
  std::mt19937 rng(31);
  using K = ActivationKind;
  const std::vector<test::TwinCase> cases = {{{2, 16, 16, 16, 1}, {K::relu, K::relu, K::relu, K::none}},
                                   {{12, 16, 9, 16, 16}, {K::relu, K::relu, K::relu, K::sigmoid}},
                                   {{3, 80, 80, 80, 2}, {K::relu, K::relu, K::relu, K::none}},
                                   {{40, 96, 50, 96, 20}, {K::relu, K::relu, K::relu, K::leaky_relu}},
                                   {{20, 112, 112, 7}, {K::relu, K::relu, K::tanh}}};
  std::set<int> widths;
  std::set<int> f16acc_widths;
  double worst = 0, worst_f16acc = 0;
  for (const test::TwinCase& c : cases) {
    const Model m = test::twin_case_model(c, rng);
    for (const bool f16_accumulation : {false, true}) {
      FusedPlan plan = plan_fused(m, "emu-nvidia", {ops::TileFamily::nvidia, false, f16_accumulation});
      ASSERT_EQ(plan.kind, KernelKind::runtime_shaped) << plan.shape;
      ASSERT_TRUE(plan.large_batch_kernels) << plan.shape;
      if (f16_accumulation && !plan.f16_accumulation) continue;  // (no float16-accumulating twin at this width)
      widths.insert(plan.width_tiles);
      if (f16_accumulation) f16acc_widths.insert(plan.width_tiles);
      plan.large_batch = 17;
      const CallRouting routing = call_routing(plan);
      const auto slot = [&](std::size_t batch, Io io) { return routing.slot({nullptr, nullptr, batch, io, Layout::feature_major}); };
      EXPECT_EQ(slot(15, Io::f16), KernelSlot::feature_major) << plan.shape;
      EXPECT_EQ(slot(17, Io::f16), KernelSlot::feature_major_large_batch) << plan.shape;
      EXPECT_EQ(slot(17, Io::f32), m.output_dim() <= 8 || plan.width_tiles > 1 ? KernelSlot::feature_major_large_batch : KernelSlot::feature_major)
          << plan.shape;
      const auto net = create_emu_nvidia_network(m, plan);
      const double tolerance = f16_accumulation ? 3e-2 : 1e-2;
      double& worst_here = f16_accumulation ? worst_f16acc : worst;
      for (const std::size_t batch : {15, 17, 81, 1000, 2100}) {
        const std::string what = plan.shape + (f16_accumulation ? " (float16 accumulation), " : ", ") + std::to_string(batch) + " feature-major samples, ";
        test::check_backend_batch<float>(*net, m, batch, Layout::feature_major, tolerance, rng, what + "float32 I/O", worst_here);
        test::check_backend_batch<std::uint16_t>(*net, m, batch, Layout::feature_major, tolerance, rng, what + "float16 I/O", worst_here);
      }
    }
  }
  EXPECT_EQ(f16acc_widths, MLPCORE_WIDTH_SET(MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_WIDTHS)) << "the float16-accumulating twins of each width that has them";
  EXPECT_EQ(widths, MLPCORE_WIDTH_SET(MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS)) << "a network of each width with a twin";
  test::print_worst_errors(worst, worst_f16acc);
}

}  // namespace
}  // namespace mlpcore::detail
