#include <cmath>

#include "mlpcore/error.h"
#include "mlpcore/model.h"

namespace mlpcore {

const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
  }
  return "unknown";
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (DType d : {DType::f32, DType::f16, DType::bf16})
    if (name == to_string(d)) return d;
  return std::nullopt;
}

std::size_t Model::input_dim() const { return layers.empty() ? 0 : layers.front().in; }
std::size_t Model::output_dim() const { return layers.empty() ? 0 : layers.back().out; }

std::size_t Model::parameter_count() const {
  std::size_t n = 0;
  for (const auto& l : layers) n += l.weight.size() + (l.bias_dtype ? l.bias.size() : 0);
  return n;
}

namespace {

void check_finite(const std::vector<float>& values, const std::string& where, const std::string& tensor) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw Error(ErrorCode::non_finite, where, "tensor '" + tensor + "'",
                  "element " + std::to_string(i) + " is " + std::to_string(values[i]) + "; weights must be finite");
}

}  // namespace

void Model::validate(const std::string& where) const {
  if (layers.empty()) throw Error(ErrorCode::missing_tensor, where, "layers", "the model has no layers");
  if (layers.size() > kMaxLayers)
    throw Error(ErrorCode::shape, where, "layers", std::to_string(layers.size()) + " layers exceed the limit of " + std::to_string(kMaxLayers));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const std::string name = "layers." + std::to_string(i);
    if (l.in < 1 || l.out < 1 || l.in > kMaxDim || l.out > kMaxDim)
      throw Error(ErrorCode::shape, where, name, "dimensions " + std::to_string(l.out) + "x" + std::to_string(l.in) +
                                                   " are outside 1.." + std::to_string(kMaxDim));
    if (l.weight.size() != l.in * l.out)
      throw Error(ErrorCode::shape, where, name + ".weight", "holds " + std::to_string(l.weight.size()) + " values, expected out*in = " +
                                                               std::to_string(l.in * l.out));
    if (l.bias.size() != l.out)
      throw Error(ErrorCode::shape, where, name + ".bias", "holds " + std::to_string(l.bias.size()) + " values, expected out = " +
                                                             std::to_string(l.out));
    if (i > 0 && l.in != layers[i - 1].out)
      throw Error(ErrorCode::layer_chain, where, name + ".weight",
                  "takes " + std::to_string(l.in) + " inputs but layer " + std::to_string(i - 1) + " produces " +
                      std::to_string(layers[i - 1].out));
    check_finite(l.weight, where, name + ".weight");
    check_finite(l.bias, where, name + ".bias");
    if (const std::string problem = l.activation.param_problem(); !problem.empty())
      throw Error(ErrorCode::activation, where, name + " activation", problem);
  }
}

}  // namespace mlpcore
