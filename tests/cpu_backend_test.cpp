// The CPU backend against an independent naive float64 forward pass on many random models.
#include <gtest/gtest.h>

#include <thread>

#include "mlpcore/network.h"
#include "ops/half_bits.h"
#include "tests/test_util.h"

namespace mlpcore {
namespace {

// float32 arithmetic (2^-24 relative rounding per operation) through at most 8 layers of width <= 300
// with O(1) activations stays far below 1e-4 relative to max(1, |reference|).
constexpr double kTolerance = 1e-4;

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(want[i])) << what << ": reference not finite at " << i;
    ASSERT_LE(std::fabs(got[i] - want[i]), kTolerance * std::max(1.0, std::fabs(want[i])))
        << what << ": element " << i << " got " << got[i] << " want " << want[i];
  }
}

Activation random_activation(std::mt19937& rng) {
  const auto& kinds = test::all_activation_kinds();
  const ActivationKind k = kinds[rng() % kinds.size()];
  if (k == ActivationKind::leaky_relu) return Activation::make(k, std::uniform_real_distribution<float>(0.0f, 0.5f)(rng));
  if (k == ActivationKind::softplus) return Activation::make(k, std::uniform_real_distribution<float>(0.5f, 4.0f)(rng));
  return Activation::make(k);
}

TEST(CpuBackend, RandomModelsMatchNaiveFloat64) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<std::size_t> layers_dist(1, 8), dim_dist(1, 300);
  std::set<ActivationKind> seen;
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t layers = layers_dist(rng);
    std::vector<std::size_t> widths = {dim_dist(rng)};
    std::vector<Activation> acts;
    for (std::size_t i = 0; i < layers; ++i) {
      widths.push_back(dim_dist(rng));
      Activation act = random_activation(rng);
      while (!acts.empty() && acts.back().kind == ActivationKind::exponential && act.kind == ActivationKind::exponential)
        act = random_activation(rng);  // exp(exp(...)) overflows; one at a time is what models use
      acts.push_back(act);
      seen.insert(acts.back().kind);
    }
    const Model model = test::random_model(rng, widths, acts);
    const Network net(model, "cpu");
    for (std::size_t batch : {1u, 7u, 1000u}) {
      const auto input = test::random_inputs(rng, batch * model.input_dim());
      const auto reference = test::naive_forward(model, input, batch);
      expect_close(net.infer(input), reference, "trial " + std::to_string(trial) + " batch " + std::to_string(batch));
    }
  }
  EXPECT_EQ(seen.size(), test::all_activation_kinds().size()) << "every activation exercised";
}

// float16 buffers: the inputs as float16 holds them, the outputs within float16's rounding (2^-11).
TEST(CpuBackend, Float16BuffersMatchNaiveFloat64) {
  std::mt19937 rng(16);
  const Model model = test::random_model(rng, {5, 40, 3}, {Activation::make(ActivationKind::tanh), Activation::make(ActivationKind::none)});
  const Network net(model, "cpu");
  const std::size_t batch = 300;
  auto values = test::random_inputs(rng, batch * 5);
  std::vector<std::uint16_t> in(values.size()), out(batch * 3, 0x7e00);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = ops::f16_bits_to_float(in[i] = ops::float_to_f16_bits(values[i]));
  net.infer(in.data(), out.data(), batch);
  const auto reference = test::naive_forward(model, values, batch);
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(ops::f16_bits_to_float(out[i]), reference[i], 5e-4 * std::max(1.0, std::fabs(reference[i]))) << "element " << i;
}

TEST(CpuBackend, EachActivationAloneMatchesNaiveFloat64) {
  std::mt19937 rng(5);
  for (const auto kind : test::all_activation_kinds()) {
    const Model model = test::random_model(rng, {4, 33, 5}, {Activation::make(kind), Activation::make(ActivationKind::none)}, 3.0f);
    const auto input = test::random_inputs(rng, 64 * 4, -3.0f, 3.0f);
    expect_close(Network(model, "cpu").infer(input), test::naive_forward(model, input, 64), to_string(kind));
  }
}

TEST(CpuBackend, LargeBatchesSplitAcrossThreadsAndBlocksMatch) {
  std::mt19937 rng(6);
  const Model model = test::random_model(rng, {3, 64, 64, 2},
                                         {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::tanh), Activation::make(ActivationKind::none)});
  const std::size_t batch = 20000 + 13;  // not a multiple of any block size
  const auto input = test::random_inputs(rng, batch * 3);
  expect_close(Network(model, "cpu").infer(input), test::naive_forward(model, input, batch), "large batch");
}

TEST(CpuBackend, ConcurrentInferOnOneNetworkIsCorrect) {
  std::mt19937 rng(7);
  const Model model = test::random_model(rng, {5, 48, 3}, {Activation::make(ActivationKind::silu), Activation::make(ActivationKind::none)});
  const Network net(model, "cpu");
  std::vector<std::vector<float>> inputs, outputs(8);
  for (int t = 0; t < 8; ++t) inputs.push_back(test::random_inputs(rng, 5 * (500 + 37 * static_cast<std::size_t>(t))));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) outputs[static_cast<std::size_t>(t)] = net.infer(inputs[static_cast<std::size_t>(t)]);
    });
  for (auto& th : threads) th.join();
  for (std::size_t t = 0; t < 8; ++t)
    expect_close(outputs[t], test::naive_forward(model, inputs[t], inputs[t].size() / 5), "thread " + std::to_string(t));
}

TEST(CpuBackend, NaNInputsPropagate) {
  std::mt19937 rng(8);
  const Model model = test::random_model(rng, {2, 4, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  const auto out = Network(model, "cpu").infer(std::vector<float>{NAN, 0.5f});
  EXPECT_TRUE(std::isnan(out[0]));
}

}  // namespace
}  // namespace mlpcore
