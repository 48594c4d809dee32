// NVIDIA's run-time-shaped kernels' twins for large feature-major batches (more sample tiles per warp,
// ops::large_batch_policy: 16 wide four, 80-112 wide two) on the wave emulator against float64: the plan
// the emu-nvidia backend makes, its large_batch lowered to 17 so that batches the emulator runs in seconds
// take the twin (a GPU takes it from 2^20 samples: fused_backend_test, LargeFeatureMajorBatchesMatchTheCpuBackend).
// Each width with a twin; one-tile first layers, padded narrower layers, inputs of several tiles; outputs
// whose float32 calls keep the kernel (16 wide, 16 outputs) and take the twin (96 wide, 20 outputs); whole
// blocks (column vectors) and partial ones.
#include <gtest/gtest.h>

#include <set>

#include "engine/src/emu_network.h"
#include "engine/src/fused_plan.h"
#include "ops/fused_shapes.h"
#include "tests/backend_check.h"

namespace mlpcore::detail {
namespace {

TEST(RunTimeShapedLargeBatchTwins, MatchFloat64OnTheEmulator) {
  std::mt19937 rng(31);
  using K = ActivationKind;
  struct Case {
    std::vector<std::size_t> widths;
    std::vector<K> kinds;
  };
  const std::vector<Case> cases = {{{2, 16, 16, 16, 1}, {K::relu, K::relu, K::relu, K::none}},
                                   {{12, 16, 9, 16, 16}, {K::leaky_relu, K::relu, K::relu, K::sigmoid}},
                                   {{3, 80, 80, 80, 2}, {K::relu, K::relu, K::relu, K::none}},
                                   {{40, 96, 50, 96, 20}, {K::relu, K::leaky_relu, K::relu, K::none}},
                                   {{20, 112, 112, 7}, {K::relu, K::relu, K::tanh}}};
  std::set<int> widths;
  double worst = 0;
  for (const Case& c : cases) {
    std::vector<Activation> acts;
    for (const K k : c.kinds) acts.push_back(k == K::leaky_relu ? Activation::make(k, 0.1f) : Activation::make(k));
    const Model m = test::random_model(rng, c.widths, acts);
    FusedPlan plan = plan_fused(m, "emu-nvidia", {ops::TileFamily::nvidia});
    ASSERT_EQ(plan.kind, KernelKind::runtime_shaped) << plan.shape;
    ASSERT_TRUE(plan.large_batch_kernels) << plan.shape;
    widths.insert(plan.width_tiles);
    plan.large_batch = 17;
    const auto net = create_emu_nvidia_network(m, plan);
    EXPECT_EQ(net->kernel(), plan.describe());
    // 15: the kernel; from 17 the twin (1000 samples: column vectors, the others the element path)
    for (const std::size_t batch : {15, 17, 81, 1000}) {
      const std::string what = plan.shape + ", " + std::to_string(batch) + " feature-major samples, ";
      test::check_backend_batch<float>(*net, m, batch, Layout::feature_major, 1e-2, rng, what + "float32 I/O", worst);
      test::check_backend_batch<std::uint16_t>(*net, m, batch, Layout::feature_major, 1e-2, rng, what + "float16 I/O", worst);
    }
  }
  std::set<int> with_twins;
#define MLPCORE_TWIN_WIDTH(W) with_twins.insert(W);
  MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS(MLPCORE_TWIN_WIDTH)
#undef MLPCORE_TWIN_WIDTH
  EXPECT_EQ(widths, with_twins) << "a network of each width with a twin";
  std::cout << "worst relative error " << worst << " (tolerance 1e-2)\n";
}

}  // namespace
}  // namespace mlpcore::detail
