// `mlpcore compile` for the AMD GPUs this build targets, as a renderer ships a network: the specialized
// kernels of issue 14's benchmark shapes (the compiled-in ones too) and of random shapes, compiled by a clang
// found here and, where it loads, by hiprtc; their ISA checked as the built-in code objects' are: matrix
// instructions at the floor, RDNA3's half-wave shuffles at theirs, no scratch, no LDS, VGPRs reported.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/src/fused_plan.h"
#include "engine/src/hiprtc.h"
#include "engine/src/kernel_file.h"
#include "engine/src/specialize.h"
#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "tests/cli_util.h"
#include "tests/device/amd_isa.h"
#include "tests/specialized/specialized_cases.h"

namespace mlpcore::test {
namespace {

namespace fs = std::filesystem;

ops::TileFamily family_of(const std::string& target) {
  if (target.starts_with("gfx11")) return ops::TileFamily::rdna3;
  if (target.starts_with("gfx12")) return ops::TileFamily::rdna4;
  return ops::TileFamily::cdna;
}

// Issue 14's table: the specialized cases' shapes, and those with a compiled-in kernel, specialized all the same.
std::vector<SpecializedCase> shapes() {
  std::vector<SpecializedCase> out = specialized_cases();
  std::mt19937 rng(14);
  const auto relu = Activation::make(ActivationKind::relu), none = Activation::make(ActivationKind::none);
  for (const auto& [name, widths] : std::vector<std::pair<std::string, std::vector<std::size_t>>>{
           {"32-64x4-16", {32, 64, 64, 64, 64, 16}}, {"32-128x4-16", {32, 128, 128, 128, 128, 16}}, {"16-64x2-4", {16, 64, 64, 4}}, {"3-64x4-1", {3, 64, 64, 64, 64, 1}}}) {
    std::vector<Activation> acts(widths.size() - 1, relu);
    acts.back() = none;
    out.push_back({name, random_model(rng, widths, acts)});
  }
  return out;
}

// Whether layer l runs in the loop of the one before (ops::repeats_previous_layer): its code is not there again.
bool repeats(const detail::FusedPlan& p, std::size_t l) {
  const std::size_t layers = p.activations.size();
  return p.policy.loop_layers && l >= 2 && l + 1 < layers && p.widths[l - 1] == p.widths[l] && p.widths[l] == p.widths[l + 1] &&
         p.activations[l - 1] == p.activations[l];
}

// RDNA3 rebuilds the replicated B layout of every hidden layer's output tile: 4 v_permlanex16 each.
std::size_t shuffle_floor(const detail::FusedPlan& p) {
  std::size_t n = 0;
  for (std::size_t l = 0; l + 1 < p.activations.size(); ++l)
    if (!repeats(p, l)) n += 4 * static_cast<std::size_t>(p.widths[l + 1]);
  return n * static_cast<std::size_t>(p.policy.sample_tiles);
}

// The checks of one kernel file's code, planned for both layouts: its four kernels (float32 and float16 I/O,
// sample- and feature-major), a module each.
void check_code(const std::string& target, const detail::FusedPlan& plan, const detail::KernelFile& k, const std::string& what) {
  const TempDir dir;
  std::map<std::string, std::vector<std::string>> isa;
  std::map<std::string, std::map<std::string, std::string>> meta;
  EXPECT_EQ(k.modules.size(), 4u) << what;
  for (std::size_t m = 0; m < k.modules.size(); ++m) {
    const fs::path object = dir / (target + "_" + std::to_string(m) + ".co");
    std::ofstream(object, std::ios::binary).write(reinterpret_cast<const char*>(k.modules[m].data()), static_cast<std::streamsize>(k.modules[m].size()));
    isa.merge(disassemble(object.string()));
    meta.merge(metadata(object.string()));
  }
  const Expectation want = expectation(target);
  for (const std::string kernel : {"mlpcore_mlp_specialized", "mlpcore_mlp_specialized_f16", "mlpcore_mlp_specialized_fm", "mlpcore_mlp_specialized_f16_fm"}) {
    SCOPED_TRACE(what + " " + kernel);
    ASSERT_TRUE(isa.count(kernel) && meta.count(kernel)) << "kernel missing";
    const std::string vgprs = expect_fused_kernel_isa(want, isa.at(kernel), meta.at(kernel),
                                                      static_cast<std::size_t>(detail::unrolled_tiles(plan) * plan.policy.sample_tiles),
                                                      shuffle_floor(plan));
    std::cout << what << " " << kernel << ": " << vgprs << ", " << count_prefix(isa.at(kernel), want.matrix_instruction) << " matrix instructions\n";
  }
}

class SpecializedCodeObject : public ::testing::TestWithParam<std::string> {};

// What CI runs: the CLI, with hiprtc kept out so that the clang found here compiles.
TEST_P(SpecializedCodeObject, MlpcoreCompileWithClangIsAtTheFloorWithoutScratch) {
  const std::string target = GetParam();
  const TempDir dir;
  for (const SpecializedCase& c : shapes()) {
    const detail::FusedPlan plan = detail::plan_fused(c.model, "hip", {family_of(target), true, false, {true, true}});
    ASSERT_EQ(plan.kind, detail::KernelKind::specialized) << c.name;
    const fs::path model = dir / "model.safetensors", kernels = dir / "kernels.mlpk";
    save_model(c.model, model);
    const CommandResult r =
        run_command("MLPCORE_HIPRTC_LIBRARY=/nonexistent " +
                    cli("compile " + model.string() + " --target " + target + " --layout both -o " + kernels.string()));
    ASSERT_EQ(r.exit_code, 0) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(plan.describe() + ", compiled by "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("clang version"), std::string::npos) << r.output;
    const detail::KernelFile k = detail::read_kernel_file(kernels);
    EXPECT_EQ(k.target, target);
    check_code(target, plan, k, target + " " + c.name);
  }
}

// hiprtc, where this machine has one (ROCm's libhiprtc, or ROCm 5's libamdhip64): the same source, the same checks.
TEST_P(SpecializedCodeObject, HiprtcCompilesTheSameSourceToTheFloor) {
  const std::string target = GetParam();
  if (!detail::hiprtc().loaded()) GTEST_SKIP() << "no hiprtc here: " << detail::hiprtc().load_error();
  try {  // an old hiprtc may not know the target (HIP 5.2's comgr and gfx11): then there is nothing to check
    detail::hiprtc().compile_code("__global__ void mlpcore_probe(float* x) { x[0] = 1.0f; }\n", target, detail::Assembly::full);
  } catch (const Error& e) {
    GTEST_SKIP() << detail::hiprtc().version() << " cannot build an empty kernel for " << target << ": " << e.what();
  }
  for (const SpecializedCase& c : shapes()) {
    const detail::FusedPlan plan = detail::plan_fused(c.model, "hip", {family_of(target), true, false, {true, true}});
    const detail::KernelFile k = detail::compile_kernel_file(plan, target, detail::hiprtc());
    EXPECT_NE(k.compiler.find("hiprtc"), std::string::npos);
    check_code(target, plan, k, target + " hiprtc " + c.name);
  }
}

// The report's GPUs (docs/amd-kernels.md), where this build targets them.
std::vector<std::string> report_targets() {
  std::vector<std::string> out;
  for (const std::string& t : targets())
    if (t == "gfx1100" || t == "gfx1201" || t == "gfx90a") out.push_back(t);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Amdgpu, SpecializedCodeObject, ::testing::ValuesIn(report_targets()), [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mlpcore::test
