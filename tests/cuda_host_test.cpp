// The cuda backend's host logic without an NVIDIA GPU: the embedded fat binary, the probe's reasons, the
// fallback; and the C interface (libmlpcore_c) that the GPU benchmark drives.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "engine/src/cuda_backend.h"
#include "engine/src/cuda_driver.h"
#include "engine/src/device_buffer.h"
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
// The kernels of the PTX the fat binary holds for its newest architecture, by name: each one's text from
// its .entry to the next (empty if the file is missing).
std::map<std::string, std::string> fatbin_ptx_entries() {
  std::ifstream file(MLPCORE_CUDA_PTX);
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
#endif

TEST(CudaFatbin, HoldsEveryFusedKernel) {
#ifdef MLPCORE_NO_CUDA_BUILD
  GTEST_SKIP() << "configured with MLPCORE_CUDA=OFF (no nvcc)";
#else
  // The fat binary nvcc built, every byte: nvcc compresses each architecture's code in it (it does for
  // large ones), so no kernel's name can be read there; the PTX it keeps with it is read for every
  // kernel (NoKernelKeepsArraysInLocalMemory).
  const auto objects = cuda_code_objects();
  ASSERT_EQ(objects.size(), 1u) << "built with nvcc, so the fat binary is embedded";
  const std::string_view image(reinterpret_cast<const char*>(objects[0].data), objects[0].size);
  std::ifstream file(MLPCORE_CUDA_FATBIN, std::ios::binary);
  ASSERT_TRUE(file) << MLPCORE_CUDA_FATBIN;
  const std::string built((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(image.size(), built.size());
  EXPECT_TRUE(image == built) << "the library embeds " << MLPCORE_CUDA_FATBIN;
  ASSERT_GE(image.size(), 4u);
  std::uint32_t magic = 0;
  std::memcpy(&magic, image.data(), 4);
  EXPECT_EQ(magic, 0xBA55ED50u) << "a fat binary";
#endif
}

// The kernels nvcc built, read in the PTX the fat binary holds for its newest architecture: each one
// expected is there, runs matrix instructions, and keeps no array in local memory, as NvrtcCompile checks
// the specialized kernels. The compiled-in shapes leave unrolling their output tiles to the compiler
// (FusedPolicy::compiler_unrolls_tiles); one that declined would leave their arrays in local memory, and
// nothing recompiles a kernel built with the library.
TEST(CudaFatbin, NoKernelKeepsArraysInLocalMemory) {
#ifdef MLPCORE_NO_CUDA_BUILD
  GTEST_SKIP() << "configured with MLPCORE_CUDA=OFF (no nvcc)";
#else
  std::set<std::string> expected;
  const auto add = [&](const std::string& name, std::initializer_list<const char*> accumulations) {
    for (const char* acc : accumulations)
      for (const char* io : {"", "_f16"})
        for (const char* layout : {"", "_fm"}) expected.insert(name + acc + io + layout);
  };
#define MLPCORE_EXPECT_RUNTIME(width) add("mlpcore_mlp_w" #width, {"", "_act"});
  MLPCORE_RUNTIME_WIDTHS(MLPCORE_EXPECT_RUNTIME)
#undef MLPCORE_EXPECT_RUNTIME
#define MLPCORE_EXPECT_LARGE_BATCH(width) \
  for (const char* io : {"_fm_large", "_f16_fm_large"}) expected.insert("mlpcore_mlp_w" #width + std::string(io));
  MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS(MLPCORE_EXPECT_LARGE_BATCH)
#undef MLPCORE_EXPECT_LARGE_BATCH
#define MLPCORE_EXPECT_ONE_TILE_INPUT(width) \
  for (const char* io : {"_fm_one_tile_input", "_f16_fm_one_tile_input"}) expected.insert("mlpcore_mlp_w" #width + std::string(io));
  MLPCORE_RUNTIME_ONE_TILE_INPUT_WIDTHS(MLPCORE_EXPECT_ONE_TILE_INPUT)
#undef MLPCORE_EXPECT_ONE_TILE_INPUT
#define MLPCORE_EXPECT_FIXED(index, ...) add("mlpcore_mlp_fixed_" #index, {"", "_f16acc"});
  MLPCORE_FIXED_SHAPES(MLPCORE_EXPECT_FIXED)
#undef MLPCORE_EXPECT_FIXED

  const std::map<std::string, std::string> entries = fatbin_ptx_entries();
  ASSERT_FALSE(entries.empty()) << MLPCORE_CUDA_PTX;
  std::set<std::string> found;
  for (const auto& [name, body] : entries) {
    found.insert(name);
    EXPECT_NE(body.find("mma.sync.aligned"), std::string::npos) << name;
    EXPECT_EQ(body.find(".local"), std::string::npos) << name << ": an array in local memory";
  }
  EXPECT_EQ(found, expected);
#endif
}

// Each run-time-shaped kernel is bound as its layout's policy says (FusedPolicy::min_blocks: the PTX's
// .minnctapersm, absent for 0), the policy the host plans it with: its registers, and so its speed, follow
// the bound (80 wide: 72 registers and spills without it).
TEST(CudaFatbin, RunTimeShapedKernelsTakeTheirLayoutsLaunchBounds) {
#ifdef MLPCORE_NO_CUDA_BUILD
  GTEST_SKIP() << "configured with MLPCORE_CUDA=OFF (no nvcc)";
#else
  const std::map<std::string, std::string> entries = fatbin_ptx_entries();
  ASSERT_FALSE(entries.empty()) << MLPCORE_CUDA_PTX;
  std::set<int> bounds;
  std::map<std::string, int> twins_of;  // kernels with each twin
  for (int w = 1; w <= ops::kMaxTilesPerLayer; ++w)
    for (const bool sample_major : {true, false}) {
      const ops::FusedShape shape{w, w, w, ops::ShapeKnown::widest, sample_major};
      const ops::FusedPolicy policy = ops::fused_policy(ops::TileFamily::nvidia, shape);
      bounds.insert(policy.min_blocks);
      std::vector<std::pair<std::string, int>> names;  // each kernel and its bound
      for (const char* io : {"", "_f16", "_act", "_act_f16"})
        names.emplace_back("mlpcore_mlp_w" + std::to_string(w) + io + (sample_major ? "" : "_fm"), policy.min_blocks);
      // the feature-major kernel's twins, where the host plans them, take the twin's bound
      const std::pair<std::string, ops::RuntimeTwin> twins[] = {{"_fm_large", ops::RuntimeTwin::large_batch},
                                                                 {"_fm_one_tile_input", ops::RuntimeTwin::one_tile_input}};
      for (const auto& [suffix, kind] : twins)
        if (const ops::FusedPolicy twin = ops::runtime_twin_policy(ops::TileFamily::nvidia, w, policy, false, kind); !sample_major && twin != policy) {
          bounds.insert(twin.min_blocks);
          for (const char* io : {"", "_f16"}) names.emplace_back("mlpcore_mlp_w" + std::to_string(w) + io + suffix, twin.min_blocks);
          ++twins_of[suffix];
        }
      for (const auto& [name, expected] : names) {
        const auto entry = entries.find(name);
        ASSERT_NE(entry, entries.end()) << name;
        const std::string directive = ".minnctapersm ";
        const std::size_t at = entry->second.find(directive);
        const int bound = at == std::string::npos ? 0 : std::stoi(entry->second.substr(at + directive.size()));
        EXPECT_EQ(bound, expected) << name;
      }
    }
  EXPECT_GT(twins_of["_fm_large"], 0);
  EXPECT_GT(twins_of["_fm_one_tile_input"], 0);
  EXPECT_GT(bounds.size(), 1u) << "some kernels bound, some not";
#endif
}

TEST(CudaProbe, SaysWhyItCannotRun) {
  const CudaDriver missing("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(missing.loaded());
  const EmbeddedCodeObject fatbin{"fatbin", nullptr, 0};  // a stand-in, so builds without nvcc get that far
  EXPECT_NE(probe_cuda(missing, {&fatbin, 1}).reason.find("no CUDA driver: /nonexistent/libcuda.so.1"), std::string::npos);
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
  const EmbeddedCodeObject fatbin{"fatbin", nullptr, 0};
  EXPECT_EQ(probe_cuda(d, {&fatbin, 1}).description, "NVIDIA Fake H100 (sm_90), device 0");
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
