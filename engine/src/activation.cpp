#include <cstdio>
#include <tuple>
#include <array>
#include <utility>

#include "mlpcore/model.h"
#include "ops/activation_math.h"

namespace mlpcore {
namespace {

constexpr std::array<std::pair<ActivationKind, const char*>, 9> kNames = {{
    {ActivationKind::none, "none"},
    {ActivationKind::relu, "relu"},
    {ActivationKind::leaky_relu, "leaky_relu"},
    {ActivationKind::sigmoid, "sigmoid"},
    {ActivationKind::tanh, "tanh"},
    {ActivationKind::softplus, "softplus"},
    {ActivationKind::exponential, "exponential"},
    {ActivationKind::sine, "sine"},
    {ActivationKind::silu, "silu"},
}};

}  // namespace

const char* to_string(ActivationKind kind) noexcept {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "unknown";
}

std::optional<ActivationKind> parse_activation_kind(std::string_view name) noexcept {
  for (const auto& [k, n] : kNames)
    if (name == n) return k;
  return std::nullopt;
}

float Activation::default_param() const noexcept {
  switch (kind) {
    case ActivationKind::leaky_relu: return 0.01f;  // PyTorch's nn.LeakyReLU default
    case ActivationKind::softplus: return 1.0f;     // PyTorch's nn.Softplus default
    default: return 0.0f;
  }
}

std::string Activation::param_problem(ActivationKind kind, double param) {
  const auto [low, high, name] = kind == ActivationKind::softplus ? std::tuple{1e-3, 1e4, "softplus beta"}
                                                                  : std::tuple{-1e3, 1e3, "leaky_relu alpha"};
  if (!make(kind).has_param() || (param >= low && param <= high)) return "";  // NaN fails both comparisons
  char text[160];
  std::snprintf(text, sizeof text, "%s %g is outside the supported range [%g, %g]", name, param, low, high);
  return text;
}

Activation Activation::make(ActivationKind kind) {
  Activation a{kind, 0.0f};
  a.param = a.default_param();
  return a;
}

Activation Activation::make(ActivationKind kind, float param) {
  Activation a = make(kind);
  if (a.has_param()) a.param = param;
  return a;
}

float apply(const Activation& act, float x) noexcept { return ops::activate<float>(act.kind, act.param, x); }

double apply(const Activation& act, double x) noexcept {
  return ops::activate<double>(act.kind, static_cast<double>(act.param), x);
}

}  // namespace mlpcore
