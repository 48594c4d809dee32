#pragma once
// The in-memory model: a chain of dense layers y = act(W x + b). See models/FORMAT.md for the file format.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlpcore/activation_kind.h"

namespace mlpcore {

// Storage type of a tensor in the file. In memory every weight is float32; saving converts back.
enum class DType { f32, f16, bf16 };
const char* to_string(DType dtype) noexcept;  // the safetensors name: "F32", "F16", "BF16"
std::optional<DType> parse_dtype(std::string_view safetensors_name) noexcept;

const char* to_string(ActivationKind kind) noexcept;
std::optional<ActivationKind> parse_activation_kind(std::string_view name) noexcept;

// An activation and its parameter. `param` is leaky_relu's alpha or softplus's beta and unused otherwise;
// make() fills in the documented default (alpha 0.01, beta 1).
struct Activation {
  ActivationKind kind = ActivationKind::none;
  float param = 0.0f;

  static Activation make(ActivationKind kind);
  static Activation make(ActivationKind kind, float param);
  bool has_param() const noexcept { return kind == ActivationKind::leaky_relu || kind == ActivationKind::softplus; }
  float default_param() const noexcept;
  // The parameter's documented range (models/FORMAT.md): softplus beta in [1e-3, 1e4] (beyond it (1/beta)
  // overflows float32 or float16 operands), leaky_relu alpha in [-1e3, 1e3]. "" when in range, else why not.
  std::string param_problem() const { return param_problem(kind, param); }
  static std::string param_problem(ActivationKind kind, double param);
  bool operator==(const Activation&) const = default;
};

// Evaluates an activation exactly as every backend defines it (models/FORMAT.md).
float apply(const Activation& act, float x) noexcept;
double apply(const Activation& act, double x) noexcept;

struct Layer {
  std::size_t in = 0;
  std::size_t out = 0;
  std::vector<float> weight;            // [out, in], row-major
  std::vector<float> bias;              // [out]; zeros when the file has no bias tensor
  Activation activation;
  DType weight_dtype = DType::f32;      // how the file stores the weight
  std::optional<DType> bias_dtype;      // how the file stores the bias; empty: no bias tensor
};

class Model {
 public:
  std::vector<Layer> layers;
  // Extra safetensors __metadata__ entries (everything but "mlpcore"), kept so a save loses nothing.
  std::map<std::string, std::string> extra_metadata;

  std::size_t input_dim() const;
  std::size_t output_dim() const;
  std::size_t parameter_count() const;
  // Throws Error naming `where` if layers are empty, shapes or the chain disagree, weights are not finite
  // or an activation parameter is invalid.
  void validate(const std::string& where = "model") const;
};

// Loading validates everything; any problem throws mlpcore::Error naming the file, tensor or field.
Model load_model(const std::filesystem::path& path);
Model parse_model(std::span<const std::byte> bytes, const std::string& source_name);

// Saving writes each tensor in its recorded dtype (float16/bfloat16 round to nearest even). The file is
// written to a temporary name and renamed, so a failed save never destroys an existing file.
void save_model(const Model& model, const std::filesystem::path& path);
std::vector<std::byte> serialize_model(const Model& model);

// Limits that keep a malformed file from making the loader allocate without bound.
inline constexpr std::size_t kMaxHeaderBytes = 16u << 20;          // 16 MiB
inline constexpr std::uint64_t kMaxModelFileBytes = 1ull << 30;    // 1 GiB
inline constexpr std::size_t kMaxLayers = 4096;
inline constexpr std::size_t kMaxDim = 1u << 20;
inline constexpr std::size_t kMaxTensors = 2 * kMaxLayers;  // a weight and a bias per layer

}  // namespace mlpcore
