// Model file round trips and the things a save must never lose.
#include <gtest/gtest.h>

#include <fstream>

#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "tests/test_util.h"

namespace mlpcore {
namespace {

using test::TempDir;

Model every_activation_model(std::mt19937& rng) {
  std::vector<Activation> acts;
  std::vector<std::size_t> widths = {5};
  for (auto k : test::all_activation_kinds()) {
    acts.push_back(Activation::make(k));
    widths.push_back(3 + widths.size() * 2);
  }
  acts[2] = Activation::make(ActivationKind::leaky_relu, 0.25f);
  acts[5] = Activation::make(ActivationKind::softplus, 3.5f);
  return test::random_model(rng, widths, acts);
}

void expect_same(const Model& a, const Model& b) {
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const Layer& x = a.layers[i];
    const Layer& y = b.layers[i];
    EXPECT_EQ(x.in, y.in);
    EXPECT_EQ(x.out, y.out);
    EXPECT_EQ(x.weight, y.weight) << "layer " << i;
    EXPECT_EQ(x.bias, y.bias) << "layer " << i;
    EXPECT_EQ(x.activation, y.activation) << "layer " << i;
    EXPECT_EQ(x.weight_dtype, y.weight_dtype);
    EXPECT_EQ(x.bias_dtype, y.bias_dtype);
  }
  EXPECT_EQ(a.extra_metadata, b.extra_metadata);
}

TEST(Format, F32RoundTripIsBitExact) {
  std::mt19937 rng(1);
  Model m = every_activation_model(rng);
  m.extra_metadata["author"] = "test";
  TempDir dir;
  save_model(m, dir / "m.safetensors");
  expect_same(m, load_model(dir / "m.safetensors"));
}

TEST(Format, HalfPrecisionTensorsRoundTripAfterTheFirstRounding) {
  std::mt19937 rng(2);
  Model m = every_activation_model(rng);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    m.layers[i].weight_dtype = i % 2 ? DType::f16 : DType::bf16;
    m.layers[i].bias_dtype = i % 3 ? DType::bf16 : DType::f16;
  }
  const Model once = parse_model(serialize_model(m), "first");
  // Values are rounded to the stored dtype (close to the originals), and from then on reproduced exactly.
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    for (std::size_t k = 0; k < m.layers[i].weight.size(); ++k)
      EXPECT_NEAR(once.layers[i].weight[k], m.layers[i].weight[k], 1e-2 * std::fabs(m.layers[i].weight[k]) + 1e-7);
  expect_same(once, parse_model(serialize_model(once), "second"));
}

TEST(Format, MissingBiasStaysMissingAndReadsAsZero) {
  std::mt19937 rng(3);
  Model m = test::random_model(rng, {4, 8, 2}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  m.layers[0].bias.assign(8, 0.0f);
  m.layers[0].bias_dtype.reset();
  const Model back = parse_model(serialize_model(m), "mem");
  EXPECT_FALSE(back.layers[0].bias_dtype.has_value());
  EXPECT_EQ(back.layers[0].bias, std::vector<float>(8, 0.0f));
  EXPECT_EQ(back.parameter_count(), 4u * 8 + 8 * 2 + 2);
}

TEST(Format, NonZeroBiasWithoutDtypeIsStillSaved) {
  std::mt19937 rng(4);
  Model m = test::random_model(rng, {3, 2}, {Activation::make(ActivationKind::none)});
  m.layers[0].bias_dtype.reset();
  const Model back = parse_model(serialize_model(m), "mem");
  EXPECT_EQ(back.layers[0].bias, m.layers[0].bias);
}

TEST(Format, ParametersAtTheirDefaultAreWrittenAsPlainNames) {
  std::mt19937 rng(5);
  Model m = test::random_model(rng, {2, 3, 1}, {Activation::make(ActivationKind::leaky_relu), Activation::make(ActivationKind::softplus, 2.0f)});
  const auto bytes = serialize_model(m);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_NE(text.find(R"([\"leaky_relu\",{\"beta\":2.0,\"name\":\"softplus\"}])"), std::string::npos) << text.substr(0, 400);
  expect_same(m, parse_model(bytes, "mem"));
}

TEST(Format, HeaderIsPaddedSoDataIsEightByteAligned) {
  std::mt19937 rng(6);
  const auto bytes = serialize_model(test::random_model(rng, {3, 5}, {Activation::make(ActivationKind::tanh)}));
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(bytes[static_cast<std::size_t>(i)]);
  EXPECT_EQ(n % 8, 0u);
}

TEST(Format, FailedSaveKeepsTheExistingFile) {
  std::mt19937 rng(7);
  TempDir dir;
  const auto path = dir / "m.safetensors";
  Model good = test::random_model(rng, {3, 2}, {Activation::make(ActivationKind::none)});
  save_model(good, path);
  Model bad = good;
  bad.layers[0].weight[1] = NAN;
  try {
    save_model(bad, path);
    FAIL() << "saving NaN weights must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::non_finite);
    EXPECT_NE(std::string(e.what()).find("layers.0.weight"), std::string::npos) << e.what();
  }
  expect_same(good, load_model(path));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "no temporary file left behind";
}

TEST(Format, SavingAValueThatOverflowsF16Fails) {
  std::mt19937 rng(8);
  Model m = test::random_model(rng, {3, 2}, {Activation::make(ActivationKind::none)});
  m.layers[0].weight_dtype = DType::f16;
  m.layers[0].weight[0] = 70000.0f;
  EXPECT_THROW(serialize_model(m), Error);
}

TEST(Format, SavingAnInconsistentModelFails) {
  std::mt19937 rng(9);
  Model m = test::random_model(rng, {3, 4, 2}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  m.layers[1].in = 5;
  m.layers[1].weight.resize(10);
  try {
    serialize_model(m);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::layer_chain) << e.what();
  }
}

TEST(Format, BundledSampleModelsLoad) {
  const std::filesystem::path dir = std::filesystem::path(MLPCORE_SOURCE_DIR) / "models";
  const Model heart = load_model(dir / "heart_sdf.safetensors");
  EXPECT_EQ(heart.input_dim(), 2u);
  EXPECT_EQ(heart.output_dim(), 1u);
  const Model all = load_model(dir / "all_activations.safetensors");
  std::set<ActivationKind> kinds;
  std::set<DType> dtypes;
  for (const auto& l : all.layers) {
    kinds.insert(l.activation.kind);
    dtypes.insert(l.weight_dtype);
  }
  EXPECT_EQ(kinds.size(), test::all_activation_kinds().size());
  EXPECT_EQ(dtypes.size(), 3u);
}

}  // namespace
}  // namespace mlpcore
