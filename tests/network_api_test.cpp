// The engine API: backend listing and selection, and argument checking on infer.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "engine/src/host_memory.h"
#include "mlpcore/error.h"
#include "mlpcore/network.h"
#include "mlpcore/reference.h"
#include "tests/test_util.h"

namespace mlpcore {
namespace {

Model small_model() {
  std::mt19937 rng(1);
  return test::random_model(rng, {3, 16, 2}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
}

template <class F>
void expect_error(ErrorCode code, const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << to_string(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(NetworkApi, BackendListSaysWhatRunsAndWhyOthersDoNot) {
  const auto backends = list_backends();
  bool has_cpu = false;
  for (const auto& b : backends) {
    if (b.name == "cpu") {
      has_cpu = true;
      EXPECT_TRUE(b.available);
      EXPECT_GT(b.verify_tolerance, 0.0);
    }
    if (!b.available) EXPECT_FALSE(b.unavailable_reason.empty()) << b.name;
  }
  EXPECT_TRUE(has_cpu);
  EXPECT_EQ(default_backend(), "cpu");  // no GPU backend can run on the CI machines
}

TEST(NetworkApi, AutoPicksTheDefaultBackend) {
  const Network net(small_model());
  EXPECT_EQ(net.backend().name, default_backend());
  EXPECT_EQ(net.input_dim(), 3u);
  EXPECT_EQ(net.output_dim(), 2u);
}

TEST(NetworkApi, UnknownAndUnavailableBackendsAreClearErrors) {
  const Model m = small_model();
  expect_error(ErrorCode::unknown_backend, "known: auto, ", [&] { Network(m, "tpu"); });
  for (const auto& b : list_backends())
    if (!b.available) expect_error(ErrorCode::backend_unavailable, b.unavailable_reason, [&] { Network(m, b.name); });
}

TEST(NetworkApi, InvalidModelsAreRejected) {
  Model m = small_model();
  m.layers[1].bias.pop_back();
  expect_error(ErrorCode::shape, "layers.1.bias", [&] { Network(m, "cpu"); });
  expect_error(ErrorCode::missing_tensor, "no layers", [&] { Network(Model{}, "cpu"); });
}

TEST(NetworkApi, BadInferArgumentsAreClearErrors) {
  const Network net(small_model(), "cpu");
  std::vector<float> in(6), out(4);
  expect_error(ErrorCode::invalid_argument, "batch", [&] { net.infer(in.data(), out.data(), 0); });
  expect_error(ErrorCode::invalid_argument, "input", [&] { net.infer(nullptr, out.data(), 1); });
  expect_error(ErrorCode::invalid_argument, "output", [&] { net.infer(in.data(), nullptr, 1); });
  expect_error(ErrorCode::invalid_argument, "expected batch*input_dim = 9", [&] { net.infer(in, std::span<float>(out), 3); });
  expect_error(ErrorCode::invalid_argument, "expected batch*output_dim = 4", [&] { net.infer(in, std::span<float>(out).first(3), 2); });
  expect_error(ErrorCode::invalid_argument, "not a multiple", [&] { net.infer(std::span<const float>(in).first(5)); });
  expect_error(ErrorCode::invalid_argument, "batch", [&] { net.infer(std::span<const float>()); });
}

TEST(NetworkApi, EnqueueOnAHostBackendRunsBeforeReturning) {
  const Model m = small_model();
  for (const char* backend : {"cpu", "emu-cdna"}) {
    const Network net(m, backend);
    const std::vector<float> in = {0.5f, -0.25f, 1.0f, 0.0f, 0.1f, -0.9f};
    std::vector<float> out(4, NAN);
    net.enqueue(in.data(), out.data(), 2);
    const auto ref = test::naive_forward(m, in, 2);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(out[i], ref[i], 1e-2 * std::max(1.0, std::fabs(ref[i]))) << backend;
    expect_error(ErrorCode::invalid_argument, "enqueue: batch", [&] { net.enqueue(in.data(), out.data(), 0); });
  }
}

// Pages the host cannot read (as a GPU's device memory is mapped in a process) or write: host backends
// refuse buffers there, naming them, instead of crashing, and touch nothing of the call.
class HostPages {
 public:
  HostPages() {
    base_ = static_cast<char*>(::mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    ::mprotect(base_ + page_, page_, PROT_READ);
    ::mprotect(base_ + 2 * page_, page_, PROT_NONE);
  }
  ~HostPages() { ::munmap(base_, 3 * page_); }
  HostPages(const HostPages&) = delete;
  HostPages& operator=(const HostPages&) = delete;

  float* writable_end(std::size_t floats) const { return reinterpret_cast<float*>(base_ + page_) - floats; }
  float* read_only() const { return reinterpret_cast<float*>(base_ + page_); }
  float* no_access() const { return reinterpret_cast<float*>(base_ + 2 * page_); }

 private:
  std::size_t page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  char* base_;
};

TEST(NetworkApi, HostBackendsRefuseBuffersTheHostCannotReach) {
  const Model m = small_model();
  const HostPages pages;
  const std::vector<float> in = {0.5f, -0.25f, 1.0f, 0.0f, 0.1f, -0.9f};
  for (const char* backend : {"cpu", "emu-nvidia"}) {
    const Network net(m, backend);
    std::vector<float> out(4, NAN);
    expect_error(ErrorCode::invalid_argument, "infer: input: is not host memory this process can read", [&] { net.infer(pages.no_access(), out.data(), 2); });
    expect_error(ErrorCode::invalid_argument, "enqueue: input: is not host memory this process can read", [&] { net.enqueue(pages.no_access(), out.data(), 2); });
    // Its first sample readable, its last value past the end of the readable pages.
    const float* straddling = pages.no_access() - 5;
    expect_error(ErrorCode::invalid_argument, "input: is not host memory", [&] { net.infer(straddling, out.data(), 2); });
    for (const float v : out) EXPECT_TRUE(std::isnan(v)) << backend << ": the output was written";
    expect_error(ErrorCode::invalid_argument, "infer: output: is not host memory this process can write", [&] { net.infer(in.data(), pages.read_only(), 2); });
    expect_error(ErrorCode::invalid_argument, "output: is not host memory this process can write", [&] { net.infer(in.data(), pages.no_access(), 2); });
    std::uint16_t out16[4];
    expect_error(ErrorCode::invalid_argument, "input: is not host memory", [&] { net.infer(reinterpret_cast<const std::uint16_t*>(pages.no_access()), out16, 2); });
    // The last bytes of a writable page, right before a read-only one, are fine.
    float* last = pages.writable_end(4);
    std::fill(last, last + 4, NAN);
    net.infer(in.data(), last, 2);
    const auto ref = test::naive_forward(m, in, 2);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(last[i], ref[i], 1e-2 * std::max(1.0, std::fabs(ref[i]))) << backend;
  }
}

// The probe itself (engine/src/host_memory.h): a refused store leaves nothing in the thread's pipe for the
// next probe to write into its buffer, and a buffer past the end of the address space is refused.
TEST(HostMemory, ProbesLeaveTheBuffersAsTheyWere) {
  const HostPages pages;
  std::vector<char> bytes(64, 'x');
  bytes.front() = 'a';
  bytes.back() = 'z';
  EXPECT_FALSE(detail::host_can_access(pages.read_only(), 64, detail::HostAccess::read_write));
  EXPECT_TRUE(detail::host_can_access(pages.read_only(), 64, detail::HostAccess::read));
  EXPECT_FALSE(detail::host_can_access(reinterpret_cast<const char*>(pages.no_access()) - 1, 2, detail::HostAccess::read));
  EXPECT_TRUE(detail::host_can_access(bytes.data(), bytes.size(), detail::HostAccess::read_write));
  EXPECT_EQ(bytes.front(), 'a');
  EXPECT_EQ(bytes.back(), 'z');
  EXPECT_TRUE(detail::host_can_access(bytes.data(), 1, detail::HostAccess::read_write));
  EXPECT_EQ(bytes.front(), 'a');
  EXPECT_FALSE(detail::host_can_access(reinterpret_cast<const void*>(UINTPTR_MAX - 7), 16, detail::HostAccess::read));
}

TEST(NetworkApi, MovedNetworkKeepsWorking) {
  const Model m = small_model();
  Network a(m, "cpu");
  Network b = std::move(a);
  const std::vector<float> in = {0.1f, 0.2f, 0.3f};
  const auto out = b.infer(in);
  const auto ref = test::naive_forward(m, in, 1);
  EXPECT_NEAR(out[0], ref[0], 1e-5);
  EXPECT_NEAR(out[1], ref[1], 1e-5);
  expect_error(ErrorCode::invalid_argument, "moved", [&] { a.infer(in); });  // NOLINT(bugprone-use-after-move)
}

TEST(Reference, CompareMeasuresTheDocumentedError) {
  const std::vector<float> y = {1.0f, 10.5f, INFINITY, NAN};
  const std::vector<double> r = {1.25, 10.0, INFINITY, NAN};
  const Deviation d = compare(y, r);
  EXPECT_DOUBLE_EQ(d.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(d.max_rel, 0.2);  // 0.25 / max(1, 1.25); the other finite pair gives 0.5 / 10
  EXPECT_EQ(d.worst, 0u);
  EXPECT_TRUE(d.within(0.2));
  EXPECT_FALSE(d.within(0.19));
  const Deviation one_sided = compare(std::vector<float>{1.0f, 2.0f}, std::vector<double>{1.0, INFINITY});
  EXPECT_TRUE(std::isinf(one_sided.max_rel));
  EXPECT_EQ(one_sided.worst, 1u);
}

}  // namespace
}  // namespace mlpcore
