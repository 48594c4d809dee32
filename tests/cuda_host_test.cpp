// The cuda backend's host logic without an NVIDIA GPU: the embedded fat binary, the probe's reasons, the
// fallback; and the C interface (libmlpcore_c) that the GPU benchmark drives.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "engine/src/cuda_backend.h"
#include "engine/src/cuda_driver.h"
#include "engine/src/device_buffer.h"
#include "engine/src/fused_plan.h"
#include "engine/src/gpu_launch.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/error.h"
#include "mlpcore/mlpcore_c.h"
#include "ops/fused_policy.h"
#include "ops/fused_shapes.h"
#include "ops/mlp_network.h"
#include "ops/half_bits.h"
#include "mlpcore/network.h"
#include "tests/test_util.h"

namespace mlpcore::detail {
namespace {

#ifndef MLPCORE_NO_CUDA_BUILD
// The kernels of a PTX file, by name: each one's text from its .entry to the next (empty if the file is
// missing).
std::map<std::string, std::string> ptx_entries(const char* path) {
  std::ifstream file(path);
  const std::string ptx((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::map<std::string, std::string> entries;
  const std::string entry = ".entry ";
  for (std::size_t at = ptx.find(entry); at != std::string::npos;) {
    const std::size_t next = ptx.find(entry, at + entry.size());
    std::string body = ptx.substr(at, next - at);
    std::string name = body.substr(entry.size(), body.find_first_of("( \n", entry.size()) - entry.size());
    entries.emplace(std::move(name), std::move(body));
    at = next;
  }
  return entries;
}

// The PTX the fat binaries hold for their newest architecture: assembled at -O3 and at -O1.
struct FatbinPtx {
  std::map<std::string, std::string> full = ptx_entries(MLPCORE_CUDA_PTX), light = ptx_entries(MLPCORE_CUDA_LIGHT_PTX);
  // The kernel's text in the fat binary of its assembly (`light`: -O1), and in the other.
  const std::string& body(const std::string& name, bool light_assembly) const { return (light_assembly ? light : full).at(name); }
  const std::string& stub(const std::string& name, bool light_assembly) const { return (light_assembly ? full : light).at(name); }
};

// A built-in kernel's policy and I/O type: what its assembly follows (ops::assembled_light).
struct BuiltInKernel {
  ops::FusedPolicy policy;
  bool float16_io = false;
  bool light() const { return ops::assembled_light(policy, float16_io); }
};

// Every built-in kernel's policy, as the host plans it (engine/src/fused_plan.cpp): the run-time-shaped
// kernels' by width and layout (their _act twins' as runtime_activations_policy makes it, their _f16acc
// twins' where the width has them), their small-batch twins' and feature-major twins' where the policy
// table gives them, and the compiled-in shapes' (both layouts, both accumulations).
std::map<std::string, BuiltInKernel> built_in_kernel_policies() {
  std::map<std::string, BuiltInKernel> policies;
  const auto f16 = [](const char* io) { return std::string(io) == "_f16"; };
  for (int w = 1; w <= ops::kMaxTilesPerLayer; ++w) {
    const std::string name = "mlpcore_mlp_w" + std::to_string(w);
    for (const bool sample_major : {true, false}) {
      const ops::FusedPolicy policy = ops::fused_policy(ops::TileFamily::nvidia, {w, w, w, ops::ShapeKnown::widest, sample_major});
      // (the float16-accumulating twins, where the width has them, take the same policies)
      const bool f16acc = ops::runtime_f16_accumulation(ops::TileFamily::nvidia, w, false);
      for (const char* io : {"", "_f16"}) {
        const std::string layout = sample_major ? "" : "_fm";
        policies[name + io + layout] = {policy, f16(io)};
        if (f16acc) policies[name + "_f16acc" + io + layout] = {policy, f16(io)};
        policies[name + "_act" + io + layout] = {ops::runtime_activations_policy(ops::TileFamily::nvidia, w, policy, true), f16(io)};
        if (const ops::FusedPolicy small = ops::runtime_twin_policy(ops::TileFamily::nvidia, w, policy, false, ops::RuntimeTwin::small_batch);
            small != policy) {
          policies[name + io + layout + "_small"] = {small, f16(io)};
          if (f16acc) policies[name + "_f16acc" + io + layout + "_small"] = {small, f16(io)};
        }
      }
      if (sample_major) continue;
      const std::pair<const char*, ops::RuntimeTwin> twins[] = {{"_fm_large", ops::RuntimeTwin::large_batch},
                                                                 {"_fm_one_tile_input", ops::RuntimeTwin::one_tile_input}};
      for (const auto& [suffix, kind] : twins)
        if (const ops::FusedPolicy twin = ops::runtime_twin_policy(ops::TileFamily::nvidia, w, policy, false, kind); twin != policy)
          for (const char* io : {"", "_f16"}) {
            policies[name + io + suffix] = {twin, f16(io)};
            if (f16acc && kind == ops::RuntimeTwin::large_batch) policies[name + "_f16acc" + io + suffix] = {twin, f16(io)};
          }
    }
  }
  const auto add_fixed = [&](int index, std::initializer_list<int> widths) {
    const ops::FusedShape shape{*widths.begin(), std::max(widths), *(widths.end() - 1), ops::ShapeKnown::tiles};
    for (const char* acc : {"", "_f16acc"})
      for (const char* io : {"", "_f16"})
        for (const char* layout : {"", "_fm"})
          policies["mlpcore_mlp_fixed_" + std::to_string(index) + acc + io + layout] = {ops::fused_policy(ops::TileFamily::nvidia, shape), f16(io)};
  };
#define MLPCORE_FIXED_POLICY(index, hidden, output, ...) add_fixed(index, {__VA_ARGS__});
  MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_POLICY)
#undef MLPCORE_FIXED_POLICY
  return policies;
}
#endif

TEST(CudaFatbin, HoldsEveryFusedKernel) {
#ifdef MLPCORE_NO_CUDA_BUILD
  GTEST_SKIP() << "configured with MLPCORE_CUDA=OFF (no nvcc)";
#else
  // The fat binaries nvcc built, every byte: fatbinary compresses each architecture's code in them
  // (-compress-all, cmake/MlpcoreCuda.cmake), so no kernel's name can be read there; the PTX nvcc keeps
  // with each is read for every kernel (EachKernelHasItsBodyInTheFatBinaryOfItsAssemblyAndNoArrayInLocalMemory).
  const auto objects = cuda_code_objects();
  ASSERT_EQ(objects.size(), 2u) << "built with nvcc, so both fat binaries are embedded";
  const std::pair<const char*, const char*> expected[] = {{"fatbin", MLPCORE_CUDA_FATBIN}, {"fatbin-light", MLPCORE_CUDA_LIGHT_FATBIN}};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& [arch, path] = expected[i];
    EXPECT_STREQ(objects[i].arch, arch);
    const std::string_view image(reinterpret_cast<const char*>(objects[i].data), objects[i].size);
    std::ifstream file(path, std::ios::binary);
    ASSERT_TRUE(file) << path;
    const std::string built((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(image.size(), built.size());
    EXPECT_TRUE(image == built) << "the library embeds " << path;
    ASSERT_GE(image.size(), 4u);
    std::uint32_t magic = 0;
    std::memcpy(&magic, image.data(), 4);
    EXPECT_EQ(magic, 0xBA55ED50u) << "a fat binary";
  }
#endif
}

// The kernels nvcc built, read in the PTX the fat binaries hold for their newest architecture: each one
// expected is in both, its body (matrix instructions) in the one of its policy's assembly for its I/O type
// (ops::assembled_light, the binary the host takes it from: engine/src/gpu_launch.h,
// KernelLookup::by_assembly) and a trap in the other; and no body keeps an array in local memory, as
// NvrtcCompile checks the specialized kernels. The compiled-in shapes leave unrolling their output tiles
// to the compiler (FusedPolicy::compiler_unrolls_tiles); one that declined would leave their arrays in
// local memory, and nothing recompiles a kernel built with the library.
TEST(CudaFatbin, EachKernelHasItsBodyInTheFatBinaryOfItsAssemblyAndNoArrayInLocalMemory) {
#ifdef MLPCORE_NO_CUDA_BUILD
  GTEST_SKIP() << "configured with MLPCORE_CUDA=OFF (no nvcc)";
#else
  std::set<std::string> expected;
  // `name`, each accumulation's suffix, [_f16][_fm], then `twin`.
  const auto add = [&](const std::string& name, std::initializer_list<const char*> accumulations, const char* twin = "") {
    for (const char* acc : accumulations)
      for (const char* io : {"", "_f16"})
        for (const char* layout : {"", "_fm"}) expected.insert(name + acc + io + layout + twin);
  };
#define MLPCORE_EXPECT_RUNTIME(width) add("mlpcore_mlp_w" #width, {"", "_act"});
  MLPCORE_RUNTIME_WIDTHS(MLPCORE_EXPECT_RUNTIME)
#undef MLPCORE_EXPECT_RUNTIME
  // A feature-major twin's two kernels, float32 and float16 I/O: `name`[_f16]_fm`twin`.
  const auto add_twin = [&](const std::string& name, const char* twin) {
    for (const char* io : {"", "_f16"}) expected.insert(name + io + "_fm" + twin);
  };
#define MLPCORE_EXPECT_LARGE_BATCH(width) add_twin("mlpcore_mlp_w" #width, "_large");
  MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS(MLPCORE_EXPECT_LARGE_BATCH)
#undef MLPCORE_EXPECT_LARGE_BATCH
#define MLPCORE_EXPECT_F16ACC(width) add("mlpcore_mlp_w" #width, {"_f16acc"});
  MLPCORE_RUNTIME_F16ACC_WIDTHS(MLPCORE_EXPECT_F16ACC)
#undef MLPCORE_EXPECT_F16ACC
#define MLPCORE_EXPECT_F16ACC_LARGE_BATCH(width) add_twin("mlpcore_mlp_w" #width "_f16acc", "_large");
  MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_WIDTHS(MLPCORE_EXPECT_F16ACC_LARGE_BATCH)
#undef MLPCORE_EXPECT_F16ACC_LARGE_BATCH
#define MLPCORE_EXPECT_SMALL_BATCH(width) add("mlpcore_mlp_w" #width, {"", "_f16acc"}, "_small");
  MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS(MLPCORE_EXPECT_SMALL_BATCH)
#undef MLPCORE_EXPECT_SMALL_BATCH
#define MLPCORE_EXPECT_ONE_TILE_INPUT(width) add_twin("mlpcore_mlp_w" #width, "_one_tile_input");
  MLPCORE_RUNTIME_ONE_TILE_INPUT_WIDTHS(MLPCORE_EXPECT_ONE_TILE_INPUT)
#undef MLPCORE_EXPECT_ONE_TILE_INPUT
#define MLPCORE_EXPECT_FIXED(index, ...) add("mlpcore_mlp_fixed_" #index, {"", "_f16acc"});
  MLPCORE_FIXED_SHAPES(MLPCORE_EXPECT_FIXED)
#undef MLPCORE_EXPECT_FIXED

  const FatbinPtx ptx;
  ASSERT_FALSE(ptx.full.empty()) << MLPCORE_CUDA_PTX;
  ASSERT_FALSE(ptx.light.empty()) << MLPCORE_CUDA_LIGHT_PTX;
  std::set<std::string> full, light;
  for (const auto& entry : ptx.full) full.insert(entry.first);
  for (const auto& entry : ptx.light) light.insert(entry.first);
  EXPECT_EQ(full, expected);
  EXPECT_EQ(light, expected);
  const std::map<std::string, BuiltInKernel> policies = built_in_kernel_policies();
  std::set<std::string> planned;
  int light_bodies = 0;
  for (const auto& [name, kernel] : policies) {
    planned.insert(name);
    if (!expected.contains(name)) continue;
    light_bodies += kernel.light();
    const std::string& body = ptx.body(name, kernel.light());
    EXPECT_NE(body.find("mma.sync.aligned"), std::string::npos) << name;
    EXPECT_EQ(body.find(".local"), std::string::npos) << name << ": an array in local memory";
    const std::string& stub = ptx.stub(name, kernel.light());
    EXPECT_EQ(stub.find("mma.sync.aligned"), std::string::npos) << name << ": a body in both fat binaries";
    EXPECT_NE(stub.find("trap;"), std::string::npos) << name;
  }
  EXPECT_EQ(planned, expected) << "a policy for every kernel built, and a kernel for every policy";
  EXPECT_GT(light_bodies, 0);
  EXPECT_LT(light_bodies, static_cast<int>(expected.size()));
  // Where the table assembles a one-tile-input twin light but for float16 I/O, the two instances' bodies
  // are in different binaries.
  int split = 0;
  for (int w = 2; w <= ops::kMaxTilesPerLayer; ++w) {
    const ops::RuntimeShapeTuning tuning = ops::nvidia_runtime_shape_tuning(w);
    if (!tuning.light_assembly_one_tile_input || !tuning.full_assembly_one_tile_input_float16_io) continue;
    const std::string name = "mlpcore_mlp_w" + std::to_string(w);
    EXPECT_NE(ptx.light.at(name + "_fm_one_tile_input").find("mma.sync.aligned"), std::string::npos) << name;
    EXPECT_NE(ptx.full.at(name + "_f16_fm_one_tile_input").find("mma.sync.aligned"), std::string::npos) << name;
    ++split;
  }
  EXPECT_GT(split, 0);
#endif
}

// Each run-time-shaped kernel is bound as its layout's policy says (FusedPolicy::min_blocks: the PTX's
// .minnctapersm, absent for 0), the policy the host plans it with: its registers, and so its speed, follow
// the bound (80 wide: 72 registers and spills without it).
TEST(CudaFatbin, RunTimeShapedKernelsTakeTheirLayoutsLaunchBounds) {
#ifdef MLPCORE_NO_CUDA_BUILD
  GTEST_SKIP() << "configured with MLPCORE_CUDA=OFF (no nvcc)";
#else
  const FatbinPtx ptx;
  ASSERT_FALSE(ptx.full.empty()) << MLPCORE_CUDA_PTX;
  std::set<int> bounds;
  std::map<std::string, int> twins;  // kernels of each twin
  for (const auto& [name, kernel] : built_in_kernel_policies()) {
    if (!name.starts_with("mlpcore_mlp_w")) continue;
    const ops::FusedPolicy& policy = kernel.policy;
    for (const char* suffix : {"_fm_large", "_fm_one_tile_input", "_small"}) twins[suffix] += name.ends_with(suffix);
    bounds.insert(policy.min_blocks);
    const std::string& body = ptx.body(name, kernel.light());
    const std::string directive = ".minnctapersm ";
    const std::size_t at = body.find(directive);
    const int bound = at == std::string::npos ? 0 : std::stoi(body.substr(at + directive.size()));
    EXPECT_EQ(bound, policy.min_blocks) << name;
  }
  EXPECT_GT(twins["_fm_large"], 0);
  EXPECT_GT(twins["_fm_one_tile_input"], 0);
  EXPECT_GT(twins["_small"], 0);
  EXPECT_GT(bounds.size(), 1u) << "some kernels bound, some not";
#endif
}

// A stand-in runtime whose modules are the kernel names they hold: a kernel is its entry there. It
// records the kernels it launches and their grids.
struct NamedModules {
  mutable std::vector<std::pair<void*, unsigned>> launches;
  void launch(void* function, unsigned grid, unsigned, void**, void*) const { launches.emplace_back(function, grid); }
  void unload_module(void*) const {}
  void* function(void* module, const char* name) const {
    auto& kernels = *static_cast<std::map<std::string, int>*>(module);
    const auto k = kernels.find(name);
    return k == kernels.end() ? nullptr : &k->second;
  }
};

// A specialized plan's small-batch twins keep their kernels' names and come from the modules after the
// kernels' (a kernel file's order: specialized_kernels, then small_batch_twins); a call of at most 2 blocks
// per multiprocessor launches the twin, a larger one the kernel; modules without the twins are refused.
TEST(FusedKernels, SmallBatchTwinsComeFromTheModulesAfterTheKernels) {
  std::mt19937 rng(5);
  const Activation relu = Activation::make(ActivationKind::relu), none = Activation::make(ActivationKind::none);
  const FusedPlan plan =
      plan_fused(test::random_model(rng, {3, 64, 64, 64, 1}, {relu, relu, relu, none}), "cuda", {ops::TileFamily::nvidia, true, false, {true, true}});
  const std::vector<SpecializedKernel> kernels = specialized_kernels(plan), twins = small_batch_twins(plan);
  ASSERT_EQ(twins.size(), 4u);
  const NamedModules rt;
  std::vector<std::map<std::string, int>> names;
  for (const SpecializedKernel& k : kernels) names.push_back({{k.name, 0}});
  for (const SpecializedKernel& t : twins) names.push_back({{t.name, 0}});
  std::vector<DeviceModule<NamedModules>> modules;
  for (auto& m : names) modules.emplace_back(&m, ModuleUnload<NamedModules>{&rt});
  std::vector<std::string> missing;
  const auto record = [&](const std::string& kernel) { missing.push_back(kernel); };
  const FusedKernels found = find_fused_kernels(rt, modules, KernelLookup::any_module, plan, 132, record);
  EXPECT_TRUE(missing.empty());
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const std::size_t index = fused_kernel_index(twins[t].io, twins[t].slot);
    const auto k = std::find_if(kernels.begin(), kernels.end(), [&](const SpecializedKernel& s) { return s.name == twins[t].name; });
    ASSERT_NE(k, kernels.end());
    EXPECT_EQ(found.by_index[index], &names[static_cast<std::size_t>(k - kernels.begin())].at(twins[t].name)) << twins[t].name;
    EXPECT_EQ(found.small_batch_by_index[index], &names[kernels.size() + t].at(twins[t].name)) << twins[t].name;
    const std::size_t up_to = 2 * 132 * 4 * 16 * static_cast<std::size_t>(plan.policy_of(twins[t].slot).sample_tiles);
    const SlotViews views{};
    for (const std::size_t batch : {std::size_t{1}, up_to, up_to + 1}) {
      rt.launches.clear();
      launch_fused(rt, found, views, IoBuffers{nullptr, nullptr, batch, twins[t].io, slot_layout(twins[t].slot)}, 32, nullptr, nullptr);
      ASSERT_EQ(rt.launches.size(), 1u);
      EXPECT_EQ(rt.launches[0].first, batch <= up_to ? found.small_batch_by_index[index] : found.by_index[index]) << twins[t].name << ", " << batch;
    }
  }
  modules.erase(modules.begin() + static_cast<std::ptrdiff_t>(kernels.size()), modules.end());  // a file of the kernels alone
  (void)find_fused_kernels(rt, modules, KernelLookup::any_module, plan, 132, record);
  EXPECT_EQ(missing.size(), twins.size());
}

// The built-in kernels are in both fat binaries, their bodies only in the one of their policy's assembly
// for their I/O type (CudaFatbin above): each of a plan's kernels, and its small-batch twin where it has
// one (here 32 wide; 3-64-64-1 runs a compiled-in shape), is taken from the one of its slot's and I/O type's, where a network's kernels differ (128
// wide: the feature-major one-tile-input twin light for float32 I/O, not for float16, nor the sample-major
// kernel, nor any with SiLU hidden layers), or from the first module that holds it (specialized kernels, a
// module each).
TEST(FusedKernels, BuiltInKernelsComeFromTheFatBinaryOfTheirSlotsAssembly) {
  std::mt19937 rng(3);
  const NamedModules rt;
  int light = 0, full = 0, split = 0, twins = 0;  // split: slots whose two I/O types take different binaries
  const std::vector<std::pair<std::vector<std::size_t>, ActivationKind>> networks = {
      {{3, 128, 128, 1}, ActivationKind::relu}, {{3, 128, 128, 1}, ActivationKind::silu},          {{3, 64, 64, 1}, ActivationKind::relu},
      {{2, 32, 32, 1}, ActivationKind::relu},   {{32, 128, 128, 128, 128, 16}, ActivationKind::relu}};
  for (const auto& [widths, hidden] : networks) {
    std::vector<Activation> acts(widths.size() - 2, Activation::make(hidden));
    acts.push_back(Activation::make(ActivationKind::none));
    const FusedPlan plan = plan_fused(test::random_model(rng, widths, acts), "cuda", {ops::TileFamily::nvidia});
    std::map<std::string, int> names[2];
    for (const KernelSlot slot : kKernelSlots)
      for (const Io io : {Io::f32, Io::f16})
        for (auto& module : names) module[plan.kernel_name(io, slot)] = module[plan.small_batch_twin_name(io, slot)] = 0;
    std::vector<DeviceModule<NamedModules>> modules;
    for (auto& module : names) modules.emplace_back(&module, ModuleUnload<NamedModules>{&rt});
    const auto fail = [](const std::string& kernel) { ADD_FAILURE() << kernel; };
    const FusedKernels by_assembly = find_fused_kernels(rt, modules, KernelLookup::by_assembly, plan, 132, fail);
    const FusedKernels any = find_fused_kernels(rt, modules, KernelLookup::any_module, plan, 132, fail);
    for (const KernelSlot slot : kKernelSlots)
      for (const Io io : {Io::f32, Io::f16}) {
        const std::string name = plan.kernel_name(io, slot);
        const bool light_kernel = ops::assembled_light(plan.policy_of(slot), io == Io::f16);
        (light_kernel ? light : full) += has_kernel(plan, slot, io);
        EXPECT_EQ(by_assembly.by_index[fused_kernel_index(io, slot)], &names[light_kernel ? 1 : 0].at(name)) << name;
        EXPECT_EQ(any.by_index[fused_kernel_index(io, slot)], &names[0].at(name)) << name;
        if (!has_small_batch_twin(plan, slot, io)) continue;
        const std::string twin = plan.small_batch_twin_name(io, slot);
        EXPECT_EQ(by_assembly.small_batch_by_index[fused_kernel_index(io, slot)],
                  &names[ops::assembled_light(plan.small_batch_policy(slot), io == Io::f16) ? 1 : 0].at(twin))
            << twin;
        EXPECT_EQ(any.small_batch_by_index[fused_kernel_index(io, slot)], &names[0].at(twin)) << twin;
        ++twins;
      }
    for (const KernelSlot slot : kKernelSlots)
      split += by_assembly.by_index[fused_kernel_index(Io::f32, slot)] == &names[1].at(plan.kernel_name(Io::f32, slot)) &&
               by_assembly.by_index[fused_kernel_index(Io::f16, slot)] == &names[0].at(plan.kernel_name(Io::f16, slot));
  }
  EXPECT_GT(light, 0);
  EXPECT_GT(full, 0);
  EXPECT_GT(split, 0) << "the 128-wide one-tile-input twin: float32 I/O light, float16 not";
  EXPECT_EQ(twins, 4) << "the 32-wide network's small-batch twins: both layouts, both I/O types";
}

TEST(CudaProbe, SaysWhyItCannotRun) {
  const CudaDriver missing("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(missing.loaded());
  // stand-ins, so builds without nvcc get that far
  const EmbeddedCodeObject fatbins[] = {{"fatbin", nullptr, 0}, {"fatbin-light", nullptr, 0}};
  EXPECT_NE(probe_cuda(missing, fatbins).reason.find("no CUDA driver: /nonexistent/libcuda.so.1"), std::string::npos);
  EXPECT_NE(probe_cuda(missing, {fatbins, 1}).reason.find("not its two fat binaries"), std::string::npos);
  const EmbeddedCodeObject unnamed[] = {{"fatbin", nullptr, 0}, {"gfx1100", nullptr, 0}};
  EXPECT_NE(probe_cuda(missing, unnamed).reason.find("not its two fat binaries"), std::string::npos);
  EXPECT_NE(probe_cuda(missing, {}).reason.find("MLPCORE_CUDA=OFF"), std::string::npos);
}

TEST(CudaProbe, WithoutAnNvidiaGpuTheBackendIsUnavailableWithItsReason) {
  const auto backends = list_backends();
  const auto cuda = std::find_if(backends.begin(), backends.end(), [](const BackendInfo& b) { return b.name == "cuda"; });
  ASSERT_NE(cuda, backends.end());
  ASSERT_FALSE(cuda->available) << "the CI machines have no NVIDIA GPU";
  EXPECT_TRUE(cuda->unavailable_reason.starts_with("no CUDA driver") || cuda->unavailable_reason.starts_with("no NVIDIA GPU") ||
              cuda->unavailable_reason.starts_with("this build has no CUDA fat binary"))
      << cuda->unavailable_reason;
  std::mt19937 rng(1);
  const Model m = test::random_model(rng, {2, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  for (const char* name : {"cuda", "cuda-f16acc"}) {
    try {
      Network net(m, name);
      FAIL() << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::backend_unavailable);
      EXPECT_NE(std::string(e.what()).find(std::string("backend '") + name + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(cuda->unavailable_reason), std::string::npos);
    }
  }
}

// Calls on two devices from several threads at once, through a stand-in libcuda: each runs in its
// device's primary context, pushed on the calling thread and popped after (the fake counts a call on
// another device's memory, module or kernel), errors name the device, and the contexts are released.
TEST(CudaOnDevice, EachCallRunsInItsDevicesContextOnTheCallingThread) {
  const CudaDriver d(MLPCORE_FAKE_CUDA);
  ASSERT_TRUE(d.loaded()) << d.load_error();
  void* lib = ::dlopen(MLPCORE_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  ::dlclose(lib);  // d keeps it loaded
  const unsigned& wrong_context = *static_cast<unsigned*>(::dlsym(lib, "fake_cuda_wrong_context"));
  const int* retained = static_cast<int*>(::dlsym(lib, "fake_cuda_retained"));
  const auto stack_depth = reinterpret_cast<int (*)()>(::dlsym(lib, "fake_cuda_stack_depth"));
  const unsigned wrong_before = wrong_context;
  // The fat binaries by name, in either order.
  const EmbeddedCodeObject fatbins[] = {{"fatbin-light", nullptr, 0}, {"fatbin", nullptr, 0}};
  const CudaProbe probe = probe_cuda(d, fatbins);
  EXPECT_EQ(probe.description, "NVIDIA Fake H100 (sm_90), device 0");
  EXPECT_EQ(probe.fatbin, &fatbins[1]);
  EXPECT_EQ(probe.light_fatbin, &fatbins[0]);
  {
    const CudaOnDevice gpus[2] = {{d, 0}, {d, 1}};
    EXPECT_EQ(retained[0], 1);
    EXPECT_EQ(retained[1], 1);
    const DeviceModule<CudaOnDevice> modules[2] = {load_module(gpus[0], "image"), load_module(gpus[1], "image")};
    void* const kernels[2] = {gpus[0].function(modules[0].get(), "k"), gpus[1].function(modules[1].get(), "k")};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        const std::vector<float> in(16, 1.0f);
        std::vector<float> out(16);
        for (int i = 0; i < 200; ++i) {
          const int device = (i + t) % 2;
          const auto buffer = upload(gpus[device], in);
          gpus[device].launch(kernels[device], 1, 32, nullptr, nullptr);
          gpus[device].copy(out.data(), buffer->get(), sizeof(float) * out.size());
        }
        EXPECT_EQ(out, in);
        EXPECT_EQ(stack_depth(), 0);
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong_context, wrong_before);
    const DeviceBuffer<CudaOnDevice> on0(gpus[0], 16);
    try {
      gpus[1].copy(on0.get(), on0.get(), 16);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "cuda device 1: cuMemcpy: CUDA_ERROR_INVALID_CONTEXT (fake failure)");
    }
  }
  EXPECT_EQ(wrong_context, wrong_before + 1) << "the one copy above";
  EXPECT_EQ(retained[0], 0);
  EXPECT_EQ(retained[1], 0);
}

TEST(CApi, RunsAModelAndReportsErrors) {
  char error[512] = {};
  const std::string heart = std::string(MLPCORE_SOURCE_DIR) + "/models/heart_sdf.safetensors";
  mlpcore_network* net = mlpcore_network_create(heart.c_str(), "cpu", error, sizeof error);
  ASSERT_NE(net, nullptr) << error;
  EXPECT_EQ(mlpcore_network_input_dim(net), 2u);
  EXPECT_EQ(mlpcore_network_output_dim(net), 1u);
  EXPECT_STREQ(mlpcore_network_backend(net), "cpu");
  const float in[4] = {0.0f, 0.0f, 0.5f, -0.25f};
  float out[2] = {NAN, NAN};
  ASSERT_EQ(mlpcore_network_infer(net, in, out, 2, error, sizeof error), 0) << error;
  const auto ref = test::naive_forward(load_model(heart), std::vector<float>(in, in + 4), 2);
  EXPECT_NEAR(out[0], ref[0], 1e-4);
  EXPECT_NEAR(out[1], ref[1], 1e-4);
  EXPECT_EQ(mlpcore_network_enqueue(net, in, out, 0, nullptr, error, sizeof error), -1);
  EXPECT_STREQ(error, "enqueue: batch: must be at least 1");
  mlpcore_network_destroy(net);
  EXPECT_EQ(mlpcore_network_create("/nonexistent.safetensors", "cpu", error, sizeof error), nullptr);
  EXPECT_STREQ(error, "/nonexistent.safetensors: no such file");
  EXPECT_EQ(mlpcore_network_create(heart.c_str(), "tpu", error, 8), nullptr);
  EXPECT_STREQ(error, "backend") << "truncated to the buffer, NUL-terminated";

  // With options: one thread, quiet, "auto" (cpu here).
  net = mlpcore_network_create_with_options(heart.c_str(), "auto", 1, 1, error, sizeof error);
  ASSERT_NE(net, nullptr) << error;
  out[0] = out[1] = NAN;
  ASSERT_EQ(mlpcore_network_infer(net, in, out, 2, error, sizeof error), 0) << error;
  EXPECT_NEAR(out[0], ref[0], 1e-4);
  EXPECT_NEAR(out[1], ref[1], 1e-4);
  int out_of_range = -1;
  ASSERT_EQ(mlpcore_network_enqueued_out_of_range(net, &out_of_range, error, sizeof error), 0) << error;
  EXPECT_EQ(out_of_range, 0);
  EXPECT_EQ(mlpcore_network_enqueued_out_of_range(net, nullptr, error, sizeof error), -1);
  EXPECT_STREQ(error, "mlpcore_network_enqueued_out_of_range: out_of_range: is null");
  mlpcore_network_destroy(net);

  // An input beyond float16's range on a float16-operand backend: the call fails and says why.
  net = mlpcore_network_create(heart.c_str(), "emu-nvidia", error, sizeof error);
  ASSERT_NE(net, nullptr) << error;
  const float large[4] = {0.0f, 0.0f, 1e5f, 0.0f};
  EXPECT_EQ(mlpcore_network_infer(net, large, out, 2, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("at or beyond float16's range (|x| >= 65504)"), std::string::npos) << error;
  mlpcore_network_destroy(net);

  // Feature-major arrays, float32 and float16: the two samples' inputs as two rows of features.
  net = mlpcore_network_create_with_layouts(heart.c_str(), "emu-rdna4", 1, 1, nullptr, nullptr, 1u << MLPCORE_FEATURE_MAJOR, error, sizeof error);
  ASSERT_NE(net, nullptr) << error;
  const float columns[4] = {in[0], in[2], in[1], in[3]};
  out[0] = out[1] = NAN;
  ASSERT_EQ(mlpcore_network_infer_layout(net, columns, out, 2, 0, MLPCORE_FEATURE_MAJOR, error, sizeof error), 0) << error;
  EXPECT_NEAR(out[0], ref[0], 1e-2);
  EXPECT_NEAR(out[1], ref[1], 1e-2);
  std::uint16_t columns16[4], out16[2] = {0x7e00, 0x7e00};
  for (int i = 0; i < 4; ++i) columns16[i] = ops::float_to_f16_bits(columns[i]);
  ASSERT_EQ(mlpcore_network_enqueue_layout(net, columns16, out16, 2, 1, MLPCORE_FEATURE_MAJOR, nullptr, error, sizeof error), 0) << error;
  EXPECT_NEAR(ops::f16_bits_to_float(out16[1]), ref[1], 1e-2);
  EXPECT_EQ(mlpcore_network_infer_layout(net, columns, out, 2, 0, 7, error, sizeof error), -1);
  EXPECT_STREQ(error, "mlpcore_network_infer_layout: layout: 7 is neither MLPCORE_SAMPLE_MAJOR nor MLPCORE_FEATURE_MAJOR");
  mlpcore_network_destroy(net);
  EXPECT_EQ(mlpcore_network_create_with_layouts(heart.c_str(), "cpu", 1, 1, nullptr, nullptr, 0, error, sizeof error), nullptr);
  EXPECT_NE(std::string(error).find("layouts"), std::string::npos) << error;
}

}  // namespace
}  // namespace mlpcore::detail
