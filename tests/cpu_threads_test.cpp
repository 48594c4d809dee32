// The cpu backend's thread count (cgroup quota files, MLPCORE_NUM_THREADS, NetworkOptions::threads), its
// thread pool, and its kernels for each instruction set, against the float64 reference.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "engine/src/cpu_count.h"
#include "engine/src/cpu_kernels.h"
#include "engine/src/thread_pool.h"
#include "mlpcore/error.h"
#include "mlpcore/network.h"
#include "mlpcore/reference.h"
#include "tests/test_util.h"

namespace mlpcore {
namespace {

constexpr double kCpuTolerance = 1e-4;  // the cpu backend's verify tolerance

template <class F>
void expect_error(ErrorCode code, const std::vector<std::string>& needles, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << to_string(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& needle : needles) EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Sets (or, with nullptr, unsets) MLPCORE_NUM_THREADS for one scope and restores what it was.
class NumThreadsEnv {
 public:
  explicit NumThreadsEnv(const char* value) {
    if (const char* was = std::getenv("MLPCORE_NUM_THREADS")) saved_ = was;
    if (value) ::setenv("MLPCORE_NUM_THREADS", value, 1);
    else ::unsetenv("MLPCORE_NUM_THREADS");
  }
  ~NumThreadsEnv() {
    if (saved_) ::setenv("MLPCORE_NUM_THREADS", saved_->c_str(), 1);
    else ::unsetenv("MLPCORE_NUM_THREADS");
  }

 private:
  std::optional<std::string> saved_;
};

// 32 -> 64 x4 (relu) -> 16 and the like: the benchmark shapes.
Model mlp(std::mt19937& rng, std::size_t in, std::size_t width, std::size_t hidden, std::size_t out) {
  std::vector<std::size_t> widths = {in};
  std::vector<Activation> acts;
  for (std::size_t i = 0; i < hidden; ++i) {
    widths.push_back(width);
    acts.push_back(Activation::make(ActivationKind::relu));
  }
  widths.push_back(out);
  acts.push_back(Activation::make(ActivationKind::none));
  return test::random_model(rng, widths, acts);
}

void expect_matches_reference(const Model& model, const std::vector<float>& input, const std::vector<float>& output,
                              const std::string& what) {
  const std::size_t batch = input.size() / model.input_dim();
  const Deviation d = compare(output, reference_forward(model, input, batch));
  EXPECT_TRUE(d.within(kCpuTolerance)) << what << ": max rel error " << d.max_rel << " at " << d.worst;
}

TEST(CpuCount, Cgroup2CpuMax) {
  EXPECT_EQ(detail::cpus_from_cgroup2_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(detail::cpus_from_cgroup2_cpu_max("200000 100000\n"), 2u);
  EXPECT_EQ(detail::cpus_from_cgroup2_cpu_max("150000 100000"), 2u);  // a part of a CPU counts as one
  EXPECT_EQ(detail::cpus_from_cgroup2_cpu_max("50000 100000\n"), 1u);
  EXPECT_EQ(detail::cpus_from_cgroup2_cpu_max("800000 50000\n"), 16u);
  for (const char* bad : {"", "\n", "100000", "x 100000", "100000 0", "100000 y", "-5 100000", "1 2 3"})
    EXPECT_EQ(detail::cpus_from_cgroup2_cpu_max(bad), std::nullopt) << "'" << bad << "'";
}

TEST(CpuCount, Cgroup2PathOfTheProcess) {
  EXPECT_EQ(detail::cgroup2_path("0::/user.slice/user-0.slice/session-3.scope\n"), "/user.slice/user-0.slice/session-3.scope");
  EXPECT_EQ(detail::cgroup2_path("12:cpu,cpuacct:/docker/abc\n1:name=systemd:/x\n0::/system.slice/x.service\n"), "/system.slice/x.service");
  EXPECT_EQ(detail::cgroup2_path("0::/\n"), "/");
  for (const char* none : {"", "12:cpu,cpuacct:/docker/abc\n", "0::\n", "1::/x\n"})
    EXPECT_EQ(detail::cgroup2_path(none), std::nullopt) << "'" << none << "'";
}

TEST(CpuCount, Cgroup1CfsQuota) {
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("300000\n", "100000\n"), 3u);
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("250000\n", "100000\n"), 3u);
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("10000\n", "100000\n"), 1u);
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("", "100000\n"), std::nullopt);
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("100000\n", "0\n"), std::nullopt);
  EXPECT_EQ(detail::cpus_from_cgroup1_cfs("abc", "100000"), std::nullopt);
}

TEST(CpuCount, AvailableCpusAreWithinTheAffinityMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const unsigned cpus = detail::available_cpus();
  EXPECT_GE(cpus, 1u);
  EXPECT_LE(cpus, static_cast<unsigned>(CPU_COUNT(&set)));
}

TEST(CpuCount, NumThreadsEnvironmentVariable) {
  const NumThreadsEnv unset(nullptr);
  EXPECT_EQ(detail::cpu_threads(0), detail::available_cpus());
  {
    const NumThreadsEnv env("3");
    EXPECT_EQ(detail::cpu_threads(0), 3u);
    EXPECT_EQ(detail::cpu_threads(5), 5u) << "NetworkOptions::threads wins over the variable";
  }
  EXPECT_EQ(detail::parse_num_threads("1024"), 1024u);
  EXPECT_EQ(detail::parse_num_threads(" 8\n"), 8u);
  for (const char* bad : {"", "0", "-2", "four", "4x", "1.5", "1025", "99999999999999999999"})
    expect_error(ErrorCode::invalid_argument, {"MLPCORE_NUM_THREADS", std::string("'") + bad + "'"},
                 [&] { detail::parse_num_threads(bad); });
}

TEST(CpuCount, InvalidThreadCountsFailNetworkConstruction) {
  std::mt19937 rng(1);
  const Model model = mlp(rng, 3, 16, 1, 1);
  {
    const NumThreadsEnv env("lots");
    expect_error(ErrorCode::invalid_argument, {"MLPCORE_NUM_THREADS", "'lots'"}, [&] { Network(model, "cpu"); });
    NetworkOptions options;
    options.backend = "cpu";
    options.threads = 2;  // an explicit count does not read the variable
    EXPECT_NO_THROW(Network(model, options));
  }
  NetworkOptions options;
  options.backend = "cpu";
  options.threads = kMaxCpuThreads + 1;
  expect_error(ErrorCode::invalid_argument, {"threads", std::to_string(kMaxCpuThreads + 1)}, [&] { Network(model, options); });
}

TEST(CpuThreadPool, RunsEveryIndexOnceFromConcurrentCallers) {
  detail::ThreadPool pool(4);
  EXPECT_EQ(pool.threads(), 4u);
  std::vector<std::thread> callers;
  std::vector<std::vector<std::atomic<int>>> hits;
  for (int c = 0; c < 6; ++c) hits.emplace_back(1000);
  for (int c = 0; c < 6; ++c)
    callers.emplace_back([&, c] {
      for (int repeat = 0; repeat < 20; ++repeat)
        pool.run(50, [&](std::size_t i) {
          for (std::size_t k = i * 20; k < i * 20 + 20; ++k) hits[static_cast<std::size_t>(c)][k]++;
        });
    });
  for (auto& t : callers) t.join();
  for (const auto& h : hits)
    for (const auto& n : h) ASSERT_EQ(n.load(), 20);
}

TEST(CpuThreadPool, ATaskExceptionReachesTheCaller) {
  detail::ThreadPool pool(3);
  EXPECT_THROW(pool.run(10, [](std::size_t i) { if (i == 7) throw std::runtime_error("task 7"); }), std::runtime_error);
  std::atomic<int> done = 0;
  pool.run(10, [&](std::size_t) { done++; });  // still usable
  EXPECT_EQ(done.load(), 10);
}

TEST(CpuThreads, OneAndManyThreadsMatchTheReference) {
  std::mt19937 rng(11);
  for (const auto& [in, width, hidden, out] : {std::tuple{32, 64, 4, 16}, std::tuple{3, 64, 4, 1}, std::tuple{7, 37, 3, 5}}) {
    const Model model = mlp(rng, in, width, hidden, out);
    const std::size_t batch = 20000 + 29;  // many blocks, the last one partial
    const auto input = test::random_inputs(rng, batch * model.input_dim());
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      NetworkOptions options;
      options.backend = "cpu";
      options.threads = threads;
      const Network net(model, options);
      expect_matches_reference(model, input, net.infer(input),
                               std::to_string(in) + "-" + std::to_string(width) + "x" + std::to_string(hidden) + "-" +
                                   std::to_string(out) + ", " + std::to_string(threads) + " threads");
    }
  }
}

TEST(CpuThreads, ConcurrentInferOnOneMultiThreadedNetwork) {
  std::mt19937 rng(12);
  const Model model = mlp(rng, 32, 64, 4, 16);
  NetworkOptions options;
  options.backend = "cpu";
  options.threads = 4;
  const Network net(model, options);
  constexpr int kCallers = 6;
  std::vector<std::vector<float>> inputs, outputs(kCallers);
  for (int t = 0; t < kCallers; ++t) inputs.push_back(test::random_inputs(rng, 32 * (3000 + 101 * static_cast<std::size_t>(t))));
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t)
    callers.emplace_back([&, t] {
      for (int repeat = 0; repeat < 10; ++repeat) outputs[static_cast<std::size_t>(t)] = net.infer(inputs[static_cast<std::size_t>(t)]);
    });
  for (auto& c : callers) c.join();
  for (std::size_t t = 0; t < kCallers; ++t) expect_matches_reference(model, inputs[t], outputs[t], "caller " + std::to_string(t));
}

// Every kernel set this CPU runs (AVX-512 and AVX2 where present, and the ones the backend then does
// not pick), for every activation and widths that are not multiples of the tile.
TEST(CpuKernels, EachInstructionSetMatchesTheReference) {
  std::vector<const detail::CpuKernels*> sets = {&detail::generic_cpu_kernels()};
  if (const auto* avx2 = detail::avx2_fma_cpu_kernels()) sets.push_back(avx2);
  if (const auto* avx512 = detail::avx512_cpu_kernels()) sets.push_back(avx512);
  std::mt19937 rng(13);
  for (const auto kind : test::all_activation_kinds()) {
    const Model model = test::random_model(rng, {5, 19, 64, 3}, {Activation::make(kind), Activation::make(ActivationKind::relu),
                                                                   Activation::make(ActivationKind::none)});
    const detail::PackedCpuNetwork net = detail::pack_cpu_network(model);
    std::vector<float> scratch_storage(2 * detail::cpu_activation_floats(net.layers.data(), net.layers.size()) + 8);
    float* scratch = scratch_storage.data() + (8 - reinterpret_cast<std::uintptr_t>(scratch_storage.data()) / 4 % 8) % 8;
    for (std::size_t rows : {std::size_t{1}, std::size_t{50}, detail::kCpuBlockRows}) {
      const auto input = test::random_inputs(rng, rows * model.input_dim(), -2.0f, 2.0f);
      for (const auto* set : sets) {
        std::vector<float> output(rows * model.output_dim());
        set->forward_block(net.layers.data(), net.layers.size(), input.data(), output.data(), rows, scratch);
        expect_matches_reference(model, input, output, std::string(set->isa) + " " + to_string(kind) + " rows " + std::to_string(rows));
      }
    }
  }
}

TEST(CpuKernels, TheBackendNamesItsInstructionSet) {
  for (const auto& b : list_backends())
    if (b.name == "cpu") EXPECT_NE(b.description.find(detail::best_cpu_kernels().isa), std::string::npos) << b.description;
}

}  // namespace
}  // namespace mlpcore
