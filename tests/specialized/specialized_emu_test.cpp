// Each model's specialized kernels, as the engine writes their source for NVRTC (and `mlpcore compile`),
// compiled for the wave emulator and run against float64: random shapes and issue 14's table, every
// activation, every tile family, float32 and float16 I/O, sample- and feature-major arrays, batches 1,
// 15, 17 and 1000.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/src/specialized_source.h"
#include "ops/half_bits.h"
#include "tests/backend_check.h"
#include "tests/specialized/specialized_cases.h"
#include "tests/specialized/specialized_registry.h"

namespace mlpcore::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SpecializedSources : public ::testing::TestWithParam<SpecializedVariant> {};

// The text compiled here is the text the engine produces for the model now: a plan or source that drifts
// from what the tests compiled fails here.
TEST_P(SpecializedSources, CompiledTextIsWhatTheEngineWritesForTheModel) {
  const auto cases = specialized_cases();
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto plan = detail::plan_fused(cases[c].model, "test", GetParam().request);
    EXPECT_EQ(read_text(std::string(MLPCORE_SPECIALIZED_DIR) + "/" + specialized_source_file(c, GetParam())), source_or_note(plan)) << cases[c].name;
    if (plan.kind != detail::KernelKind::specialized) {
      // Only an NVIDIA network whose unrolled code would be too large is not specialized.
      EXPECT_EQ(plan.family, ops::TileFamily::nvidia) << cases[c].name;
      int tiles = 0;
      for (std::size_t l = 0; l + 1 < plan.widths.size(); ++l) tiles += plan.widths[l] * plan.widths[l + 1];
      EXPECT_GT(tiles, detail::kMaxUnrolledTiles) << cases[c].name;
      continue;
    }
    EXPECT_NE(specialized_registry().find(c, plan.family, plan.f16_accumulation), nullptr) << cases[c].name << " was not compiled";
  }
}

// Tolerances are the emulated backends' claims (BackendInfo::verify_tolerance): float16 operands with
// float32 accumulation 1e-2, float16 accumulation 3e-2, relative to max(1, |r|).
TEST_P(SpecializedSources, MatchFloat64OnTheEmulator) {
  const SpecializedVariant& v = GetParam();
  const double tolerance = v.request.f16_accumulation ? 3e-2 : 1e-2;
  std::mt19937 rng(77);
  double worst = 0;
  int large_batch_twins = 0;
  const auto cases = specialized_cases();
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Model& model = cases[c].model;
    auto plan = detail::plan_fused(model, "test", v.request);
    if (plan.kind != detail::KernelKind::specialized) continue;  // CompiledTextIsWhatTheEngineWritesForTheModel says why
    // Feature-major batches from 17 run the large-batch twins where the plan has them, 1 and 15 the others
    // (1000 samples: the vector path of column I/O, 15 and 17 the element path).
    plan.large_batch = 17;
    large_batch_twins += plan.large_batch_kernels;
    const SpecializedRegistration* r = specialized_registry().find(c, plan.family, plan.f16_accumulation);
    ASSERT_NE(r, nullptr) << cases[c].name;
    const auto net = r->make(model, plan, r->kernel);
    EXPECT_EQ(net->kernel(), plan.describe(false)) << "the emulator, without a multiprocessor count, routes no call to a small-batch twin";
    for (const Layout layout : {Layout::sample_major, Layout::feature_major}) {
      const std::string in = std::string(" ") + to_string(layout) + " ";
      for (const std::size_t batch : {1, 15, 17, 1000})
        check_backend_batch<float>(*net, model, batch, layout, tolerance, rng, cases[c].name + in + "float32 I/O batch " + std::to_string(batch), worst);
      for (const std::size_t batch : {15, 17, 1000})
        check_backend_batch<std::uint16_t>(*net, model, batch, layout, tolerance, rng, cases[c].name + in + "float16 I/O batch " + std::to_string(batch), worst);
    }
  }
  if (v.request.family == ops::TileFamily::nvidia) EXPECT_GT(large_batch_twins, 0) << "no test network has large-batch twins";
  std::cout << v.name << ": worst relative error " << worst << " (tolerance " << tolerance << "), " << large_batch_twins
            << " networks with large-batch twins\n";
}

INSTANTIATE_TEST_SUITE_P(Families, SpecializedSources, ::testing::ValuesIn(specialized_variants()), [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace mlpcore::test
