// Model <-> safetensors file, as specified in models/FORMAT.md.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <regex>

#include "engine/src/file_io.h"
#include "engine/src/json_strict.h"
#include "engine/src/safetensors.h"
#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "ops/half_bits.h"

namespace mlpcore {
namespace {

static_assert(std::endian::native == std::endian::little, "the format is little-endian; add byte swapping for this host");

using nlohmann::json;
constexpr const char* kMetadataKey = "mlpcore";
constexpr int kFormatVersion = 1;

Activation parse_activation(const json& entry, const std::string& source, const std::string& field) {
  const json* name = &entry;
  if (entry.is_object()) {
    if (!entry.contains("name")) throw Error(ErrorCode::activation, source, field, "object needs a \"name\"");
    name = &entry["name"];
  }
  if (!name->is_string()) throw Error(ErrorCode::activation, source, field, "must be a name or an object with a \"name\"");
  const auto kind = parse_activation_kind(name->get<std::string>());
  if (!kind)
    throw Error(ErrorCode::activation, source, field,
                "unknown activation '" + name->get<std::string>() +
                    "' (known: none relu leaky_relu sigmoid tanh softplus exponential sine silu)");
  Activation act = Activation::make(*kind);
  if (!entry.is_object()) return act;

  const char* param_key = *kind == ActivationKind::leaky_relu ? "alpha" : *kind == ActivationKind::softplus ? "beta" : nullptr;
  for (const auto& [key, value] : entry.items()) {
    if (key == "name") continue;
    if (!param_key || key != param_key)
      throw Error(ErrorCode::activation, source, field + "." + key, std::string("is not a parameter of ") + to_string(*kind));
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      throw Error(ErrorCode::activation, source, field + "." + key, "must be a finite number");
    if (const std::string problem = Activation::param_problem(*kind, value.get<double>()); !problem.empty())
      throw Error(ErrorCode::activation, source, field + "." + key, problem);
    act.param = value.get<float>();
  }
  return act;
}

std::vector<Activation> parse_graph(const safetensors::Contents& contents, const std::string& source) {
  const std::string field = std::string("__metadata__.") + kMetadataKey;
  const auto it = contents.metadata.find(kMetadataKey);
  if (it == contents.metadata.end())
    throw Error(ErrorCode::metadata, source, field, "missing: this is not an mlpcore model (see models/FORMAT.md)");
  const auto parsed = parse_json_strict(it->second);
  if (parsed.problem) throw Error(ErrorCode::metadata, source, field, *parsed.problem);
  const json& graph = parsed.value;
  if (!graph.is_object()) throw Error(ErrorCode::metadata, source, field, "must be a JSON object");
  for (const auto& [key, value] : graph.items())
    if (key != "version" && key != "activations") throw Error(ErrorCode::metadata, source, field + "." + key, "unknown key");
  if (!graph.contains("version")) throw Error(ErrorCode::metadata, source, field + ".version", "missing");
  if (!graph["version"].is_number_integer() || graph["version"].get<std::int64_t>() != kFormatVersion)
    throw Error(ErrorCode::metadata, source, field + ".version",
                "is " + describe_json(graph["version"]) + "; this build reads version " + std::to_string(kFormatVersion));
  if (!graph.contains("activations")) throw Error(ErrorCode::metadata, source, field + ".activations", "missing");
  const json& acts = graph["activations"];
  if (!acts.is_array() || acts.empty() || acts.size() > kMaxLayers)
    throw Error(ErrorCode::metadata, source, field + ".activations",
                "must be an array of 1.." + std::to_string(kMaxLayers) + " activations, one per layer");
  std::vector<Activation> out;
  for (std::size_t i = 0; i < acts.size(); ++i)
    out.push_back(parse_activation(acts[i], source, field + ".activations[" + std::to_string(i) + "]"));
  return out;
}

std::vector<float> decode(const safetensors::TensorView& t, DType dtype) {
  const std::size_t n = t.data.size() / (dtype == DType::f32 ? 4 : 2);
  std::vector<float> out(n);
  const auto* p = reinterpret_cast<const unsigned char*>(t.data.data());
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == DType::f32) {
      std::memcpy(&out[i], p + 4 * i, 4);
      continue;
    }
    const auto bits = static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
    out[i] = dtype == DType::f16 ? ops::f16_bits_to_float(bits) : ops::bf16_bits_to_float(bits);
  }
  return out;
}

std::vector<std::byte> encode(const std::vector<float>& values, DType dtype, const std::string& tensor) {
  std::vector<std::byte> out(values.size() * (dtype == DType::f32 ? 4 : 2));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32) {
      std::memcpy(out.data() + 4 * i, &values[i], 4);
      continue;
    }
    const std::uint16_t bits = dtype == DType::f16 ? ops::float_to_f16_bits(values[i]) : ops::float_to_bf16_bits(values[i]);
    if ((bits & 0x7fffu) >= (dtype == DType::f16 ? 0x7c00u : 0x7f80u))
      throw Error(ErrorCode::non_finite, "model to save", "tensor '" + tensor + "'",
                  "element " + std::to_string(i) + " = " + std::to_string(values[i]) + " does not fit " + to_string(dtype));
    out[2 * i] = static_cast<std::byte>(bits & 0xffu);
    out[2 * i + 1] = static_cast<std::byte>(bits >> 8);
  }
  return out;
}

std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void check_dims(const safetensors::TensorView& t, std::size_t rank, const std::string& source) {
  const std::string field = "tensor '" + t.name + "'";
  if (t.shape.size() != rank)
    throw Error(ErrorCode::shape, source, field, "shape " + shape_string(t.shape) + " must have rank " + std::to_string(rank) +
                                                     (rank == 2 ? " [out, in]" : " [out]"));
  for (const auto d : t.shape)
    if (d < 1 || d > kMaxDim)
      throw Error(ErrorCode::shape, source, field, "shape " + shape_string(t.shape) + " has a dimension outside 1.." + std::to_string(kMaxDim));
}

}  // namespace

Model parse_model(std::span<const std::byte> bytes, const std::string& source) {
  const auto contents = safetensors::parse(bytes, source);
  const auto activations = parse_graph(contents, source);
  const std::size_t layer_count = activations.size();

  std::vector<const safetensors::TensorView*> weights(layer_count, nullptr), biases(layer_count, nullptr);
  static const std::regex name_pattern(R"(layers\.(0|[1-9][0-9]{0,5})\.(weight|bias))");
  for (const auto& t : contents.tensors) {
    std::smatch m;
    if (!std::regex_match(t.name, m, name_pattern))
      throw Error(ErrorCode::unexpected_tensor, source, "tensor '" + t.name + "'", "is not part of the format (expected layers.<i>.weight or layers.<i>.bias)");
    const std::size_t index = std::stoul(m[1].str());
    if (index >= layer_count)
      throw Error(ErrorCode::unexpected_tensor, source, "tensor '" + t.name + "'",
                  "belongs to layer " + std::to_string(index) + " but the metadata lists " + std::to_string(layer_count) + " activations");
    if (!parse_dtype(t.dtype))
      throw Error(ErrorCode::dtype, source, "tensor '" + t.name + "'", "dtype " + t.dtype + " is not supported (use F32, F16 or BF16)");
    (m[2] == "weight" ? weights : biases)[index] = &t;
  }

  Model model;
  model.extra_metadata = contents.metadata;
  model.extra_metadata.erase(kMetadataKey);
  for (std::size_t i = 0; i < layer_count; ++i) {
    const std::string prefix = "layers." + std::to_string(i);
    if (!weights[i]) throw Error(ErrorCode::missing_tensor, source, "tensor '" + prefix + ".weight'", "missing");
    const auto& w = *weights[i];
    check_dims(w, 2, source);
    Layer layer;
    layer.out = w.shape[0];
    layer.in = w.shape[1];
    if (i > 0 && layer.in != model.layers.back().out)
      throw Error(ErrorCode::layer_chain, source, "tensor '" + w.name + "'",
                  "shape " + shape_string(w.shape) + " takes " + std::to_string(layer.in) + " inputs but layer " +
                      std::to_string(i - 1) + " produces " + std::to_string(model.layers.back().out));
    layer.weight_dtype = *parse_dtype(w.dtype);
    layer.weight = decode(w, layer.weight_dtype);
    layer.bias.assign(layer.out, 0.0f);
    if (const auto* b = biases[i]) {
      check_dims(*b, 1, source);
      if (b->shape[0] != layer.out)
        throw Error(ErrorCode::shape, source, "tensor '" + b->name + "'",
                    "shape " + shape_string(b->shape) + " does not match the weight's " + std::to_string(layer.out) + " outputs");
      layer.bias_dtype = *parse_dtype(b->dtype);
      layer.bias = decode(*b, *layer.bias_dtype);
    }
    layer.activation = activations[i];
    model.layers.push_back(std::move(layer));
  }
  model.validate(source);
  return model;
}

Model load_model(const std::filesystem::path& path) {
  const auto bytes = read_file(path, kMaxModelFileBytes);
  return parse_model(bytes, path.string());
}

std::vector<std::byte> serialize_model(const Model& model) {
  model.validate("model to save");
  json activations = json::array();
  for (const auto& l : model.layers) {
    const auto& a = l.activation;
    if (a.has_param() && a.param != a.default_param())
      activations.push_back({{"name", to_string(a.kind)}, {a.kind == ActivationKind::leaky_relu ? "alpha" : "beta", a.param}});
    else
      activations.push_back(to_string(a.kind));
  }
  auto metadata = model.extra_metadata;
  metadata[kMetadataKey] = json{{"version", kFormatVersion}, {"activations", activations}}.dump();

  std::vector<safetensors::TensorData> tensors;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& l = model.layers[i];
    const std::string prefix = "layers." + std::to_string(i);
    tensors.push_back({prefix + ".weight", to_string(l.weight_dtype), {l.out, l.in}, encode(l.weight, l.weight_dtype, prefix + ".weight")});
    // A bias the file did not have is written anyway once someone made it non-zero: nothing is dropped.
    const bool nonzero_bias = std::any_of(l.bias.begin(), l.bias.end(), [](float b) { return b != 0.0f; });
    if (l.bias_dtype || nonzero_bias) {
      const DType dtype = l.bias_dtype.value_or(DType::f32);
      tensors.push_back({prefix + ".bias", to_string(dtype), {l.out}, encode(l.bias, dtype, prefix + ".bias")});
    }
  }
  return safetensors::serialize(tensors, metadata);
}

void save_model(const Model& model, const std::filesystem::path& path) {
  const auto bytes = serialize_model(model);
  write_file_atomically(path, bytes);
}

}  // namespace mlpcore
