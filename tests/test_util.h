#pragma once
// Helpers shared by the tests: temporary directories, random models, and an independent float64 forward.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "mlpcore/model.h"
#include "mlpcore/network.h"
#include "ops/half_bits.h"

namespace mlpcore::test {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mlpcore-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Where value `i` of a [batch, dim] array is in `layout`.
inline std::size_t position(std::size_t i, std::size_t dim, std::size_t batch, Layout layout) {
  return layout == Layout::feature_major ? (i % dim) * batch + i / dim : i;
}

inline const std::vector<ActivationKind>& all_activation_kinds() {
  static const std::vector<ActivationKind> kinds = {
      ActivationKind::none,    ActivationKind::relu,        ActivationKind::leaky_relu,
      ActivationKind::sigmoid, ActivationKind::tanh,        ActivationKind::softplus,
      ActivationKind::exponential, ActivationKind::sine, ActivationKind::silu};
  return kinds;
}

// Weights uniform in ±scale/sqrt(in) keep activations O(1) through deep chains.
inline Model random_model(std::mt19937& rng, const std::vector<std::size_t>& widths, const std::vector<Activation>& acts,
                          float scale = 1.0f) {
  Model m;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    Layer l;
    l.in = widths[i];
    l.out = widths[i + 1];
    const float bound = scale / std::sqrt(static_cast<float>(l.in));
    std::uniform_real_distribution<float> w(-bound, bound), b(-0.5f, 0.5f);
    for (std::size_t k = 0; k < l.in * l.out; ++k) l.weight.push_back(w(rng));
    for (std::size_t k = 0; k < l.out; ++k) l.bias.push_back(b(rng));
    l.bias_dtype = DType::f32;
    l.activation = acts[i];
    m.layers.push_back(std::move(l));
  }
  return m;
}

inline std::vector<float> random_inputs(std::mt19937& rng, std::size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Written from the formulas in models/FORMAT.md, sharing no code with the library.
inline double naive_activation(const Activation& a, double x) {
  const double p = a.param;
  switch (a.kind) {
    case ActivationKind::none: return x;
    case ActivationKind::relu: return std::max(x, 0.0);
    case ActivationKind::leaky_relu: return x > 0 ? x : p * x;
    case ActivationKind::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ActivationKind::tanh: return std::tanh(x);
    case ActivationKind::softplus: return std::log(1.0 + std::exp(p * x)) / p;
    case ActivationKind::exponential: return std::exp(x);
    case ActivationKind::sine: return std::sin(x);
    case ActivationKind::silu: return x / (1.0 + std::exp(-x));
  }
  return NAN;
}

inline std::vector<double> naive_forward(const Model& m, const std::vector<float>& input, std::size_t batch) {
  std::vector<double> out;
  for (std::size_t s = 0; s < batch; ++s) {
    std::vector<double> x(input.begin() + static_cast<long>(s * m.input_dim()), input.begin() + static_cast<long>((s + 1) * m.input_dim()));
    for (const auto& l : m.layers) {
      std::vector<double> y(l.out);
      for (std::size_t o = 0; o < l.out; ++o) {
        double acc = l.bias[o];
        for (std::size_t i = 0; i < l.in; ++i) acc += static_cast<double>(l.weight[o * l.in + i]) * x[i];
        y[o] = naive_activation(l.activation, acc);
      }
      x = std::move(y);
    }
    out.insert(out.end(), x.begin(), x.end());
  }
  return out;
}

// A value in an I/O buffer of float32 or float16 (bit patterns), and back.
template <class T>
T to_io(float v) {
  if constexpr (std::is_same_v<T, std::uint16_t>)
    return ops::float_to_f16_bits(v);
  else
    return v;
}
template <class T>
float from_io(T v) {
  if constexpr (std::is_same_v<T, std::uint16_t>)
    return ops::f16_bits_to_float(v);
  else
    return v;
}

}  // namespace mlpcore::test
