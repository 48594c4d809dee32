// AMD's published examples, as our kernels on the wave emulator, against float64 products on the CPU.
#include <gtest/gtest.h>

#include <random>

#include "ops/half_bits.h"
#include "tests/device/rounding.h"
#include "tests/kernels/amd_examples.h"

namespace mlpcore::test_kernels {
namespace {

using emu::launch;

std::vector<float> poisoned(std::size_t n) { return std::vector<float>(n, NAN); }

TEST(AmdExamples, CdnaSgemm16x16x4) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> a(16 * 4), b(4 * 16);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  auto d = poisoned(256);
  launch({1, 1, 1}, {16, 4, 1}, 64, [&] { cdna_sgemm_16x16x4(a.data(), b.data(), d.data()); });
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      double want = 0;
      for (int k = 0; k < 4; ++k) want += static_cast<double>(a[m * 4 + k]) * b[k * 16 + n];
      EXPECT_NEAR(d[m * 16 + n], want, 1e-5) << m << "," << n;
    }
}

TEST(AmdExamples, Rdna3WmmaHelloWorld) {
  std::mt19937 rng(2);
  for (bool ones : {true, false}) {  // the blog's all-ones input, then small random integers (exact)
    std::vector<ops::half_t> a(256), b(256), c(256, static_cast<ops::half_t>(NAN));
    for (int i = 0; i < 256; ++i) {
      a[i] = static_cast<ops::half_t>(ones ? 1.0f : static_cast<float>(static_cast<int>(rng() % 9) - 4));
      b[i] = static_cast<ops::half_t>(ones ? 1.0f : static_cast<float>(static_cast<int>(rng() % 9) - 4));
    }
    launch({1, 1, 1}, {32, 1, 1}, 32, [&] { rdna3_wmma_hello(a.data(), b.data(), c.data()); });
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        float want = 0;
        for (int k = 0; k < 16; ++k) want += static_cast<float>(a[m * 16 + k]) * static_cast<float>(b[k * 16 + n]);
        EXPECT_EQ(static_cast<float>(c[m * 16 + n]), want) << m << "," << n;
      }
  }
}

TEST(AmdExamples, Rdna4WmmaMatmulWithCvtPkrtz) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> a(256), b(256);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  auto c = poisoned(256);
  launch({1, 1, 1}, {32, 1, 1}, 32, [&] { rdna4_wmma_matmul(a.data(), b.data(), c.data()); });
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      double want = 0, scale = 0;
      for (int k = 0; k < 16; ++k) {
        want += static_cast<double>(test::round_toward_zero_f16(a[m * 16 + k])) * test::round_toward_zero_f16(b[k * 16 + n]);
        scale += std::fabs(a[m * 16 + k] * b[k * 16 + n]);
      }
      EXPECT_NEAR(c[m * 16 + n], want, 1e-6 * scale) << m << "," << n;
    }
}

TEST(AmdExamples, Rdna4MinimumMlpReusesDAsB) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<ops::half_t> w(512), x(256);
  for (auto& v : w) v = static_cast<ops::half_t>(dist(rng));
  for (auto& v : x) v = static_cast<ops::half_t>(dist(rng));
  auto out = poisoned(256);
  launch({1, 1, 1}, {32, 1, 1}, 32, [&] { rdna4_minimum_mlp(w.data(), x.data(), out.data()); });
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      // h = W0 x; the kernel rounds h to float16 for B and keeps it as C: out = W1 half(h) + h.
      auto h = [&](int row) {
        double acc = 0;
        for (int k = 0; k < 16; ++k) acc += static_cast<double>(w[row * 16 + k]) * static_cast<double>(x[k * 16 + n]);
        return acc;
      };
      double want = h(m);
      for (int k = 0; k < 16; ++k)
        want += static_cast<double>(w[256 + m * 16 + k]) * ops::f16_bits_to_float(ops::float_to_f16_bits(static_cast<float>(h(k))));
      EXPECT_NEAR(out[m * 16 + n], want, 2e-3) << m << "," << n;
    }
}

}  // namespace
}  // namespace mlpcore::test_kernels
