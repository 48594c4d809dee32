#pragma once
// The networks whose specialized sources the tests compile for the wave emulator: the shapes of issue 14's
// table (those without a compiled-in kernel), random ones (widths 1-128, mostly not multiples of 16,
// depths 1-7, every activation) and one of clamped row loads, with the plan each tile family makes for them. The generator
// (gen_specialized_sources.cpp) and the test (specialized_emu_test.cpp) share this list.
#include <random>
#include <string>
#include <vector>

#include "engine/src/fused_plan.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/model.h"
#include "tests/test_util.h"

namespace mlpcore::test {

struct SpecializedCase {
  std::string name;
  Model model;
};

// The emulated tile families a source is planned for, with both I/O layouts: f16acc only where the family
// has it (nvidia).
struct SpecializedVariant {
  const char* name;
  detail::PlanRequest request;
};
inline const std::vector<SpecializedVariant>& specialized_variants() {
  constexpr NetworkOptions::Layouts both{true, true};  // the sources build both layouts' kernels
  static const std::vector<SpecializedVariant> v = {{"rdna3", {ops::TileFamily::rdna3, true, false, both}},
                                                     {"rdna4", {ops::TileFamily::rdna4, true, false, both}},
                                                     {"cdna", {ops::TileFamily::cdna, true, false, both}},
                                                     {"nvidia", {ops::TileFamily::nvidia, true, false, both}},
                                                     {"nvidia_f16acc", {ops::TileFamily::nvidia, true, true, both}}};
  return v;
}

inline Activation specialized_case_activation(ActivationKind k) {
  if (k == ActivationKind::leaky_relu) return Activation::make(k, 0.1f);
  if (k == ActivationKind::softplus) return Activation::make(k, 2.0f);
  return Activation::make(k);
}

inline std::vector<SpecializedCase> specialized_cases() {
  std::vector<SpecializedCase> cases;
  std::mt19937 rng(20261125);
  const auto relu = Activation::make(ActivationKind::relu), none = Activation::make(ActivationKind::none);
  const auto add = [&](std::string name, const std::vector<std::size_t>& widths, std::vector<Activation> acts) {
    cases.push_back({std::move(name), random_model(rng, widths, acts)});
  };
  add("64-64x5-4", {64, 64, 64, 64, 64, 64, 4}, {relu, relu, relu, relu, relu, none});
  add("32-32x2-3", {32, 32, 32, 3}, {relu, relu, none});
  add("8-128x6-1", {8, 128, 128, 128, 128, 128, 128, 1}, {relu, relu, relu, relu, relu, relu, none});
  add("16-64x3-16", {16, 64, 64, 64, 16}, {relu, relu, relu, none});
  // Random shapes; the activations cycle through every kind (no two exponentials in a row, which could
  // leave float16's range).
  const auto& kinds = all_activation_kinds();
  std::size_t next_kind = 0;
  std::uniform_int_distribution<std::size_t> depth(1, 7), width(1, 128);
  for (int i = 0; i < 8; ++i) {
    std::vector<std::size_t> widths = {i == 0 ? 1 : width(rng)};
    const std::size_t layers = i == 1 ? 7 : depth(rng);
    for (std::size_t l = 0; l < layers; ++l) widths.push_back(i == 1 && l + 1 < layers ? 128 : width(rng));
    std::vector<Activation> acts;
    for (std::size_t l = 0; l < layers; ++l) {
      ActivationKind k = kinds[next_kind++ % kinds.size()];
      if (k == ActivationKind::exponential && !acts.empty() && acts.back().kind == ActivationKind::exponential) k = ActivationKind::tanh;
      acts.push_back(specialized_case_activation(k));
    }
    std::string name;
    for (std::size_t w : widths) name += (name.empty() ? "" : "-") + std::to_string(w);
    add("random " + name, widths, acts);
  }
  // An input whose sample-major rows no row vector reads, into a full first layer: its kernels load them
  // clamped (ops::RowLoads::clamped). After the random shapes, which stay as they were.
  add("27-96x3-3", {27, 96, 96, 96, 3}, {relu, relu, relu, none});
  return cases;
}

// The specialized source of a plan, or for a network too large to specialize, a note saying so.
inline std::string source_or_note(const detail::FusedPlan& plan) {
  return plan.kind == detail::KernelKind::specialized ? detail::specialized_source(plan) : "// not specialized: " + plan.describe() + "\n";
}

// The file the generator writes case c's source for variant v to.
inline std::string specialized_source_file(std::size_t c, const SpecializedVariant& v) {
  return "case" + std::to_string(c) + "_" + v.name + ".cu";
}

}  // namespace mlpcore::test
