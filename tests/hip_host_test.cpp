// The hip backend's host logic without an AMD GPU: architecture names, code-object choice, the
// embedded code objects, fallback, and every runtime error path through a stand-in libamdhip64.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "engine/src/amd_arch.h"
#include "engine/src/backend.h"
#include "engine/src/hip_backend.h"
#include "engine/src/hip_runtime.h"
#include "engine/src/amdgpu_clang.h"
#include "engine/src/file_io.h"
#include "engine/src/fused_plan.h"
#include "engine/src/hiprtc.h"
#include "engine/src/kernel_file.h"
#include "engine/src/specialize.h"
#include "mlpcore/error.h"
#include "mlpcore/network.h"
#include "tests/test_util.h"

namespace mlpcore::detail {
namespace {

TEST(AmdArch, ProcessorIsTheFirstPartOfGcnArchName) {
  EXPECT_EQ(processor_of("gfx1100:sramecc+:xnack-"), "gfx1100");
  EXPECT_EQ(processor_of("gfx90a:sramecc+:xnack-"), "gfx90a");
  EXPECT_EQ(processor_of("gfx942"), "gfx942");
  for (const char* bad : {"", "gfx", "sm_90", "GFX1100", "gfx11zz", "gfx1100x:xnack+", ":gfx1100"}) EXPECT_FALSE(processor_of(bad)) << bad;
}

TEST(AmdArch, FamiliesFollowTheMatrixInstructions) {
  for (const char* p : {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151"}) EXPECT_EQ(arch_family(p), Arch::gfx11) << p;
  for (const char* p : {"gfx1200", "gfx1201"}) EXPECT_EQ(arch_family(p), Arch::gfx12) << p;
  for (const char* p : {"gfx908", "gfx90a", "gfx942", "gfx950"}) EXPECT_EQ(arch_family(p), Arch::gfx9) << p;
  for (const char* p : {"gfx900", "gfx906", "gfx1030", "gfx1010"}) EXPECT_EQ(arch_family(p), Arch::unknown) << p;
}

TEST(AmdCodeObjects, OneValidObjectPerConfiguredArchitecture) {
  const auto objects = amd_code_objects();
  ASSERT_FALSE(objects.empty()) << "built with MLPCORE_AMDGPU=ON, so code objects are embedded";
  for (const auto& o : objects) {
    SCOPED_TRACE(o.arch);
    ASSERT_GT(o.size, 4u);
    EXPECT_EQ(std::memcmp(o.data, "\x7f" "ELF", 4), 0);
    const std::string_view image(reinterpret_cast<const char*>(o.data), o.size);
    for (const char* kernel : {"mlpcore_mlp_w1", "mlpcore_mlp_w7", "mlpcore_mlp_w8", "mlpcore_mlp_fixed_0", "mlpcore_mlp_fixed_3"})
      EXPECT_NE(image.find(kernel), std::string_view::npos) << kernel;
    EXPECT_NE(arch_family(o.arch), Arch::unknown);
    EXPECT_EQ(select_code_object(o.arch, objects), &o);
  }
  EXPECT_EQ(select_code_object("gfx1030", objects), nullptr);
}

// The stand-in runtime as ROCm >= 6 (hipGetDevicePropertiesR0600) and as ROCm 5 (legacy properties only).
struct FakeLibrary {
  const char* name;
  const char* path;
  bool rocm5;
};

void PrintTo(const FakeLibrary& l, std::ostream* os) { *os << l.name; }

class FakeHip : public ::testing::TestWithParam<FakeLibrary> {
 protected:
  void SetUp() override {
    for (const char* v : {"FAKE_HIP_DEVICES", "FAKE_HIP_ARCH", "FAKE_HIP_FAIL", "FAKE_HIP_FAIL_DEVICE"}) ::unsetenv(v);
  }
  HipRuntime rt{GetParam().path};
  const Hiprtc no_hiprtc{"/nonexistent/libhiprtc.so"};  // the built-in kernels, as on a machine without hiprtc
  NetworkOptions quiet = [] {
    NetworkOptions o;
    o.notices = false;
    return o;
  }();
  void* symbol(const char* name) {
    void* lib = ::dlopen(GetParam().path, RTLD_NOW | RTLD_NOLOAD);
    ::dlclose(lib);  // rt keeps it loaded
    return ::dlsym(lib, name);
  }
  template <class T>
  T& recorded(const char* name) {
    return *static_cast<T*>(symbol(name));
  }
  // The calling thread's current device in the fake, as the application sees and sets it.
  int current_device() {
    int device = -1;
    EXPECT_EQ(reinterpret_cast<int (*)(int*)>(symbol("hipGetDevice"))(&device), 0);
    return device;
  }
  void set_current_device(int device) { EXPECT_EQ(reinterpret_cast<int (*)(int)>(symbol("hipSetDevice"))(device), 0); }
};

INSTANTIATE_TEST_SUITE_P(Rocm, FakeHip,
                         ::testing::Values(FakeLibrary{"rocm6", MLPCORE_FAKE_HIP, false}, FakeLibrary{"rocm5", MLPCORE_FAKE_HIP_ROCM5, true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_P(FakeHip, NoRuntimeNoDeviceNoCodeObject) {
  const HipRuntime missing("/nonexistent/libamdhip64.so");
  EXPECT_FALSE(missing.loaded());
  EXPECT_NE(probe_hip(missing, amd_code_objects()).reason.find("no HIP runtime: /nonexistent/libamdhip64.so"), std::string::npos);
  EXPECT_NE(probe_hip(rt, {}).reason.find("MLPCORE_AMDGPU=OFF"), std::string::npos);
  ::setenv("FAKE_HIP_DEVICES", "0", 1);
  EXPECT_EQ(probe_hip(rt, amd_code_objects()).reason, "no AMD GPU (hipGetDeviceCount: hipErrorNoDevice (fake failure))");
  ::setenv("FAKE_HIP_DEVICES", "1", 1);
  ::setenv("FAKE_HIP_ARCH", "gfx1030:xnack-", 1);
  const HipProbe p = probe_hip(rt, amd_code_objects());
  EXPECT_FALSE(p.available);
  EXPECT_NE(p.reason.find("device 0 is gfx1030, which has no matrix-core code object in this build (built for gfx1100"), std::string::npos) << p.reason;
  ::setenv("FAKE_HIP_ARCH", "gfxzz", 1);
  EXPECT_NE(probe_hip(rt, amd_code_objects()).reason.find("unrecognised architecture 'gfxzz'"), std::string::npos);
  ::setenv("FAKE_HIP_ARCH", "", 1);
  EXPECT_NE(probe_hip(rt, amd_code_objects()).reason.find("reports no architecture name"), std::string::npos);
}

TEST_P(FakeHip, PicksTheCodeObjectAndKernelAndLaunchesWholeWaves) {
  struct Case {
    const char* arch;
    Arch family;
    std::vector<std::size_t> widths;
    const char* kernel;
    unsigned block;
  };
  const Case cases[] = {
      {"gfx1100:sramecc-:xnack-", Arch::gfx11, {32, 64, 64, 64, 64, 16}, "mlpcore_mlp_fixed_0", 128},
      {"gfx1201", Arch::gfx12, {20, 30, 5}, "mlpcore_mlp_w2", 128},
      {"gfx1151", Arch::gfx11, {3, 60, 64, 50, 64, 1}, "mlpcore_mlp_fixed_3", 128},
      {"gfx90a:sramecc+:xnack-", Arch::gfx9, {3, 100, 1}, "mlpcore_mlp_w7", 256},
  };
  std::mt19937 rng(1);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.arch);
    ::setenv("FAKE_HIP_ARCH", c.arch, 1);
    const HipProbe probe = probe_hip(rt, amd_code_objects());
    ASSERT_TRUE(probe.available) << probe.reason;
    EXPECT_EQ(probe.arch, c.family);
    EXPECT_EQ(std::string(probe.object->arch), *processor_of(c.arch));
    std::vector<Activation> acts(c.widths.size() - 1, Activation::make(ActivationKind::relu));
    acts.back() = Activation::make(ActivationKind::none);
    const Model m = test::random_model(rng, c.widths, acts);
    auto net = create_hip_network(m, quiet, rt, probe, no_hiprtc);
    const std::size_t batch = 1000;
    std::vector<float> in(batch * m.input_dim()), out(batch * m.output_dim(), -1.0f);
    net->infer({in.data(), out.data(), batch, Io::f32});
    EXPECT_STREQ(recorded<char[128]>("fake_hip_last_launched"), c.kernel);
    EXPECT_EQ(recorded<unsigned>("fake_hip_last_block"), c.block);
    EXPECT_EQ(recorded<unsigned>("fake_hip_last_grid"), (63u + 3) / 4) << "63 tiles of 16, 4 waves a block";
    EXPECT_EQ(out[0], 0.0f) << "the output came back from the (zeroed) device buffer";
    // Device buffers on the caller's stream: exactly one launch there, and no allocation.
    const unsigned mallocs = recorded<unsigned>("fake_hip_mallocs"), launches = recorded<unsigned>("fake_hip_launches");
    int stream_tag = 0;
    net->enqueue({in.data(), out.data(), 17, Io::f32}, &stream_tag);
    EXPECT_EQ(recorded<unsigned>("fake_hip_mallocs"), mallocs);
    EXPECT_EQ(recorded<unsigned>("fake_hip_launches"), launches + 1);
    EXPECT_EQ(recorded<void*>("fake_hip_last_stream"), &stream_tag);
    EXPECT_EQ(recorded<unsigned>("fake_hip_last_grid"), 1u);
    // float16 buffers run the kernel's float16-I/O twin.
    std::vector<std::uint16_t> in16(17 * m.input_dim()), out16(17 * m.output_dim());
    net->enqueue({in16.data(), out16.data(), 17, Io::f16}, &stream_tag);
    EXPECT_EQ(recorded<char[128]>("fake_hip_last_launched"), std::string(c.kernel) + "_f16");
  }
}

TEST_P(FakeHip, EveryRuntimeFailureNamesTheCallAndTheDevice) {
  ::setenv("FAKE_HIP_DEVICES", "2", 1);
  std::mt19937 rng(2);
  const Model m = test::random_model(rng, {3, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  HipProbe probe = probe_hip(rt, amd_code_objects());
  ASSERT_TRUE(probe.available);
  probe.device = 1;  // not the thread's current device, so each call sets it
  for (const char* call : {"hipGetDevice", "hipSetDevice", "hipMalloc", "hipMemcpy", "hipModuleLoadData", "hipModuleLaunchKernel", "hipModuleGetFunction"}) {
    SCOPED_TRACE(call);
    ::setenv("FAKE_HIP_FAIL", call, 1);
    try {
      auto net = create_hip_network(m, quiet, rt, probe, no_hiprtc);
      std::vector<float> in(3), out(1);
      net->infer({in.data(), out.data(), 1, Io::f32});
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::device) << e.what();
      const std::string what = e.what();
      if (std::string(call) == "hipModuleGetFunction")
        EXPECT_NE(what.find("code object has no kernel mlpcore_mlp_w1"), std::string::npos) << what;
      else
        EXPECT_TRUE(what.starts_with("hip device 1: " + std::string(call) + ": hip")) << what;
    }
  }
  ::unsetenv("FAKE_HIP_FAIL");
  EXPECT_EQ(current_device(), 0) << "restored after each failure";
}

// Two networks on two devices, used from several threads at once and built and destroyed on a thread
// whose current device is another: each call runs on its network's device (the fake fails and counts
// any other), errors name the network's device, and the calling thread's current device is left as it was.
TEST_P(FakeHip, NetworksOnTwoDevicesServeManyThreads) {
  ::setenv("FAKE_HIP_DEVICES", "2", 1);
  ::setenv("FAKE_HIP_FAIL", "hipModuleLaunchKernel", 1);
  ::setenv("FAKE_HIP_FAIL_DEVICE", "1", 1);
  std::mt19937 rng(4);
  const Model m = test::random_model(rng, {3, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  HipProbe probes[2] = {probe_hip(rt, amd_code_objects()), {}};
  ASSERT_TRUE(probes[0].available) << probes[0].reason;
  probes[1] = probes[0];
  probes[1].device = 1;
  const unsigned wrong_device = recorded<unsigned>("fake_hip_wrong_device");
  set_current_device(1);
  {
    const std::unique_ptr<BackendNetwork> nets[2] = {create_hip_network(m, quiet, rt, probes[0], no_hiprtc),
                                                       create_hip_network(m, quiet, rt, probes[1], no_hiprtc)};
    std::atomic<int> bad{0};
    std::mutex mutex;
    std::string first_bad;
    auto report = [&](const std::string& what) {
      std::lock_guard lock(mutex);
      if (bad++ == 0) first_bad = what;
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        set_current_device(t % 2);
        std::vector<float> in(3 * 5), out(5, -1.0f);
        for (int i = 0; i < 300; ++i) {
          const int device = (i + t) % 2;  // device 1 fails every launch
          try {
            if (i % 3 == 0) nets[device]->enqueue({in.data(), out.data(), 5, Io::f32}, nullptr);
            else nets[device]->infer({in.data(), out.data(), 5, Io::f32});
            if (device == 1) report("no error on device 1");
          } catch (const Error& e) {
            if (device == 0 || !std::string(e.what()).starts_with("hip device 1: hipModuleLaunchKernel: hipErrorLaunchFailure")) report(e.what());
          }
        }
        if (current_device() != t % 2) report("the thread's current device changed");
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(bad, 0) << first_bad;
  }
  EXPECT_EQ(recorded<unsigned>("fake_hip_wrong_device"), wrong_device) << "calls on another device's memory, module or kernel";
  EXPECT_EQ(current_device(), 1);
  set_current_device(0);
}

// hiprtc at network construction (the stand-in compiler): the model's own kernel for the GPU's processor,
// kept in the kernel cache and taken from it next time; a failed compile runs the built-in kernels instead.
TEST_P(FakeHip, SpecializesWithHiprtcAndCachesTheKernel) {
  const Hiprtc fake_rtc(MLPCORE_FAKE_HIPRTC);
  ASSERT_TRUE(fake_rtc.loaded()) << fake_rtc.load_error();
  void* rtc_lib = ::dlopen(MLPCORE_FAKE_HIPRTC, RTLD_NOW | RTLD_NOLOAD);
  ::dlclose(rtc_lib);
  auto& compiles = *static_cast<unsigned*>(::dlsym(rtc_lib, "fake_hiprtc_compiles"));
  const char* options_used = static_cast<const char*>(::dlsym(rtc_lib, "fake_hiprtc_last_options"));
  const test::TempDir cache;
  NetworkOptions options = quiet;
  options.kernel_cache = cache.path().string();
  std::mt19937 rng(4);
  const Model m = test::random_model(rng, {20, 30, 5}, {Activation::make(ActivationKind::tanh), Activation::make(ActivationKind::none)});
  ::setenv("FAKE_HIP_ARCH", "gfx1201", 1);
  const HipProbe probe = probe_hip(rt, amd_code_objects());
  ASSERT_TRUE(probe.available) << probe.reason;
  const unsigned before = compiles;
  const unsigned kernels = 2;  // float32 and float16 I/O, sample-major: a program each
  const auto run = [&](const BackendNetwork& net) {
    std::vector<float> in(20 * 40), out(5 * 40);
    net.infer({in.data(), out.data(), 40, Io::f32});
    return std::string(recorded<char[128]>("fake_hip_last_launched"));
  };
  {
    const auto net = create_hip_network(m, options, rt, probe, fake_rtc);
    EXPECT_EQ(compiles, before + kernels);
    EXPECT_STREQ(options_used, "--offload-arch=gfx1201 -std=c++20 -O3");
    EXPECT_NE(net->kernel().find("specialized for 20-30-5, compiled by hiprtc 6.2 for gfx1201 in"), std::string::npos) << net->kernel();
    EXPECT_EQ(run(*net), "mlpcore_mlp_specialized");
  }
  {
    const auto net = create_hip_network(m, options, rt, probe, fake_rtc);
    EXPECT_EQ(compiles, before + kernels) << "the second network's kernels come from the cache";
    EXPECT_NE(net->kernel().find("from the kernel cache"), std::string::npos) << net->kernel();
  }
  {
    NetworkOptions built_in = options;
    built_in.specialize = false;
    EXPECT_EQ(run(*create_hip_network(m, built_in, rt, probe, fake_rtc)), "mlpcore_mlp_w2");
    EXPECT_EQ(compiles, before + kernels);
  }
  {
    ::setenv("FAKE_HIPRTC_FAIL", "1", 1);
    NetworkOptions uncached = options;
    uncached.kernel_cache = "off";
    const auto net = create_hip_network(m, uncached, rt, probe, fake_rtc);
    ::unsetenv("FAKE_HIPRTC_FAIL");
    EXPECT_EQ(compiles, before + 2 * kernels);
    EXPECT_EQ(net->kernel(), "run-time-shaped, 32 wide, for 20-30-5");
    EXPECT_EQ(run(*net), "mlpcore_mlp_w2");
  }
}

// A kernel file of `mlpcore compile` (compiled by the clang that built this library): loaded on the GPU it
// was built for, refused by name on another one.
TEST_P(FakeHip, LoadsAKernelFileForItsProcessorOnly) {
  std::mt19937 rng(5);
  const Model m = test::random_model(rng, {7, 40, 40, 2}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::sine),
                                                          Activation::make(ActivationKind::none)});
  const test::TempDir dir;
  NetworkOptions options = quiet;
  options.kernels_file = (dir / "net.gfx1100.mlpk").string();
  const FusedPlan plan = plan_fused(m, "hip", {ops::TileFamily::rdna3, true});
  write_file_atomically(options.kernels_file, encode_kernel_file(compile_kernel_file(plan, "gfx1100", AmdgpuClang())));
  ::setenv("FAKE_HIP_ARCH", "gfx1100", 1);
  {
    const auto net = create_hip_network(m, options, rt, probe_hip(rt, amd_code_objects()), no_hiprtc);
    EXPECT_NE(net->kernel().find("specialized for 7-40x2-2, loaded from " + options.kernels_file), std::string::npos) << net->kernel();
    std::vector<float> in(7 * 3), out(2 * 3);
    net->infer({in.data(), out.data(), 3, Io::f32});
    EXPECT_STREQ(recorded<char[128]>("fake_hip_last_launched"), "mlpcore_mlp_specialized");
  }
  ::setenv("FAKE_HIP_ARCH", "gfx1151", 1);  // the same family (a target the sanitizer build also has)
  try {
    create_hip_network(m, options, rt, probe_hip(rt, amd_code_objects()), no_hiprtc);
    FAIL() << "a gfx1100 kernel file ran on gfx1151";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kernel_file);
    EXPECT_NE(std::string(e.what()).find("gfx1100"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gfx1151"), std::string::npos) << e.what();
  }
}

TEST_P(FakeHip, ReadsTheArchitectureAtItsOffsetInTheEntryPointsLayout) {
  ::setenv("FAKE_HIP_ARCH", "gfx942:sramecc+:xnack-", 1);
  EXPECT_EQ(rt.arch_name(0), "gfx942:sramecc+:xnack-");
  EXPECT_STREQ(recorded<char[64]>("fake_hip_last_properties"), GetParam().rocm5 ? "hipGetDeviceProperties" : "hipGetDevicePropertiesR0600");
}

TEST(HipBackend, WithoutAnAmdGpuTheDefaultIsTheCpu) {
  const auto backends = list_backends();
  const auto hip = std::find_if(backends.begin(), backends.end(), [](const BackendInfo& b) { return b.name == "hip"; });
  ASSERT_NE(hip, backends.end());
  ASSERT_FALSE(hip->available) << "the CI machines have no AMD GPU";
  EXPECT_TRUE(hip->unavailable_reason.starts_with("no AMD GPU") || hip->unavailable_reason.starts_with("no HIP runtime")) << hip->unavailable_reason;
  EXPECT_EQ(default_backend(), "cpu");
  std::mt19937 rng(3);
  const Model m = test::random_model(rng, {2, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  try {
    Network net(m, "hip");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend_unavailable);
    EXPECT_NE(std::string(e.what()).find(hip->unavailable_reason), std::string::npos);
  }
}

}  // namespace
}  // namespace mlpcore::detail
