// NVIDIA's 128-wide run-time-shaped feature-major kernel's twin for inputs of one tile
// (ops::runtime_one_tile_input_policy): on the wave emulator it matches float64 in both I/O types, over
// batches that end inside a block and stride to further ones, and traps if given another input. The GPU
// runs it in fused_backend_test (RunTimeShapedKernelsPadNarrowerLayers).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/src/emu_network.h"
#include "engine/src/fused_plan.h"
#include "ops/emu/wave_emulator.h"
#include "ops/fused_policy.h"
#include "tests/backend_check.h"

namespace mlpcore::detail {
namespace {

Model relu_network(std::mt19937& rng, const std::vector<std::size_t>& widths, ActivationKind output) {
  std::vector<Activation> acts(widths.size() - 1, Activation::make(ActivationKind::relu));
  acts.back() = Activation::make(output);
  return test::random_model(rng, widths, acts);
}

// The deepest network the plan gives the twin (7 hidden layers of 128, ops::kMaxOneTileInputTiles), a
// funnel padded to 128 with a sigmoid output, 16 inputs and 16 outputs, and one input feature. Sample-major
// calls of the same network run the kernel with the same packing (one K tile in the first layer).
TEST(RunTimeShapedOneTileInputTwin, MatchesFloat64OnTheEmulator) {
  std::mt19937 rng(49);
  const std::vector<std::size_t> deepest = {3, 128, 128, 128, 128, 128, 128, 128, 1};
  const std::vector<std::pair<std::vector<std::size_t>, ActivationKind>> cases = {{deepest, ActivationKind::none},
                                                                                  {{3, 128, 40, 128, 2}, ActivationKind::sigmoid},
                                                                                  {{16, 128, 128, 16}, ActivationKind::none},
                                                                                  {{1, 100, 128, 3}, ActivationKind::tanh}};
  double worst = 0;
  for (const auto& [widths, output] : cases) {
    const Model m = relu_network(rng, widths, output);
    const FusedPlan plan = plan_fused(m, "emu-nvidia", {ops::TileFamily::nvidia});
    ASSERT_EQ(plan.kind, KernelKind::runtime_shaped) << plan.shape;
    ASSERT_TRUE(plan.one_tile_input_twin) << plan.shape;
    const auto net = create_emu_nvidia_network(m, plan);
    for (const std::size_t batch : {15, 17, 1000, 2100}) {
      const std::string what = plan.shape + ", " + std::to_string(batch) + " feature-major samples, ";
      test::check_backend_batch<float>(*net, m, batch, Layout::feature_major, 1e-2, rng, what + "float32 I/O", worst);
      test::check_backend_batch<std::uint16_t>(*net, m, batch, Layout::feature_major, 1e-2, rng, what + "float16 I/O", worst);
    }
    test::check_backend_batch<float>(*net, m, 33, Layout::sample_major, 1e-2, rng, plan.shape + ", sample-major", worst);
  }
  std::cout << "worst relative error " << worst << " (tolerance 1e-2)\n";
}

// The twin has no code for other inputs: given a plan that names it for an input of two tiles, the
// emulated kernel traps rather than computing a padded first layer it does not run.
TEST(RunTimeShapedOneTileInputTwin, TrapsOnAnInputOfMoreThanOneTile) {
  std::mt19937 rng(50);
  const Model m = relu_network(rng, {20, 128, 128, 3}, ActivationKind::none);
  FusedPlan plan = plan_fused(m, "emu-nvidia", {ops::TileFamily::nvidia});
  ASSERT_FALSE(plan.one_tile_input_twin);
  plan.one_tile_input_twin = true;
  plan.feature_major_policy = ops::runtime_one_tile_input_policy(ops::TileFamily::nvidia, 8, plan.feature_major_policy, false);
  const auto net = create_emu_nvidia_network(m, plan);
  double worst = 0;
  try {
    test::check_backend_batch<float>(*net, m, 17, Layout::feature_major, 1e-2, rng, "", worst);
    ADD_FAILURE() << "no trap";
  } catch (const emu::EmulatorError& e) {
    EXPECT_NE(std::string(e.what()).find("one-tile-input twin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mlpcore::detail
