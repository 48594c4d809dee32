// Specialized kernels compiled by NVRTC, as the cuda backend and `mlpcore compile` do, where NVRTC is on
// the machine (no GPU needed): kernel files for sm_90, and their code checked as CI checks the AMD code
// objects: the matrix-instruction count at the floor, no local arrays, at most a few spilled registers,
// registers reported; and the output stored as whole vectors, as many as its tiles give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <regex>

#include "engine/src/nvrtc.h"
#include "engine/src/specialize.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/error.h"
#include "mlpcore/network.h"
#include "tests/specialized/specialized_cases.h"

namespace mlpcore::detail {
namespace {

#define SKIP_WITHOUT_NVRTC() \
  if (!nvrtc().loaded()) GTEST_SKIP() << "no NVRTC here: " << nvrtc().load_error()

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// mma.sync instructions in kernel k's code: per sample tile of its policy, each layer's out x in tiles,
// two m16n8 instructions per tile, one where a narrow last layer has N = 8; with loop_layers a hidden
// layer that repeats the one before (same widths and activation) runs in that one's loop, so its code is
// not there again (every sample still runs every layer's instructions once).
std::size_t mma_floor(const FusedPlan& p, const SpecializedKernel& k) {
  std::size_t n = 0;
  const std::size_t layers = p.widths.size() - 1;
  for (std::size_t l = 0; l < layers; ++l) {
    const bool repeats = p.policy.loop_layers && l >= 2 && l + 1 < layers && p.widths[l - 1] == p.widths[l] &&
                         p.widths[l] == p.widths[l + 1] && p.activations[l - 1] == p.activations[l];
    if (repeats) continue;
    const bool narrow_n = p.narrow_edges(k.slot).output && l + 1 == layers;
    n += static_cast<std::size_t>(p.widths[l] * p.widths[l + 1]) * (narrow_n ? 1 : 2);
  }
  const ops::FusedPolicy& policy = p.policy_of(k.slot);
  return n * static_cast<std::size_t>(policy.sample_tiles);
}

// The output's whole-vector stores where every sample of a block is in the batch (ops/tile_mma_sm80.h).
// Sample-major (store_rows): two per output tile of N = 16 (a last one of fewer units too) and sample
// tile, 16 or 8 bytes, generic stores (the device API's outputs may be shared memory); a narrow last layer
// (N = 8) is stored element by element.
// Feature-major (store_columns, st.global): per output tile and lane unit (4, or 2 where N = 8) one per 16
// bytes of its 2S samples, or one of 8 or 4 bytes. NVVM split such stores of vectors into 4- or 2-byte ones.
std::size_t output_vector_stores(const FusedPlan& p, const SpecializedKernel& k) {
  const ops::FusedPolicy& policy = p.policy_of(k.slot);
  const auto out_tiles = static_cast<std::size_t>(p.widths.back()), sample_tiles = static_cast<std::size_t>(policy.sample_tiles);
  const bool narrow = p.narrow_edges(k.slot).output;
  if (slot_layout(k.slot) == Layout::sample_major) return narrow ? 0 : 2 * out_tiles * sample_tiles;
  const std::size_t bytes = 2 * sample_tiles * io_bytes(k.io);
  return out_tiles * (narrow ? 2 : 4) * (bytes > 16 ? bytes / 16 : 1);
}

std::size_t vector_stores(const std::string& ptx) {
  std::size_t n = 0;
  for (const char* st : {"st.v4.b32", "st.v2.b32", "st.global.v4.b32", "st.global.v2.b32", "st.global.b32"}) n += count(ptx, st);
  return n;
}

// ptxas may spill a few registers to reach the next occupancy step (64-88-24-56-31-44-36-27 with float16
// accumulators: 96 registers and 12 bytes, or 252 registers and none with room for only one block); more
// than kMaxSpillBytes (engine/src/specialize.h) would mean the kernel's working set no longer fits.

// Where a CUDA driver is installed, NVRTC 12.9 and later take a cubin they built before from the driver's
// compute cache without running ptxas; mlpcore asks for a fresh compile (--no-cache), so that ptxas's
// report, which decides a kernel's register bound (compile_kernel), comes with every compile.
TEST(NvrtcCompile, EveryCompileReportsItsSpillsTheSameSourceAgainToo) {
  SKIP_WITHOUT_NVRTC();
  const auto cases = test::specialized_cases();
  ASSERT_EQ(cases[1].name, "32-32x2-3");
  const FusedPlan plan = plan_fused(cases[1].model, "test", {ops::TileFamily::nvidia, true});
  const std::string source = kernel_source(specialized_source(plan), specialized_kernels(plan).front());
  for (int i = 1; i <= 2; ++i) {
    const CompiledCode c = nvrtc().compile_code(source, "sm_90", Assembly::full);
    EXPECT_TRUE(c.reports_spills) << "compile " << i << ":\n" << c.log;
    EXPECT_NE(c.log.find(" registers"), std::string::npos) << "compile " << i << ":\n" << c.log;
  }
}

// Light assembly (ops::FusedPolicy::light_assembly) is ptxas's -O1 on the same program: NVVM's PTX is the
// same, the code another, and ptxas still reports its registers and spills.
TEST(NvrtcCompile, LightAssemblyAssemblesTheSamePtxOtherwise) {
  SKIP_WITHOUT_NVRTC();
  const auto cases = test::specialized_cases();
  ASSERT_EQ(cases[2].name, "8-128x6-1");
  const FusedPlan plan = plan_fused(cases[2].model, "test", {ops::TileFamily::nvidia, true});
  ASSERT_TRUE(plan.policy.light_assembly);
  const std::string source = kernel_source(specialized_source(plan), specialized_kernels(plan).front());
  const CompiledCode full = nvrtc().compile_code(source, "sm_90", Assembly::full);
  const CompiledCode light = nvrtc().compile_code(source, "sm_90", Assembly::light);
  EXPECT_EQ(light.assembly, full.assembly);
  EXPECT_FALSE(light.code.empty());
  EXPECT_NE(light.code, full.code);
  EXPECT_TRUE(light.reports_spills) << light.log;
}

// ptxas's report of a kernel's spills and registers (-v), as it says them.
std::string registers_and_spills(const CompiledCode& c) {
  std::smatch spills, used;
  if (!std::regex_search(c.log, spills, std::regex("[0-9]+ bytes spill stores, [0-9]+ bytes spill loads")) ||
      !std::regex_search(c.log, used, std::regex("Used [0-9]+ registers")))
    return "no report in:\n" + c.log;
  return spills[0].str() + "; " + used[0].str();
}

// A kernel that spills at its register bound is assembled again light (compile_kernel). With nvJitLink of
// NVRTC's version that is ptxas alone on the PTX NVRTC compiled: the registers and spills of NVRTC's own
// -O1 compile, in a cubin of its own. Without it (an nvJitLink that does not load), NVRTC compiles again.
TEST(NvrtcCompile, AssemblingAgainGivesTheRegistersOfACompileAssembledSo) {
  SKIP_WITHOUT_NVRTC();
  const auto cases = test::specialized_cases();
  ASSERT_EQ(cases[3].name, "16-64x3-16");
  const FusedPlan plan = plan_fused(cases[3].model, "test", {ops::TileFamily::nvidia, true, true});
  ASSERT_GT(plan.policy.min_blocks, 0);
  const std::string source = kernel_source(specialized_source(plan), specialized_kernels(plan).front());
  const CompiledCode full = nvrtc().compile_code(source, "sm_90", Assembly::full);
  const CompiledCode light = nvrtc().compile_code(source, "sm_90", Assembly::light);
  std::cout << "nvJitLink assembles alone: " << nvrtc().assembles_alone() << "\n";
  const CompiledCode again = nvrtc().assemble_again(source, full, "sm_90", Assembly::light);
  EXPECT_EQ(again.assembly, full.assembly);
  EXPECT_FALSE(again.code.empty());
  EXPECT_TRUE(again.reports_spills) << again.log;
  EXPECT_EQ(again.spill_bytes, light.spill_bytes);
  EXPECT_EQ(registers_and_spills(again), registers_and_spills(light));
  if (nvrtc().assembles_alone())
    EXPECT_NE(again.code, light.code) << "nvJitLink's linked cubin, not NVRTC's";
  else
    EXPECT_EQ(again.code, light.code) << "NVRTC's compile again";

  ::setenv("MLPCORE_NVJITLINK_LIBRARY", "/nonexistent/libnvJitLink.so", 1);
  const Nvrtc without;
  const bool alone = without.assembles_alone();  // loads it, on first need: under the variable
  ::unsetenv("MLPCORE_NVJITLINK_LIBRARY");
  EXPECT_FALSE(alone);
  EXPECT_EQ(without.code_version(), without.version() + " without nvJitLink") << "the kernel cache keeps its code apart";
  if (nvrtc().assembles_alone()) EXPECT_EQ(nvrtc().code_version(), nvrtc().version()) << "its entries serve processes without nvJitLink too";
  const CompiledCode compiled = without.assemble_again(source, full, "sm_90", Assembly::light);
  EXPECT_EQ(compiled.code, light.code) << "NVRTC's compile again";
  EXPECT_EQ(registers_and_spills(compiled), registers_and_spills(light));
  EXPECT_THROW((void)NvJitLink(13, true, "/nonexistent/libnvJitLink.so").assemble(full.assembly, "sm_90", Assembly::light), Error);
}

// A kernel's small-batch twin (small_batch_twin): with nvJitLink, ptxas alone on its PTX without the
// .minnctapersm line, at -O3: more registers than the bound leaves (3-64x4-1, feature-major: 255 against
// 96 on CUDA 13.0) and at most kMaxSpillBytes spilled, in code of its own. Without nvJitLink, none.
TEST(NvrtcCompile, SmallBatchTwinsDropTheRegisterBound) {
  SKIP_WITHOUT_NVRTC();
  std::mt19937 rng(20261201);
  const Activation relu = Activation::make(ActivationKind::relu), none = Activation::make(ActivationKind::none);
  const Model model = test::random_model(rng, {3, 64, 64, 64, 64, 1}, {relu, relu, relu, relu, none});
  const FusedPlan plan = plan_fused(model, "test", {ops::TileFamily::nvidia, true, false, {false, true}});
  const SpecializedKernel k = small_batch_twins(plan).at(0);
  const CompiledCode bounded = compile_kernel(plan, specialized_source(plan), k, "sm_90", nvrtc());
  ASSERT_NE(bounded.assembly.find(".minnctapersm 5"), std::string::npos) << bounded.assembly.substr(0, 2000);
  const std::optional<CompiledCode> twin = nvrtc().assemble_unbounded(bounded, "sm_90");
  if (!nvrtc().assembles_alone()) {
    EXPECT_FALSE(twin);
    GTEST_SKIP() << "no nvJitLink of NVRTC's version";
  }
  ASSERT_TRUE(twin);
  EXPECT_EQ(twin->assembly.find(".minnctapersm"), std::string::npos);
  EXPECT_NE(twin->code, bounded.code);
  EXPECT_TRUE(twin->reports_spills) << twin->log;
  EXPECT_LE(twin->spill_bytes, kMaxSpillBytes) << twin->log;
  const auto registers = [](const CompiledCode& c) {
    std::smatch used;
    return std::regex_search(c.log, used, std::regex("Used ([0-9]+) registers")) ? std::stoi(used[1]) : -1;
  };
  EXPECT_LE(registers(bounded), 65536 / (5 * 128)) << bounded.log;
  EXPECT_GT(registers(*twin), registers(bounded)) << twin->log;
  EXPECT_EQ(small_batch_twin(bounded, "sm_90", nvrtc()).code, twin->code) << "kept: it spills at most kMaxSpillBytes";
  EXPECT_FALSE(nvrtc().assemble_unbounded(*twin, "sm_90")) << "no bound left to drop";

  ::setenv("MLPCORE_NVJITLINK_LIBRARY", "/nonexistent/libnvJitLink.so", 1);
  const Nvrtc without;
  const std::optional<CompiledCode> alone = without.assemble_unbounded(bounded, "sm_90");
  ::unsetenv("MLPCORE_NVJITLINK_LIBRARY");
  EXPECT_FALSE(alone);
}

TEST(NvrtcCompile, SpecializedKernelsAreAtTheInstructionFloorWithFewSpills) {
  SKIP_WITHOUT_NVRTC();
  for (const auto& c : test::specialized_cases()) {
    for (const bool f16acc : {false, true}) {
      const FusedPlan plan = plan_fused(c.model, "test", {ops::TileFamily::nvidia, true, f16acc, {true, true}});
      if (plan.kind != KernelKind::specialized) {  // too large to unroll (kMaxUnrolledTiles)
        std::cout << c.name << ": " << plan.describe() << "\n";
        continue;
      }
      const std::string source = specialized_source(plan);
      const std::vector<SpecializedKernel> kernels = specialized_kernels(plan);
      const std::size_t twins = plan.large_batch_kernels ? (plan.large_batch_float32_io ? 2 : 1) : 0;
      ASSERT_EQ(kernels.size(), 4 + twins) << "float32 and float16 I/O, both layouts, large-batch twins";
      for (const SpecializedKernel& k : kernels) {  // as the cuda backend and `mlpcore compile` build them
        const CompiledCode out = compile_kernel(plan, source, k, "sm_90", nvrtc());
        const std::string what = c.name + (f16acc ? " f16acc " : " ") + k.name;
        EXPECT_FALSE(out.code.empty()) << what;
        EXPECT_EQ(count(out.assembly, "mma.sync.aligned"), mma_floor(plan, k)) << what;
        EXPECT_EQ(count(out.assembly, ".local"), 0u) << what << ": local memory";
        EXPECT_EQ(vector_stores(out.assembly), output_vector_stores(plan, k)) << what << ": the output's vector stores";
        const std::regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
        std::size_t reports = 0;
        for (auto m = std::sregex_iterator(out.log.begin(), out.log.end(), spills); m != std::sregex_iterator(); ++m, ++reports) {
          EXPECT_LE(std::stoi((*m)[1]), kMaxSpillBytes) << what << "\n" << out.log;
          EXPECT_LE(std::stoi((*m)[2]), kMaxSpillBytes) << what << "\n" << out.log;
        }
        EXPECT_EQ(reports, 1u) << what << "\n" << out.log;
        if (has_small_batch_twin(plan, k.slot, k.io) && nvrtc().assembles_alone() && out.assembly.find(".minnctapersm") != std::string::npos)
          EXPECT_NE(small_batch_twin(out, "sm_90", nvrtc()).code, out.code) << what << ": its small-batch twin spilled more than kMaxSpillBytes";
        std::smatch used;
        ASSERT_TRUE(std::regex_search(out.log, used, std::regex("Used ([0-9]+) registers"))) << what << "\n" << out.log;
        EXPECT_LE(std::stoi(used[1]), 255) << what;
        std::cout << what << ": " << used[1] << " registers\n";
      }
    }
  }
}

// A network built for both layouts runs the kernels it would run built for either alone: above 64 wide its
// feature-major kernels keep the narrow first layer a feature-major-only network runs (ops/fused_policy.h),
// its sample-major ones the full one, each from a packing of its own (engine/src/fused_packing.h).
TEST(NvrtcCompile, EachLayoutOfABothLayoutsNetworkRunsThatLayoutsOwnKernel) {
  SKIP_WITHOUT_NVRTC();
  const auto cases = test::specialized_cases();
  ASSERT_EQ(cases[2].name, "8-128x6-1");
  for (const bool f16acc : {false, true}) {
    const auto plan = [&](NetworkOptions::Layouts layouts) { return plan_fused(cases[2].model, "test", {ops::TileFamily::nvidia, true, f16acc, layouts}); };
    const FusedPlan both = plan({true, true});
    EXPECT_EQ(both.narrow_edges(KernelSlot::feature_major), (NarrowEdges{true, true}));
    EXPECT_EQ(both.narrow_edges(KernelSlot::sample_major), (NarrowEdges{false, true}));
    for (const SpecializedKernel& k : specialized_kernels(both)) {
      const FusedPlan alone = plan({slot_layout(k.slot) == Layout::sample_major, slot_layout(k.slot) == Layout::feature_major});
      const CompiledCode ours = nvrtc().compile_code(kernel_source(specialized_source(both), k), "sm_90", Assembly::full);
      const CompiledCode theirs = nvrtc().compile_code(kernel_source(specialized_source(alone), k), "sm_90", Assembly::full);
      // The code (the static members declared before it are named after the network's type, whose layouts differ).
      const auto code = [](const std::string& ptx) { return ptx.substr(std::min(ptx.find(".visible .entry"), ptx.size())); };
      EXPECT_FALSE(code(ours.assembly).empty()) << k.name;
      EXPECT_TRUE(code(ours.assembly) == code(theirs.assembly)) << (f16acc ? "f16acc " : "") << k.name << ": the code differs";
      // The narrow first layer: two m16n8k8 per output tile and sample tile.
      const auto narrow_mma = static_cast<std::size_t>(2 * both.widths[1] * both.policy_of(k.slot).sample_tiles);
      EXPECT_EQ(count(ours.assembly, "mma.sync.aligned.m16n8k8"), slot_layout(k.slot) == Layout::feature_major ? narrow_mma : 0u)
          << (f16acc ? "f16acc " : "") << k.name;
    }
  }
}

TEST(NvrtcCompile, CompileKernelsWritesAFileTheCudaBackendAccepts) {
  SKIP_WITHOUT_NVRTC();
  const test::TempDir dir;
  const auto cases = test::specialized_cases();
  const Model& model = cases.front().model;  // 64-64x5-4
  const std::string said = compile_kernels(model, "cuda-f16acc", "sm_90", dir / "k.mlpck");
  EXPECT_NE(said.find("specialized for 64-64x5-4 (float16 accumulation), compiled by NVRTC"), std::string::npos) << said;
  const KernelFile k = read_kernel_file(dir / "k.mlpck");
  EXPECT_EQ(k.target, "sm_90");
  EXPECT_EQ(k.modules.size(), 2u) << "float32 and float16 I/O, sample-major; no register bound (4 input tiles), so no small-batch twins";
  const FusedPlan plan = plan_fused(model, "cuda-f16acc", {ops::TileFamily::nvidia, true, true});
  EXPECT_NO_THROW(check_kernel_file_matches(k, "k", specialized_source_key(specialized_source(plan)), "sm_90", plan.describe()));
  const FusedPlan f32 = plan_fused(model, "cuda", {ops::TileFamily::nvidia, true, false});
  EXPECT_THROW(check_kernel_file_matches(k, "k", specialized_source_key(specialized_source(f32)), "sm_90", f32.describe()), Error);
}

// Each kernel is a program of its own, compiled on a thread of its own: a module per kernel, holding it only,
// then a module per small-batch twin, holding the twin's kernel only.
TEST(NvrtcCompile, EachKernelIsAModuleOfItsOwn) {
  SKIP_WITHOUT_NVRTC();
  const auto cases = test::specialized_cases();
  ASSERT_EQ(cases[3].name, "16-64x3-16");  // bounded: small-batch twins
  const FusedPlan plan = plan_fused(cases[3].model, "cuda", {ops::TileFamily::nvidia, true, false, {true, true}});
  const KernelFile k = compile_kernel_file(plan, "sm_90", nvrtc());
  std::vector<SpecializedKernel> kernels = specialized_kernels(plan);
  const std::vector<SpecializedKernel> twins = small_batch_twins(plan);
  EXPECT_FALSE(twins.empty());
  kernels.insert(kernels.end(), twins.begin(), twins.end());
  ASSERT_EQ(k.modules.size(), kernels.size());
  for (std::size_t m = 0; m < k.modules.size(); ++m) {
    const std::string code(reinterpret_cast<const char*>(k.modules[m].data()), k.modules[m].size());
    for (const SpecializedKernel& kernel : kernels)  // its name in the cubin's string table
      EXPECT_EQ(code.find(kernel.name + '\0') != std::string::npos, kernel.name == kernels[m].name) << "module " << m << ": " << kernel.name;
  }
}

TEST(NvrtcCompile, UnknownTargetsAndBackendsAreRefused) {
  const test::TempDir dir;
  const Model model = test::specialized_cases().front().model;
  for (const char* target : {"sm_75", "sm_9x", "sm_", "90", "gfx1100"}) {
    try {
      (void)compile_kernels(model, "cuda", target, dir / "k.mlpck");
      FAIL() << target;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(target), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)compile_kernels(model, "hip", "sm_90", dir / "k.mlpck"), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "k.mlpck"));
}

// A network too large to unroll runs the built-in kernels, and says why; `mlpcore compile` refuses it
// with that reason instead of writing a file nothing would load (no NVRTC needed: it is refused first).
TEST(NvrtcCompile, NetworksTooLargeToSpecializeAreRefusedSayingWhy) {
  const test::TempDir dir;
  const auto cases = test::specialized_cases();
  const auto big = std::find_if(cases.begin(), cases.end(), [](const auto& c) { return c.name == "random 104-128-128-128-128-128-128-89"; });
  ASSERT_NE(big, cases.end());
  const FusedPlan plan = plan_fused(big->model, "cuda", {ops::TileFamily::nvidia, true, false});
  EXPECT_NE(plan.kind, KernelKind::specialized);
  EXPECT_NE(plan.not_specialized.find("more than the 256"), std::string::npos) << plan.not_specialized;
  EXPECT_EQ(plan_fused(cases.front().model, "cuda", {ops::TileFamily::nvidia, true, false}).not_specialized, "");
  try {
    (void)compile_kernels(big->model, "cuda", "sm_90", dir / "k.mlpck");
    FAIL() << "compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported_model) << e.what();
    EXPECT_NE(std::string(e.what()).find("built-in kernels"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "k.mlpck"));
}

}  // namespace
}  // namespace mlpcore::detail
