// libFuzzer target: the model loader. Any input either fails with mlpcore::Error or loads; a model that
// loads must save, load back to the same model bit for bit (dtypes are kept), save to the same bytes, and
// run through the float64 reference. Anything else (another exception, a sanitizer report) is a crash.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "mlpcore/reference.h"

namespace {

using mlpcore::Layer;
using mlpcore::Model;

[[noreturn]] void mismatch(const char* what, std::size_t layer) {
  std::fprintf(stderr, "fuzz_model: round trip changed %s of layer %zu\n", what, layer);
  std::abort();
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void check_same(const Model& a, const Model& b) {
  if (a.layers.size() != b.layers.size()) mismatch("the number", 0);
  if (a.extra_metadata != b.extra_metadata) mismatch("the extra metadata", 0);
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const Layer& x = a.layers[i];
    const Layer& y = b.layers[i];
    if (x.in != y.in || x.out != y.out) mismatch("the shape", i);
    if (x.activation.kind != y.activation.kind) mismatch("the activation", i);
    if (std::memcmp(&x.activation.param, &y.activation.param, sizeof(float)) != 0) mismatch("the activation parameter", i);
    if (x.weight_dtype != y.weight_dtype) mismatch("the weight dtype", i);
    if (x.bias_dtype != y.bias_dtype) mismatch("the bias dtype", i);
    if (!same_bits(x.weight, y.weight)) mismatch("the weights", i);
    if (!same_bits(x.bias, y.bias)) mismatch("the biases", i);
  }
}

// Bounds the reference's work (batch × parameters) so that no single input can take long.
constexpr std::size_t kMaxReferenceParameters = std::size_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  Model model;
  try {
    model = mlpcore::parse_model(bytes, "fuzz");
  } catch (const mlpcore::Error& e) {
    if (std::getenv("MLPCORE_FUZZ_VERBOSE")) std::fprintf(stderr, "%s\n", e.what());
    return 0;  // rejected cleanly; any other exception escapes and is reported as a crash
  }
  if (std::getenv("MLPCORE_FUZZ_VERBOSE")) std::fprintf(stderr, "fuzz: loaded %zu layers\n", model.layers.size());

  // A model that loaded must save (no mlpcore::Error either) and load back unchanged.
  const std::vector<std::byte> saved = mlpcore::serialize_model(model);
  const Model again = mlpcore::parse_model(saved, "fuzz round trip");
  check_same(model, again);
  if (mlpcore::serialize_model(again) != saved) {
    std::fprintf(stderr, "fuzz_model: saving the reloaded model gave different bytes\n");
    std::abort();
  }

  std::size_t parameters = 0;
  for (const Layer& l : model.layers) parameters += l.weight.size() + l.bias.size();
  if (parameters > kMaxReferenceParameters || model.input_dim() > kMaxReferenceParameters) return 0;
  constexpr std::size_t batch = 2;
  std::vector<float> input(batch * model.input_dim());
  for (std::size_t i = 0; i < input.size(); ++i)
    input[i] = i < model.input_dim() ? 0.25f * static_cast<float>(i % 9) - 1.0f : (i % 2 ? -0.5f : 0.75f);
  const std::vector<double> out = mlpcore::reference_forward(model, input, batch);
  if (out.size() != batch * model.output_dim()) {
    std::fprintf(stderr, "fuzz_model: reference_forward returned %zu values, expected %zu\n", out.size(),
                 batch * model.output_dim());
    std::abort();
  }
  return 0;
}
